// Milvus: the real Milvus 2.3.5 standalone server (PyPI `milvus`, "Embedded Milvus": the server's
// own binaries in a wheel, with embedded etcd and RocksMQ), started by the runner, driven with
// pymilvus from a Python host over the participant protocol (host.py; src/adapters/foreign.ts).
//
// The server takes twelve ports (proxy, metrics, the coordinators' and nodes' gRPC, etcd's
// client and peer ports) and Milvus 2.3 binds its gRPC ports on every interface, whatever the
// configuration says. So all of them are closed to every other local user and to every other host
// while it runs (the runner's port guard, as root); the proxy also asks for a password, random per
// server and registered as a secret. server.py starts it and sets that password.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import type { z } from 'zod';
import * as sdk from '../../src/sdk/index.ts';

const PROVISION = 'participants/milvus/provision.sh';
/** The one user of a vecbench server: Milvus's superuser (2.3 cannot rename it). */
const MILVUS_USER = 'root';

const settingsSchema = sdk.settingsObject({
  /** HNSW graph degree. */
  M: sdk.intSetting(2, 2048, 16),
  /** Candidates while building the graph. */
  efConstruction: sdk.intSetting(1, 100_000, 200),
});
type Settings = z.infer<typeof settingsSchema>;

function venv(): string {
  return join(process.env.VECBENCH_CACHE ?? '/var/cache/vecbench', 'venv', 'milvus');
}

/** The interpreter of the provisioned virtual environment. */
function python(): string {
  if (!existsSync(join(venv(), '.vecbench-requirements')))
    throw new sdk.SetupNeeded(`Milvus's Python environment is not installed (${venv()}; ${PROVISION} makes it)`);
  return join(venv(), 'bin', 'python');
}

/** The server's binaries, unpacked from the wheel by provision.sh. */
function binDir(): string {
  const dir = join(venv(), 'milvus-server', 'bin');
  if (!existsSync(join(dir, 'milvus'))) throw new sdk.SetupNeeded(`the Milvus server binary is not unpacked (${dir}/milvus; ${PROVISION} unpacks it)`);
  return dir;
}

/** The ports besides the proxy's (the runner's), in the order server.py names them. */
const OTHER_PORTS = [
  'metrics',
  'proxy_internal',
  'root_coord',
  'query_coord',
  'query_node',
  'index_coord',
  'index_node',
  'data_coord',
  'data_node',
  'etcd',
  'etcd_peer',
] as const;

async function serverPorts(proxy: number): Promise<Record<string, number>> {
  const ports: Record<string, number> = { proxy };
  const taken = new Set([proxy]);
  for (const name of OTHER_PORTS) {
    let port = await sdk.freePort();
    for (let i = 0; taken.has(port) && i < 20; i++) port = await sdk.freePort();
    if (taken.has(port)) throw new Error(`milvus: found no free port for ${name}`);
    taken.add(port);
    ports[name] = port;
  }
  return ports;
}

/** A password of this server's own, beside its data (a restart on the data logs in with it). */
function serverPassword(ctx: sdk.ServerStartContext<Settings>): { file: string; password: string } {
  const file = sdk.serverSideFile(ctx.dataDir, 'password');
  if (ctx.existing && existsSync(file)) return { file, password: readFileSync(file, 'utf8').trim() };
  const password = randomBytes(24).toString('hex');
  rmSync(file, { force: true });
  writeFileSync(file, `${password}\n`, { mode: 0o600, flag: 'wx' });
  return { file, password };
}

async function startMilvus(ctx: sdk.ServerStartContext<Settings>): Promise<sdk.ServerHandle> {
  const { file, password } = serverPassword(ctx);
  sdk.registerSecret(password);
  const ports = await serverPorts(ctx.port);
  const proc = sdk.spawnServer({
    name: 'milvus',
    command: python(),
    args: ['-u', sdk.besideSource(import.meta.url, 'server.py'), ctx.dataDir, JSON.stringify(ports), file, binDir(), ctx.existing ? 'existing' : 'fresh'],
    dataDir: ctx.dataDir,
    logFile: ctx.logFile,
    // server.py passes it on: Milvus shuts down cleanly (sessions removed, data flushed).
    stopSignal: 'SIGTERM',
    stopTimeoutS: 120,
    // Every port, on every interface: Milvus 2.3 binds its gRPC ports on all of them.
    closeToOthers: { ports: Object.values(ports), everyInterface: true },
  });
  if (proc.portGuard && !proc.portGuard.closed)
    ctx.log(
      `milvus listens on ports ${Object.values(ports).join(', ')} of every interface and they could not be closed to other users and hosts (${proc.portGuard.why}): its proxy asks for a password, its internal ports (etcd among them) for none`,
    );
  const connection = { host: '127.0.0.1', port: ctx.port, dataDir: ctx.dataDir, params: { user: MILVUS_USER, password } };
  return sdk.serverHandle(proc, connection, () => loggedIn(ctx.port, password));
}

/** One real request on the proxy port: Milvus's REST API lists the collections, logged in with
 * the server's password (refused until server.py has set it on a fresh server). */
export async function loggedIn(port: number, password: string): Promise<boolean> {
  try {
    const r = await request(`http://127.0.0.1:${port}/v1/vector/collections`, {
      headers: { authorization: `Bearer ${MILVUS_USER}:${password}` },
      headersTimeout: 2000,
      bodyTimeout: 2000,
    });
    const body = await r.body.text();
    return r.statusCode === 200 && (JSON.parse(body) as { code?: number }).code === 200;
  } catch {
    return false;
  }
}

/** Milvus's REST reply to a login that failed, or null when the collections were listed. */
async function loginRefusal(host: string, port: number, params: sdk.ServerConnection['params']): Promise<string | null> {
  const headers: Record<string, string> = params.user === undefined ? {} : { authorization: `Bearer ${String(params.user)}:${String(params.password ?? '')}` };
  const r = await request(`http://${host}:${port}/v1/vector/collections`, { headers, headersTimeout: 10_000, bodyTimeout: 10_000 });
  const body = await r.body.text();
  let reply: { code?: number; message?: string } = {};
  try {
    reply = JSON.parse(body) as typeof reply;
  } catch {
    return `it does not answer Milvus's REST API (GET /v1/vector/collections: ${r.statusCode})`;
  }
  if (r.statusCode === 200 && reply.code === 200) return null;
  return `the login was refused (${reply.code ?? r.statusCode}: ${reply.message ?? 'no message'})`;
}

/** A Milvus 2.3 the user runs (--connect milvus=http://user:password@host:19530, or without user
 * and password when its authorization is off): the Python host connects to it with pymilvus and
 * makes and drops its own collection there. Plain http: the check uses Milvus's REST API on
 * the same port. */
const remote: sdk.RemoteServer = {
  schemes: ['http'],
  defaultPort: 19530,
  connection: (url) => sdk.urlConnection(url, 19530, sdk.urlCredentials(url)),
  async check(c) {
    const refused = await loginRefusal(c.host, c.port, c.params);
    if (refused) throw new Error(refused);
  },
};

export default sdk.foreignParticipant({
  name: 'milvus',
  engine: 'Milvus',
  settingsSchema,
  knobs: { ef: sdk.intKnob(1, 32768) },
  filters: sdk.EVERY_FILTER,
  filterStrategy:
    'boolean expression over INT32 scalar fields: a bitset of the matching rows, then the HNSW walk skips the rest (Knowhere searches the matches exhaustively when the filter keeps few rows)',
  reopen: true,
  server: { provision: 'provision.sh', start: startMilvus, remote },
  host: () => sdk.pythonHost(import.meta.url, python()),
});
