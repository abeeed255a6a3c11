// Chroma: a real local Chroma server (`chroma run` from the chromadb npm package, its Rust
// server in chromadb-js-bindings) started by the runner on a free 127.0.0.1 port with a data
// directory of the run, spoken to over its REST API (v2) with an undici pool.
//
// Chroma fixes an HNSW collection's ef_search at creation: changing it later (PUT with a new
// configuration) is stored but the loaded index keeps the old value (measured: README). So the
// ladder's ef values are built as collections, one per value in index.ef_search, each holding
// every row; ingest adds each batch to all of them, and setKnobs picks the collection. The
// ingest time, disk and memory therefore cover that many indexes (README).
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Pool, request } from 'undici';
import { z } from 'zod';
import { ATTRIBUTES, type EngineSession, type FilterExpr, type Knobs, type Metric, type OpenContext, type Participant, type RowBatch, type SearchRequest, type ServerHandle, type ServerStartContext } from '../../src/contracts.ts';
import { serverHandle, spawnServer } from '../../src/runner/server.ts';
import { UserError } from '../../src/util/errors.ts';

const PROVISION = 'participants/chroma/provision.sh';
const API = '/api/v2/tenants/default_tenant/databases/default_database';
/** Chroma refuses larger add batches (its max_batch_size is 5461 here). */
const ADD_BATCH = 5000;

const settingsSchema = z
  .object({
    /** HNSW max_neighbors (hnswlib's M). */
    max_neighbors: z.number().int().min(2).max(256).default(16),
    /** HNSW ef_construction. */
    ef_construction: z.number().int().min(1).max(10_000).default(100),
    /** One collection per value, each with every row: the ef ladder (fixed at creation). The
     * ladders may only use these values. */
    ef_search: z.array(z.number().int().min(1)).min(1).default([10, 20, 40, 100, 200, 400]),
    /** Threads hnswlib uses to add a batch (Chroma's num_threads; default: all cores). */
    num_threads: z.number().int().min(1).optional(),
  })
  .strict()
  .refine((s) => s.ef_search.every((v, i) => i === 0 || v > s.ef_search[i - 1]), { path: ['ef_search'], message: 'ef_search values must be distinct and ascending' });
type Settings = z.infer<typeof settingsSchema>;

// ---- filters ----

const ATTR_SET: ReadonlySet<string> = new Set(ATTRIBUTES);

/** FilterExpr -> a Chroma `where` document over the rows' integer metadata. */
export function filterToWhere(f: FilterExpr): Record<string, unknown> {
  const field = (name: string) => {
    if (!ATTR_SET.has(name)) throw new Error(`unknown filter field "${name}"; known fields: ${ATTRIBUTES.join(', ')}`);
    return name;
  };
  switch (f.op) {
    case 'eq':
      return { [field(f.field)]: { $eq: f.value } };
    case 'range':
      return { $and: [{ [field(f.field)]: { $gte: f.gte } }, { [field(f.field)]: { $lt: f.lt } }] };
    case 'and': {
      const args = f.args.map(filterToWhere);
      if (args.length === 0) throw new Error('an empty AND filter has no Chroma form');
      // Chroma wants at least two operands in $and.
      return args.length === 1 ? args[0] : { $and: args };
    }
    default:
      throw new Error(`unsupported filter op "${(f as { op: string }).op}"`);
  }
}

// ---- the server ----

const require = createRequire(import.meta.url);

/** The `chroma` CLI of the installed chromadb package, and its Rust bindings' version. */
export function chromaCli(): { cli: string; bindings: string } {
  let dir: string;
  let bindings: string;
  try {
    // chromadb's exports hide its package.json: walk up from its entry point.
    dir = dirname(require.resolve('chromadb'));
    while (!existsSync(join(dir, 'package.json')) || (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string }).name !== 'chromadb') {
      if (dirname(dir) === dir) throw new Error('chromadb package.json not found');
      dir = dirname(dir);
    }
    bindings = (require('chromadb-js-bindings-linux-x64-gnu/package.json') as { version: string }).version;
  } catch {
    throw new UserError(`the chromadb npm package or its Linux bindings are not installed; run ${PROVISION} (or npm ci)`);
  }
  const cli = join(dir, 'dist', 'cli.mjs');
  if (!existsSync(cli)) throw new UserError(`${cli} is missing; run ${PROVISION}`);
  return { cli, bindings };
}

