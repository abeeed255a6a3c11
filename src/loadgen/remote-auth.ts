// Who may use a load worker (docs/security.md): both ends hold a shared secret, never on a
// command line (VECBENCH_LOAD_SECRET, or VECBENCH_LOAD_SECRET_FILE naming a file only its owner
// can read), and prove it without sending it: the worker opens each connection with a random
// challenge, the coordinator's hello answers with an HMAC of both ends' nonces, and the
// worker's hello answers with another, so neither end talks to a peer without the secret (the
// coordinator's load-client options, which may hold an engine's password, only go to a worker
// that proved itself). The load client is named, never given as a path or URL: a participant's
// load-client.ts or a built-in client of src/loadgen/clients/, resolved in the worker's own
// installation.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { ROOT } from '../util/code-paths.ts';
import { UserError } from '../util/errors.ts';
import { isSafeName } from '../util/names.ts';
import { registerSecret } from '../util/redact.ts';

const MIN_SECRET = 16;
const HOW = `set VECBENCH_LOAD_SECRET (at least ${MIN_SECRET} characters) or VECBENCH_LOAD_SECRET_FILE (a file only you can read) to the same secret on the coordinator and every load-worker`;

/** The shared secret from the environment; one line naming the fix when there is none. */
export function loadSecret(): string {
  let secret = process.env.VECBENCH_LOAD_SECRET;
  const file = process.env.VECBENCH_LOAD_SECRET_FILE;
  if (!secret && file) {
    let mode: number;
    try {
      mode = statSync(file).mode;
      secret = readFileSync(file, 'utf8').trim();
    } catch (e) {
      throw new UserError(`VECBENCH_LOAD_SECRET_FILE ${file} cannot be read (${(e as Error).message}); ${HOW}`);
    }
    if ((mode & 0o077) !== 0) throw new UserError(`VECBENCH_LOAD_SECRET_FILE ${file} can be read by other users; chmod 600 it`);
  }
  if (!secret || secret.length < MIN_SECRET) throw new UserError(`load workers need a shared secret: ${HOW}`);
  registerSecret(secret);
  return secret;
}

export const newNonce = () => randomBytes(32).toString('hex');

/** The proof of one side (`coordinator` or `worker`) for this connection's two nonces. */
export function proof(secret: string, side: 'coordinator' | 'worker', workerNonce: string, coordinatorNonce: string): string {
  return createHmac('sha256', secret).update(`vecbench-load-worker ${side} ${workerNonce} ${coordinatorNonce}`).digest('hex');
}

export function proofMatches(expected: string, got: unknown): boolean {
  if (typeof got !== 'string' || got.length !== expected.length) return false;
  return timingSafeEqual(Buffer.from(expected), Buffer.from(got));
}

/** A load client's name on the wire: `participant/<name>` or `builtin/<name>`. */
const CLIENT_NAME = /^(participant|builtin)\/(.+)$/;

/** The name the coordinator sends for a load client module of this installation. */
export function clientNameOf(module: string): string {
  const rel = relative(ROOT, module).split(sep);
  if (rel.length === 3 && rel[0] === 'participants' && rel[2] === 'load-client.ts' && isSafeName(rel[1])) return `participant/${rel[1]}`;
  if (rel.length === 4 && rel.slice(0, 3).join('/') === 'src/loadgen/clients' && /^[a-z0-9-]+\.ts$/.test(rel[3])) return `builtin/${rel[3].slice(0, -3)}`;
  throw new UserError(`the load client ${module} is not a participant's load-client.ts or a built-in client, so no client host can run it; use one of those`);
}

/** The module a worker runs for a client name: a file of its own installation, never a path
 * or URL from the wire. */
export function clientModuleFor(name: string): string {
  const m = CLIENT_NAME.exec(name);
  if (!m || !isSafeName(m[2]))
    throw new UserError(`no load client is named ${JSON.stringify(name).slice(0, 120)}; a coordinator names participant/<name> or builtin/<name>`);
  const file = m[1] === 'participant' ? join(ROOT, 'participants', m[2], 'load-client.ts') : join(ROOT, 'src', 'loadgen', 'clients', `${m[2]}.ts`);
  if (!existsSync(file)) throw new UserError(`this load worker has no load client ${name}; install the same vecbench on both hosts`);
  return file;
}
