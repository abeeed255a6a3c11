// Servers the user runs (vecbench run --connect NAME=URL, or VECBENCH_CONNECT_<NAME>): the URLs
// of a run, checked before any work (the form, that something listens, one real login), the
// handle of such a server (vecbench neither starts nor stops it) and what a result records of
// it. Apart from server.ts, which starts and stops the servers vecbench runs itself.
import { connect as tcpConnect } from 'node:net';
import type { ServerConnection, ServerHandle, ServerLifecycle } from '../contracts.ts';
import { UserError } from '../util/errors.ts';
import { parseServerUrl } from './connect-url.ts';
import { connectEnvVar, redact, redactUrl, registerUrlSecrets } from '../util/redact.ts';
import { checkPortFree, type StartedServer } from './server.ts';

/** Where a participant's URL came from, for messages: the option, or the environment. */
function connectSource(participant: string): string {
  return `--connect ${participant}=URL (or ${connectEnvVar(participant)})`;
}

/** The URLs of the run's server participants the user runs: --connect values, else the
 * VECBENCH_CONNECT_<NAME> variables of the participants asked for. Registers their secrets. */
export function connectionsFor(participants: string[], given: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of participants) {
    const url = given[name] ?? process.env[connectEnvVar(name)];
    if (url) {
      registerUrlSecrets(url);
      out[name] = url;
    }
  }
  for (const name of Object.keys(given)) {
    if (!participants.includes(name))
      throw new UserError(
        `--connect names ${name}, which is not among the participants of this run (${participants.join(', ')}); add it to --participants or drop the option`,
      );
  }
  return out;
}

/** Whether something accepts TCP connections at host:port: null, or the reason it does not. */
function tcpReachable(host: string, port: number, timeoutMs = 5000): Promise<string | null> {
  return new Promise((resolve) => {
    const sock = tcpConnect({ host, port });
    const done = (why: string | null) => {
      sock.destroy();
      resolve(why);
    };
    sock.setTimeout(timeoutMs, () => done(`no answer within ${timeoutMs / 1000}s`));
    sock.on('connect', () => done(null));
    sock.on('error', (e: NodeJS.ErrnoException) => done(e.code === 'ECONNREFUSED' ? 'connection refused: nothing listens there' : (e.code ?? e.message)));
  });
}

/**
 * The connection to a server the user runs, checked: the URL's form, that something listens at
 * its host and port, and one real request (logging in). Every failure is a UserError of one line
 * that shows the URL with its password masked.
 */
async function connectRemote(participant: string, life: ServerLifecycle<unknown> | undefined, url: string): Promise<ServerConnection> {
  registerUrlSecrets(url);
  const shown = redactUrl(url);
  const from = connectSource(participant);
  if (!life) throw new UserError(`participant ${participant} runs inside vecbench, not as a server, so it cannot be given by URL; drop ${from}`);
  const remote = life.remote;
  if (!remote)
    throw new UserError(
      `participant ${participant} cannot use a server given by URL (its adapter has no remote connection); drop ${from} and vecbench starts its own server`,
    );
  const u = parseServerUrl(url, remote.schemes, participant, from);
  let connection: ServerConnection;
  try {
    connection = remote.connection(u);
  } catch (e) {
    throw new UserError(`${from}: "${shown}": ${redact((e as Error).message)}`);
  }
  if (!u.port) connection = { ...connection, port: remote.defaultPort };
  const where = `${connection.host}:${connection.port}`;
  const unreachable = await tcpReachable(connection.host, connection.port);
  if (unreachable)
    throw new UserError(
      `cannot reach the ${participant} server at ${where} given by ${shown} (${unreachable}); start the server there or correct the URL given with ${from}`,
    );
  try {
    await remote.check(connection);
  } catch (e) {
    const why = redact(String((e as Error).message ?? e).split('\n')[0]);
    throw new UserError(
      `the ${participant} server at ${where} given by ${shown} refused the connection: ${why}; check the user, password and database in the URL given with ${from}`,
    );
  }
  return connection;
}

/** A ServerHandle for a server the user runs: vecbench neither started it nor stops it. */
function remoteHandle(connection: ServerConnection, check: (c: ServerConnection) => Promise<void>): ServerHandle {
  return {
    pid: Number.NaN,
    connection,
    alive: true,
    exitReason: null,
    healthy: () =>
      check(connection).then(
        () => true,
        () => false,
      ),
    stop: async () => {},
    // It is not ours to watch: a lost server shows as failing requests.
    waitExit: () => new Promise<void>(() => {}),
  };
}

/** The runner's side of --connect: the checked connection as a started server. */
export async function attachServer(participant: string, life: ServerLifecycle<unknown>, url: string): Promise<StartedServer> {
  const t0 = performance.now();
  const connection = await connectRemote(participant, life, url);
  return { handle: remoteHandle(connection, life.remote!.check), acceptS: (performance.now() - t0) / 1000 };
}

/** Why the figures of a server the user runs are not measured from here. */
export const REMOTE_UNMEASURED =
  'the engine is a server the user runs (--connect): vecbench did not start it and does not measure its memory, disk or cold start';

/** What a result records about a server the user runs (its password masked). */
export function remoteRecord(url: string): { url: string; started_by: 'user'; note: string } {
  return {
    url: redactUrl(url),
    started_by: 'user',
    note: "the server was given by URL and runs where the URL points: the hardware above is the client's; the participant's server settings (e.g. shared_buffers) are the server's own, not applied",
  };
}

/** Before a run: every --connect URL reaches a server that logs the user in, and every
 * --server-port is free (each failure one UserError line, before any work is done). */
export async function preflightServers(
  participants: { name: string; life: ServerLifecycle<unknown> | undefined }[],
  connect: Record<string, string>,
  ports: Record<string, number>,
): Promise<void> {
  for (const name of Object.keys(ports)) {
    const p = participants.find((x) => x.name === name);
    if (!p) throw new UserError(`--server-port names ${name}, which is not among the participants of this run; add it to --participants or drop the option`);
    if (!p.life) throw new UserError(`participant ${name} runs inside vecbench, not as a server; drop --server-port ${name}=${ports[name]}`);
    if (connect[name])
      throw new UserError(
        `participant ${name} is given both --server-port and a server URL (${connectSource(name)}); a server you run needs no port from vecbench: drop one of them`,
      );
    await checkPortFree(ports[name], name);
  }
  for (const p of participants) if (connect[p.name]) await connectRemote(p.name, p.life, connect[p.name]);
}

/** The resource figures a server the user runs leaves unmeasured, each with the reason. */
export function markRemoteUnmeasured(res: { unmeasured: Record<string, string> }): void {
  const fields = [
    'disk_bytes',
    'mem_baseline_anon_bytes',
    'mem_baseline_file_bytes',
    'mem_build_peak_bytes',
    'mem_build_peak_anon_bytes',
    'mem_build_peak_file_bytes',
    'mem_serving_anon_bytes',
    'mem_serving_file_bytes',
    'mem_serving_shmem_bytes',
    'mem_serving_peak_bytes',
    'cold_accept_s',
    'cold_first_query_s',
  ];
  for (const f of fields) res.unmeasured[f] = REMOTE_UNMEASURED;
}
