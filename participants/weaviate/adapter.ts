// Weaviate: the real Weaviate v1.39.0 server (weaviate-server, built from source by
// provision.sh), started by the runner as a one-node cluster on free 127.0.0.1 ports, spoken to
// over its REST API with an undici pool: schema (/v1/schema), batch import (/v1/batch/objects),
// batch delete, and searches as GraphQL `Get` with `nearVector` and a `where` filter.
//
// The server takes six ports: REST (the runner's), the public gRPC API, memberlist gossip, the
// internal cluster API, and Raft's two. gossip and Raft follow CLUSTER_BIND_ADDR (127.0.0.1); the
// public gRPC and the internal cluster API bind every interface whatever is configured, so all
// six are closed to other local users and other hosts while it runs (the runner's port guard, as
// root). The public APIs ask for an API key, the internal cluster API for basic auth: both random
// per server and registered as secrets.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Pool, request } from 'undici';
import { z } from 'zod';
import * as sdk from '../../src/sdk/index.ts';

const PROVISION = 'participants/weaviate/provision.sh';
/** Weaviate class names start with a capital letter. */
export const CLASS = 'VbItems';
/** The row id, kept as an int property: searches return it (the object UUID is derived from it). */
const ROW_ID = 'rid';
/** Objects per batch-import request (a 10,000-row ingest batch is sent in these). */
const IMPORT_CHUNK = 1000;
/** Ids per batch delete: Weaviate deletes at most QUERY_MAXIMUM_RESULTS (10,000) per request. */
const DELETE_CHUNK = 5000;
/** The highest ef a knob may set; Weaviate itself names no upper bound. */
const MAX_EF = 100_000;

const settingsSchema = sdk.settingsObject({
  /** HNSW degree above layer 0 (Weaviate's maxConnections; layer 0 keeps 2 x this). */
  maxConnections: sdk.intSetting(4, 2047, 16),
  /** Candidates while building the graph. */
  efConstruction: sdk.intSetting(4, 100_000, 200),
  /** How a filtered search walks the graph: ACORN (Weaviate's default) or the older
   * sweeping walk over an allow-list. */
  filterStrategy: z.enum(['acorn', 'sweeping']).default('acorn'),
  /** A filter matching fewer rows than this is answered by an exact scan of the matches
   * (Weaviate's default, 40,000). */
  flatSearchCutoff: z.number().int().min(0).default(40_000),
});
type Settings = z.infer<typeof settingsSchema>;

// ---- the server ----

const installDir = () => join(process.env.VECBENCH_CACHE ?? '/var/cache/vecbench', 'weaviate');

function binary(): string {
  const bin = join(installDir(), 'bin', 'weaviate-server');
  if (!existsSync(bin)) throw new sdk.SetupNeeded(`the Weaviate server is not built (${bin}; ${PROVISION} builds it)`);
  return bin;
}

/** The version provision.sh built, from its stamp (the binary has no --version). */
function builtVersion(): string {
  try {
    return readFileSync(join(installDir(), '.vecbench-stamp'), 'utf8').split(' ')[1] ?? 'unknown';
  } catch {
    return 'not built';
  }
}

/** The ports besides REST's (the runner's), by the variable that sets each. */
const OTHER_PORTS = ['GRPC_PORT', 'CLUSTER_GOSSIP_BIND_PORT', 'CLUSTER_DATA_BIND_PORT', 'RAFT_PORT', 'RAFT_INTERNAL_RPC_PORT'] as const;

async function otherPorts(rest: number): Promise<Record<(typeof OTHER_PORTS)[number], number>> {
  const taken = new Set([rest]);
  const ports = {} as Record<(typeof OTHER_PORTS)[number], number>;
  for (const name of OTHER_PORTS) {
    let port = await sdk.freePort();
    // Weaviate refuses cluster ports below 1024.
    for (let i = 0; (taken.has(port) || port < 1024) && i < 20; i++) port = await sdk.freePort();
    if (taken.has(port) || port < 1024) throw new Error(`weaviate: found no free port for ${name}`);
    taken.add(port);
    ports[name] = port;
  }
  return ports;
}