async function startChroma(ctx: ServerStartContext<Settings>): Promise<ServerHandle> {
  const { cli } = chromaCli();
  const proc = spawnServer({
    name: 'chroma',
    // The CLI runs the Rust server inside this node process (a native addon): one process.
    command: process.execPath,
    args: [cli, 'run', '--host', '127.0.0.1', '--port', String(ctx.port), '--path', ctx.dataDir],
    // No telemetry (the machine is offline; a blocked call must not stall anything).
    env: { ...process.env, ANONYMIZED_TELEMETRY: 'False' },
    dataDir: ctx.dataDir,
    logFile: ctx.logFile,
    // The CLI exits on SIGINT; the rows are in its SQLite log, which a restart replays.
    stopSignal: 'SIGINT',
  });
  const connection = { host: '127.0.0.1', port: ctx.port, dataDir: ctx.dataDir, params: {} };
  return serverHandle(proc, connection, async () => {
    try {
      const r = await request(`http://127.0.0.1:${ctx.port}/api/v2/heartbeat`, { headersTimeout: 2000, bodyTimeout: 2000 });
      await r.body.dump();
      return r.statusCode === 200;
    } catch {
      return false;
    }
  });
}

// ---- the session ----

class Http {
  constructor(private readonly pool: Pool) {}

  async call<T>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<T> {
    const r = await this.pool.request({ method, path, body: body === undefined ? undefined : JSON.stringify(body), headers: { 'content-type': 'application/json' } });
    const text = await r.body.text();
    if (r.statusCode >= 300) throw new Error(`Chroma ${method} ${path.replace(API, '')}: ${r.statusCode} ${text.slice(0, 300)}`);
    return (text ? JSON.parse(text) : null) as T;
  }
}

interface CollectionInfo {
  id: string;
  name: string;
}

const collectionName = (ef: number) => `vb_items_ef${ef}`;

let versionCache: string | null = null;

async function readVersion(http: Http): Promise<string> {
  const server = await http.call<string>('GET', '/api/v2/version');
  return `Chroma ${server} (chromadb-js-bindings ${chromaCli().bindings})`;
}

/** Little-endian float32 bytes in base64: Chroma's packed form of an embedding. */
function packed(v: Float32Array): string {
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');
}

class ChromaSession implements EngineSession {
  private current: CollectionInfo;

  constructor(
    private readonly http: Http,
    private readonly pool: Pool,
    private readonly collections: Map<number, CollectionInfo>,
    private readonly d: number,
  ) {
    this.current = collections.values().next().value!;
  }

  async ingest(batch: RowBatch): Promise<void> {
    const n = batch.ids.length;
    if (batch.vectors.length !== n * this.d) throw new Error(`batch has ${batch.vectors.length} floats for ${n} rows of dimension ${this.d}`);
    for (let from = 0; from < n; from += ADD_BATCH) {
      const to = Math.min(n, from + ADD_BATCH);
      const ids: string[] = [];
      const embeddings: string[] = [];
      const metadatas: Record<string, number>[] = [];
      for (let i = from; i < to; i++) {
        ids.push(String(batch.ids[i]));
        embeddings.push(packed(batch.vectors.subarray(i * this.d, (i + 1) * this.d)));
        const m: Record<string, number> = {};
        for (const a of ATTRIBUTES) m[a] = batch.attrs[a][i];
        metadatas.push(m);
      }
      const body = { ids, embeddings, metadatas };
      // The same rows into every ef collection, one after the other (Chroma's add uses the
      // cores itself).
      for (const c of this.collections.values()) await this.http.call('POST', `${API}/collections/${c.id}/add`, body);
    }
  }

  /** Nothing to do: Chroma indexes rows as they are added. */
  async buildIndex(): Promise<void> {}