async function startWeaviate(ctx: sdk.ServerStartContext<Settings>): Promise<sdk.ServerHandle> {
  const command = binary();
  // Fresh per start: the keys are configuration, nothing of them is kept in the data, so a
  // restart on the data simply gets new ones.
  const apiKey = randomBytes(24).toString('hex');
  const clusterPassword = randomBytes(24).toString('hex');
  sdk.registerSecret(apiKey);
  sdk.registerSecret(clusterPassword);
  const ports = await otherPorts(ctx.port);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PERSISTENCE_DATA_PATH: ctx.dataDir,
    DEFAULT_VECTORIZER_MODULE: 'none',
    ENABLE_MODULES: '',
    // Without this Weaviate loads its API-based modules (hosted embedders): none is wanted.
    API_BASED_MODULES_DISABLED: 'true',
    // The class is created explicitly; an import never changes it.
    AUTOSCHEMA_ENABLED: 'false',
    CLUSTER_HOSTNAME: 'node1',
    CLUSTER_BIND_ADDR: '127.0.0.1',
    CLUSTER_BASIC_AUTH_USERNAME: 'vecbench',
    CLUSTER_BASIC_AUTH_PASSWORD: clusterPassword,
    ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])),
    DISABLE_TELEMETRY: 'true',
    // Otherwise a pprof listener binds :6060 on every interface (and collides between servers).
    GO_PROFILING_DISABLE: 'true',
    AUTHENTICATION_ANONYMOUS_ACCESS_ENABLED: 'false',
    AUTHENTICATION_APIKEY_ENABLED: 'true',
    AUTHENTICATION_APIKEY_ALLOWED_KEYS: apiKey,
    AUTHENTICATION_APIKEY_USERS: 'vecbench',
    LOG_LEVEL: 'warning',
  };
  const allPorts = [ctx.port, ...Object.values(ports)];
  const proc = sdk.spawnServer({
    name: 'weaviate',
    command,
    args: ['--host', '127.0.0.1', '--port', String(ctx.port), '--scheme', 'http'],
    env,
    cwd: ctx.dataDir,
    dataDir: ctx.dataDir,
    logFile: ctx.logFile,
    // Weaviate's clean shutdown: flushes its memtables and closes the HNSW commit logs.
    stopSignal: 'SIGTERM',
    stopTimeoutS: 120,
    // The public gRPC and the internal cluster API listen on every interface.
    closeToOthers: { ports: allPorts, everyInterface: true },
  });
  if (proc.portGuard && !proc.portGuard.closed)
    ctx.log(
      `weaviate listens on ports ${allPorts.join(', ')} (two of them on every interface) and they could not be closed to other users and hosts (${proc.portGuard.why}): its APIs ask for a key, its cluster API for a password, its gossip and Raft ports for none`,
    );
  const connection = { host: '127.0.0.1', port: ctx.port, dataDir: ctx.dataDir, params: { apiKey, grpcPort: ports.GRPC_PORT } };
  return sdk.serverHandle(proc, connection, () => answers(ctx.port, apiKey));
}

/** Ready (`/v1/.well-known/ready`, which asks for no key) and a request with the key answered
 * (the schema): what the health check waits for. */
export async function answers(port: number, apiKey: string): Promise<boolean> {
  try {
    const ready = await request(`http://127.0.0.1:${port}/v1/.well-known/ready`, { headersTimeout: 2000, bodyTimeout: 2000 });
    await ready.body.dump();
    if (ready.statusCode !== 200) return false;
    const schema = await request(`http://127.0.0.1:${port}/v1/schema`, {
      headers: { authorization: `Bearer ${apiKey}` },
      headersTimeout: 2000,
      bodyTimeout: 2000,
    });
    await schema.body.dump();
    return schema.statusCode === 200;
  } catch {
    return false;
  }
}

// ---- requests ----

class Http {
  constructor(
    private readonly pool: Pool,
    /** Null for a server the user runs without authentication. */
    private readonly apiKey: string | null,
  ) {}

  async call<T>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<{ status: number; value: T }> {
    const r = await this.pool.request({
      method,
      path,
      // A string is JSON already written (imports and searches write their vectors as text).
      body: body === undefined || typeof body === 'string' ? body : JSON.stringify(body),
      headers: { 'content-type': 'application/json', ...(this.apiKey === null ? {} : { authorization: `Bearer ${this.apiKey}` }) },
    });
    const text = await r.body.text();
    return { status: r.statusCode, value: (text ? JSON.parse(text) : null) as T };
  }

  /** A call that must succeed (2xx). */
  async ok<T>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<T> {
    const r = await this.call<T>(method, path, body);
    if (r.status >= 300) throw new Error(`Weaviate ${method} ${path}: ${r.status} ${JSON.stringify(r.value).slice(0, 400)}`);
    return r.value;
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

/** The object UUID of a row: its id in the last 12 hex digits, so an import of the same id replaces it. */
export function rowUuid(id: number): string {
  return `00000000-0000-4000-8000-${id.toString(16).padStart(12, '0')}`;
}

/** A float32 in 9 significant digits: the shortest text that reads back as the same float32. */
function num(x: number): string {
  return String(Number(x.toPrecision(9)));
}

function vectorText(v: Float32Array): string {
  let s = '[';
  for (let i = 0; i < v.length; i++) s += (i ? ',' : '') + num(v[i]);
  return `${s}]`;
}

// ---- filters ----

/** FilterExpr -> a Weaviate where filter in GraphQL's input syntax (operators are enum values). */
export function whereFilter(f: sdk.FilterExpr): string {
  return sdk.foldFilter<string>(f, {
    eq: (field, value) => `{path:["${field}"],operator:Equal,valueInt:${value}}`,
    range: (field, gte, lt) =>
      `{operator:And,operands:[{path:["${field}"],operator:GreaterThanEqual,valueInt:${gte}},{path:["${field}"],operator:LessThan,valueInt:${lt}}]}`,
    and: (parts) => {
      if (parts.length === 0) throw new Error('an empty AND filter has no Weaviate form');
      return parts.length === 1 ? parts[0] : `{operator:And,operands:[${parts.join(',')}]}`;
    },
  });
}

/** The GraphQL query of a search: the row ids only, best first. */
export function searchQuery(request: sdk.SearchRequest): string {
  const where = request.filter === null ? '' : `,where:${whereFilter(request.filter)}`;
  return `{Get{${CLASS}(nearVector:{vector:${vectorText(request.vector)}},limit:${request.k}${where}){${ROW_ID}}}}`;
}

/** ef: a fixed candidate list (Weaviate's -1, a dynamic ef from k, is not offered). */
const KNOBS = { ef: sdk.intKnob(1, MAX_EF, "a fixed ef; Weaviate's dynamic ef, -1, is not offered") };

function distance(metric: sdk.Metric): 'dot' | 'l2-squared' {
  // Cosine datasets arrive unit length: the dot product ranks as cosine.
  return metric === 'l2' ? 'l2-squared' : 'dot';
}

/** The class definition a fresh open creates. */
function classDefinition(settings: Settings, metric: sdk.Metric): Record<string, unknown> {
  return {
    class: CLASS,
    vectorizer: 'none',
    vectorIndexType: 'hnsw',
    vectorIndexConfig: {
      maxConnections: settings.maxConnections,
      efConstruction: settings.efConstruction,
      // Set by setKnobs before each point; a fixed value from the start.
      ef: 64,
      distance: distance(metric),
      filterStrategy: settings.filterStrategy,
      flatSearchCutoff: settings.flatSearchCutoff,
      // Full float32 vectors: no quantization, whatever the server's default.
      skipDefaultQuantization: true,
    },
    properties: [
      { name: ROW_ID, dataType: ['int'], indexFilterable: true, indexSearchable: false, indexRangeFilters: false },
      ...sdk.ATTRIBUTES.map((a) => ({ name: a, dataType: ['int'], indexFilterable: true, indexSearchable: false, indexRangeFilters: true })),
    ],
    // One shard, no replication: a one-node server.
    shardingConfig: { desiredCount: 1 },
    replicationConfig: { factor: 1 },
  };
}

let versionCache: string | null = null;

async function readVersion(http: Http): Promise<string> {
  const meta = await http.ok<{ version: string }>('GET', '/v1/meta');
  return `Weaviate ${meta.version}`;
}

interface BatchResult {
  id: string;
  result?: { errors?: { error?: { message: string }[] } };
}

// ---- the session ----

class WeaviateSession implements sdk.EngineSession {
  private ef: number;

  constructor(
    private readonly http: Http,
    /** The class as the server holds it: a schema update sends it whole, with the new ef. */
    private definition: Record<string, unknown>,
    private readonly d: number,
  ) {
    this.ef = (definition.vectorIndexConfig as { ef: number }).ef;
  }

  async ingest(batch: sdk.RowBatch): Promise<void> {
    await this.put(batch);
  }

  /** Batch import: a new UUID adds the row, a present one replaces it (vector and properties). */
  private async put(batch: sdk.RowBatch): Promise<void> {
    const n = batch.ids.length;
    if (batch.vectors.length !== n * this.d) throw new Error(`batch has ${batch.vectors.length} floats for ${n} rows of dimension ${this.d}`);
    for (let from = 0; from < n; from += IMPORT_CHUNK) {
      const to = Math.min(n, from + IMPORT_CHUNK);
      // Written as text: vectors in 9 digits instead of JSON.stringify's 17.
      const objects: string[] = [];
      for (let i = from; i < to; i++) {
        const props = [`"${ROW_ID}":${batch.ids[i]}`, ...sdk.ATTRIBUTES.map((a) => `"${a}":${batch.attrs[a][i]}`)].join(',');
        objects.push(
          `{"class":"${CLASS}","id":"${rowUuid(batch.ids[i])}","properties":{${props}},"vector":${vectorText(batch.vectors.subarray(i * this.d, (i + 1) * this.d))}}`,
        );
      }
      const results = await this.http.ok<BatchResult[]>('POST', '/v1/batch/objects', `{"objects":[${objects.join(',')}]}`);
      const failed = results.filter((r) => r.result?.errors?.error?.length);
      if (failed.length > 0)
        throw new Error(`weaviate: ${failed.length} of ${to - from} objects were not imported: ${failed[0].result!.errors!.error![0].message}`);
      if (results.length !== to - from) throw new Error(`weaviate: the batch import answered ${results.length} results for ${to - from} objects`);
    }
  }

  /** Nothing to do: Weaviate inserts each object into the HNSW graph as it is imported. */
  async buildIndex(): Promise<void> {}

  async setKnobs(knobs: sdk.Knobs): Promise<void> {
    const ef = knobs.ef as number | undefined;
    if (ef === undefined || ef === this.ef) return;
    const definition = { ...this.definition, vectorIndexConfig: { ...(this.definition.vectorIndexConfig as object), ef } };
    await this.http.ok('PUT', `/v1/schema/${CLASS}`, definition);
    // The update reaches the index through Raft; read it back so a search never runs on the old ef.
    const now = await this.http.ok<Record<string, unknown>>('GET', `/v1/schema/${CLASS}`);
    const applied = (now.vectorIndexConfig as { ef: number }).ef;
    if (applied !== ef) throw new Error(`weaviate: ef ${ef} was sent but the class holds ef ${applied}`);
    this.definition = now;
    this.ef = ef;
  }

  async search(request: sdk.SearchRequest): Promise<number[]> {
    if (request.vector.length !== this.d) throw new Error(`query vector has ${request.vector.length} dimensions, the class ${this.d}`);
    const r = await this.http.ok<{ data?: { Get?: Record<string, { rid: number }[] | null> }; errors?: { message: string }[] }>(
      'POST',
      '/v1/graphql',
      JSON.stringify({ query: searchQuery(request) }),
    );
    if (r.errors?.length) throw new Error(`weaviate: search failed: ${r.errors[0].message}`);
    // v1.39.0's ACORN walk sometimes puts its entry point in the results twice (upstream
    // weaviate/weaviate#13121, fixed after 1.39.0): the second copy is dropped, so such an answer
    // holds k - 1 rows.
    const ids: number[] = [];
    const seen = new Set<number>();
    for (const o of r.data?.Get?.[CLASS] ?? []) {
      if (seen.has(o[ROW_ID])) continue;
      seen.add(o[ROW_ID]);
      ids.push(o[ROW_ID]);
    }
    return ids;
  }

  strategy(request: sdk.SearchRequest): sdk.Strategy {
    return sdk.declaredStrategy(request, 'graph walk', 'pre-filter + graph walk, exact scan if few match');
  }

  async insert(batch: sdk.RowBatch): Promise<void> {
    await this.put(batch);
  }

  async upsert(batch: sdk.RowBatch): Promise<void> {
    await this.put(batch);
  }

  async delete(ids: Int32Array): Promise<void> {
    for (let from = 0; from < ids.length; from += DELETE_CHUNK) {
      const chunk = Array.from(ids.subarray(from, from + DELETE_CHUNK));
      const r = await this.http.ok<{ results?: { failed?: number; matches?: number } }>('DELETE', '/v1/batch/objects', {
        match: { class: CLASS, where: { path: [ROW_ID], operator: 'ContainsAny', valueIntArray: chunk } },
        output: 'minimal',
      });
      if (r.results?.failed) throw new Error(`weaviate: ${r.results.failed} of ${r.results.matches} objects could not be deleted`);
    }
  }

  async close(): Promise<void> {
    await this.http.close();
  }
}

function httpFor<S>(ctx: sdk.OpenContext<S>): Http {
  const server = ctx.server;
  if (!server) throw new Error('weaviate: no server connection in the open context (the runner starts the server)');
  const pool = new Pool(`http://${server.host}:${server.port}`, { connections: Math.max(1, ctx.maxConcurrency), pipelining: 1, keepAliveTimeout: 60_000 });
  return new Http(pool, server.params.apiKey === undefined ? null : String(server.params.apiKey));
}

/** A Weaviate the user runs (--connect weaviate=http://:APIKEY@host:8080, the API key as the
 * URL's password; none when it allows anonymous access): vecbench makes and drops its own class
 * there, VbItems. Plain http (REST); a server serving only https is refused by the check. */
const remote: sdk.RemoteServer = {
  schemes: ['http'],
  defaultPort: 8080,
  connection(url) {
    const apiKey = decodeURIComponent(url.password);
    const params: sdk.ServerConnection['params'] = apiKey ? { apiKey } : {};
    return sdk.urlConnection(url, 8080, params);
  },
  async check(c) {
    const pool = new Pool(`http://${c.host}:${c.port}`, { connections: 1 });
    const http = new Http(pool, c.params.apiKey === undefined ? null : String(c.params.apiKey));
    try {
      const meta = await http.call<{ version?: string; message?: string; error?: { message: string }[] }>('GET', '/v1/schema');
      if (meta.status === 401 || meta.status === 403)
        throw new Error(`it refused the API key (${meta.status}); give the key as the URL's password, http://:KEY@host:port`);
      if (meta.status !== 200) throw new Error(`GET /v1/schema answered ${meta.status}`);
    } finally {
      await http.close();
    }
  },
};

const participant: sdk.Participant<Settings> = {
  engine: 'Weaviate',
  async engineVersion() {
    return versionCache ?? `Weaviate ${builtVersion()} (provision.sh's build; no server running to ask)`;
  },
  settingsSchema,
  knobs: KNOBS,
  filters: sdk.EVERY_FILTER,
  filterStrategy:
    'pre-filter: the where filter becomes an allow-list from the inverted (roaring bitmap) indexes; fewer matches than flatSearchCutoff (40,000) are scanned exactly, more than 40 % of the rows go through the sweeping HNSW walk, the rest through the ACORN walk (filterStrategy acorn)',
  concurrentSearch: true,
  server: { provision: 'provision.sh', start: startWeaviate, remote },
  async open(ctx) {
    const http = httpFor(ctx);
    const gone = await http.call('DELETE', `/v1/schema/${CLASS}`);
    if (gone.status >= 300 && gone.status !== 404) throw new Error(`weaviate: could not drop class ${CLASS}: ${gone.status} ${JSON.stringify(gone.value)}`);
    await http.ok('POST', '/v1/schema', classDefinition(ctx.settings, ctx.dataset.metric));
    const definition = await http.ok<Record<string, unknown>>('GET', `/v1/schema/${CLASS}`);
    versionCache = await readVersion(http);
    return new WeaviateSession(http, definition, ctx.dataset.d);
  },
  async reopen(ctx) {
    const http = httpFor(ctx);
    const r = await http.call<Record<string, unknown>>('GET', `/v1/schema/${CLASS}`);
    if (r.status !== 200 || r.value === null) throw new Error(`weaviate: the restarted server has no class ${CLASS} (${r.status})`);
    versionCache = await readVersion(http);
    return new WeaviateSession(http, r.value, ctx.dataset.d);
  },
};

export default participant;