  async setKnobs(knobs: Knobs): Promise<void> {
    for (const name of Object.keys(knobs)) if (name !== 'ef') throw new Error(`chroma: unknown knob "${name}"; the only knob is ef (one collection per value)`);
    const ef = knobs.ef;
    if (ef === undefined) return;
    const c = typeof ef === 'number' ? this.collections.get(ef) : undefined;
    if (!c) throw new Error(`chroma: knob ef=${ef} has no collection; Chroma fixes ef_search at creation, so list ${ef} in settings.json index.ef_search (built: ${[...this.collections.keys()].join(', ')})`);
    this.current = c;
  }

  async search(request: SearchRequest): Promise<number[]> {
    if (request.vector.length !== this.d) throw new Error(`query vector has ${request.vector.length} dimensions, the collection ${this.d}`);
    const body: Record<string, unknown> = { query_embeddings: [Array.from(request.vector)], n_results: request.k, include: [] };
    if (request.filter !== null) body.where = filterToWhere(request.filter);
    const r = await this.http.call<{ ids: string[][] }>('POST', `${API}/collections/${this.current.id}/query`, body);
    return (r.ids[0] ?? []).map(Number);
  }

  async insert(batch: RowBatch): Promise<void> {
    await this.ingest(batch);
  }

  async delete(ids: Int32Array): Promise<void> {
    const body = { ids: Array.from(ids, String) };
    for (const c of this.collections.values()) await this.http.call('POST', `${API}/collections/${c.id}/delete`, body);
  }

  async close(): Promise<void> {
    await this.pool.close();
  }
}

function httpFor(ctx: OpenContext<Settings>): { http: Http; pool: Pool } {
  const server = ctx.server;
  if (!server) throw new Error('chroma: no server connection in the open context (the runner starts the server)');
  const pool = new Pool(`http://${server.host}:${server.port}`, { connections: Math.max(1, ctx.maxConcurrency), pipelining: 1, keepAliveTimeout: 60_000 });
  return { http: new Http(pool), pool };
}

function space(metric: Metric): 'ip' | 'l2' {
  // Unit-length vectors (cosine datasets after prepare): inner product ranks as cosine.
  return metric === 'l2' ? 'l2' : 'ip';
}

const participant: Participant<Settings> = {
  engine: 'Chroma',
  async engineVersion() {
    return versionCache ?? `Chroma (no server running to ask; chromadb-js-bindings ${chromaCli().bindings})`;
  },
  settingsSchema,
  filters: { fields: ATTRIBUTES, ops: ['eq', 'range', 'and'] },
  filterStrategy: "pre-filter: the `where` document selects the matching ids from Chroma's SQLite metadata, then the HNSW search is restricted to them",
  concurrentSearch: true,
  server: { provision: 'provision.sh', start: startChroma },
  async open(ctx) {
    const { http, pool } = httpFor(ctx);
    const s = ctx.settings;
    const collections = new Map<number, CollectionInfo>();
    for (const ef of s.ef_search) {
      const name = collectionName(ef);
      await http.call('DELETE', `${API}/collections/${name}`).catch(() => {});
      const hnsw: Record<string, unknown> = { space: space(ctx.dataset.metric), ef_construction: s.ef_construction, ef_search: ef, max_neighbors: s.max_neighbors };
      const c = await http.call<CollectionInfo>('POST', `${API}/collections`, { name, configuration: { hnsw } });
      collections.set(ef, c);
    }
    if (s.num_threads !== undefined) {
      for (const c of collections.values()) await http.call('PUT', `${API}/collections/${c.id}`, { new_configuration: { hnsw: { num_threads: s.num_threads } } });
    }
    versionCache = await readVersion(http);
    return new ChromaSession(http, pool, collections, ctx.dataset.d);
  },
  async reopen(ctx) {
    const { http, pool } = httpFor(ctx);
    const all = await http.call<CollectionInfo[]>('GET', `${API}/collections?limit=1000`);
    const collections = new Map<number, CollectionInfo>();
    for (const ef of ctx.settings.ef_search) {
      const c = all.find((x) => x.name === collectionName(ef));
      if (!c) throw new Error(`chroma: the restarted server has no collection ${collectionName(ef)}`);
      collections.set(ef, c);
    }
    versionCache = await readVersion(http);
    return new ChromaSession(http, pool, collections, ctx.dataset.d);
  },
};

export default participant;
