// Chroma: a real local Chroma server (`chroma run` from the chromadb npm package, its Rust
// server in chromadb-js-bindings) started by the runner on a free 127.0.0.1 port with a data
// directory of the run, spoken to over its REST API (v2) with an undici pool.
//
// Chroma fixes an HNSW collection's ef_search at creation: changing it later (PUT with a new
// configuration) is stored but the loaded index keeps the old value (measured: README). So the
// ladder's ef values are built as collections, one per value in index.ef_search, each holding
// every row; ingest adds each batch to all of them, and setKnobs picks the collection. The
// ingest time, disk and memory therefore cover that many indexes (README).
//
// Local Chroma keeps every collection's metadata in one SQLite table, and a `where` looks its
// keys up across all of them (the (key, value) index has no collection column). So each
// collection stores its rows' attributes under keys of its own (`num_ef10`: metadataKey): a
// filter then reads only its collection's rows, as it would with one collection, instead of
// every copy in the ladder (measured ~10x slower for ranges with shared keys: README).
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Pool, request } from 'undici';
import { z } from 'zod';
import * as sdk from '../../src/sdk/index.ts';

const PROVISION = 'participants/chroma/provision.sh';
const API = '/api/v2/tenants/default_tenant/databases/default_database';
/** Chroma refuses larger add batches (its max_batch_size is 5461 here). */
const ADD_BATCH = 5000;

const settingsSchema = sdk
  .settingsObject({
    /** HNSW max_neighbors (hnswlib's M). */
    max_neighbors: sdk.intSetting(2, 256, 16),
    /** HNSW ef_construction. */
    ef_construction: sdk.intSetting(1, 10_000, 100),
    /** One collection per value, each with every row: the ef ladder (fixed at creation). The
     * ladders may only use these values. */
    ef_search: z.array(z.number().int().min(1)).min(1).default([10, 20, 40, 100, 200, 400]),
    /** Threads hnswlib uses to add a batch (Chroma's num_threads; default: all cores). */
    num_threads: z.number().int().min(1).optional(),
  })
  .refine((s) => s.ef_search.every((v, i) => i === 0 || v > s.ef_search[i - 1]), {
    path: ['ef_search'],
    message: 'ef_search values must be distinct and ascending',
  });
type Settings = z.infer<typeof settingsSchema>;

// ---- filters ----

/** The metadata key under which the collection of ladder value `ef` stores attribute `attr`. */
export const metadataKey = (attr: sdk.AttrName, ef: number): string => `${attr}_ef${ef}`;

/** FilterExpr -> a Chroma `where` document over the rows' integer metadata; `key` names the
 * metadata key of an attribute (the collection's own: metadataKey). */
export function filterToWhere(f: sdk.FilterExpr, key: (attr: sdk.AttrName) => string = (a) => a): Record<string, unknown> {
  return sdk.foldFilter<Record<string, unknown>>(f, {
    eq: (field, value) => ({ [key(field)]: { $eq: value } }),
    range: (field, gte, lt) => ({ $and: [{ [key(field)]: { $gte: gte } }, { [key(field)]: { $lt: lt } }] }),
    and: (parts) => {
      if (parts.length === 0) throw new Error('an empty AND filter has no Chroma form');
      // Chroma wants at least two operands in $and.
      return parts.length === 1 ? parts[0] : { $and: parts };
    },
  });
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
    throw new sdk.UserError(`the chromadb npm package or its Linux bindings are not installed; run ${PROVISION} (or npm ci)`);
  }
  const cli = join(dir, 'dist', 'cli.mjs');
  if (!existsSync(cli)) throw new sdk.UserError(`${cli} is missing; run ${PROVISION}`);
  return { cli, bindings };
}

async function startChroma(ctx: sdk.ServerStartContext<Settings>): Promise<sdk.ServerHandle> {
  const { cli } = chromaCli();
  const proc = sdk.spawnServer({
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
    // Chroma's server checks no token (its Rust frontend has no authentication): the port is
    // closed to every other local user instead, while it runs.
    closeToOthers: ctx.port,
  });
  if (proc.portGuard && !proc.portGuard.closed)
    ctx.log(
      `chroma has no authentication and its port could not be closed to other local users (${proc.portGuard.why}): any local user can reach 127.0.0.1:${ctx.port} while it runs`,
    );
  const connection = { host: '127.0.0.1', port: ctx.port, dataDir: ctx.dataDir, params: {} };
  return sdk.serverHandle(proc, connection, async () => {
    try {
      const r = await request(`http://127.0.0.1:${ctx.port}/api/v2/heartbeat`, { headersTimeout: 2000, bodyTimeout: 2000 });
      await r.body.dump();
      return r.statusCode === 200;
    } catch {
      return false;
    }
  });
}

/** A Chroma server the user runs (vecbench run --connect chroma=http://host:port), without
 * authentication: the adapter sends no token. */
const remote: sdk.RemoteServer = {
  schemes: ['http'],
  defaultPort: 8000,
  connection(url) {
    if (url.username || url.password)
      throw new Error('Chroma credentials are not supported (the adapter sends no token); give a server without authentication as http://host:port');
    return sdk.urlConnection(url, 8000);
  },
  async check(c) {
    const r = await request(`http://${c.host}:${c.port}/api/v2/heartbeat`, { headersTimeout: 10_000, bodyTimeout: 10_000 });
    const text = await r.body.text();
    if (r.statusCode !== 200) throw new Error(`heartbeat answered ${r.statusCode} ${text.slice(0, 200)}`);
  },
};

// ---- the session ----

class Http {
  constructor(private readonly pool: Pool) {}

  async call<T>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<T> {
    const r = await this.pool.request({
      method,
      path,
      body: body === undefined ? undefined : JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
    });
    const text = await r.body.text();
    if (r.statusCode >= 300) throw new Error(`Chroma ${method} ${path.replace(API, '')}: ${r.statusCode} ${text.slice(0, 300)}`);
    return (text ? JSON.parse(text) : null) as T;
  }
}

interface CollectionInfo {
  id: string;
  name: string;
}

export const collectionName = (ef: number) => `vb_items_ef${ef}`;

let versionCache: string | null = null;

async function readVersion(http: Http): Promise<string> {
  const server = await http.call<string>('GET', '/api/v2/version');
  return `Chroma ${server} (chromadb-js-bindings ${chromaCli().bindings})`;
}

/** Little-endian float32 bytes in base64: Chroma's packed form of an embedding. */
function packed(v: Float32Array): string {
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');
}

/** A query's body: the session and the load generator's client (load-client.ts) send the same;
 * `ef` names the collection queried (its metadata keys). */
export function queryBody(request: sdk.SearchRequest, ef: number): Record<string, unknown> {
  const body: Record<string, unknown> = { query_embeddings: [Array.from(request.vector)], n_results: request.k, include: [] };
  if (request.filter !== null) body.where = filterToWhere(request.filter, (a) => metadataKey(a, ef));
  return body;
}

/** What the session hands its load generator's client (load-client.ts). */
export interface ChromaLoadOptions {
  /** e.g. http://127.0.0.1:8000 */
  origin: string;
  /** [ef, the query path of that ef's collection] (Chroma fixes ef_search per collection). */
  queryPaths: [number, string][];
  /** The ef the session had when the spec was made (setKnobs changes it). */
  ef: number;
  d: number;
}

class ChromaSession implements sdk.EngineSession {
  private current: CollectionInfo;
  private currentEf: number;

  constructor(
    private readonly http: Http,
    private readonly pool: Pool,
    private readonly collections: Map<number, CollectionInfo>,
    private readonly d: number,
    private readonly server?: sdk.ServerConnection,
  ) {
    this.current = collections.values().next().value!;
    this.currentEf = collections.keys().next().value!;
  }

  async ingest(batch: sdk.RowBatch): Promise<void> {
    await this.send(batch, 'add');
  }

  /** `add` (ingest, insert) or `upsert` (a present id gets the new vector and metadata). */
  private async send(batch: sdk.RowBatch, verb: 'add' | 'upsert'): Promise<void> {
    const n = batch.ids.length;
    if (batch.vectors.length !== n * this.d) throw new Error(`batch has ${batch.vectors.length} floats for ${n} rows of dimension ${this.d}`);
    for (let from = 0; from < n; from += ADD_BATCH) {
      const to = Math.min(n, from + ADD_BATCH);
      const ids: string[] = [];
      const embeddings: string[] = [];
      for (let i = from; i < to; i++) {
        ids.push(String(batch.ids[i]));
        embeddings.push(packed(batch.vectors.subarray(i * this.d, (i + 1) * this.d)));
      }
      // The same rows into every ef collection, one after the other (Chroma's add uses the
      // cores itself), each with the attributes under its own keys.
      for (const [ef, c] of this.collections) {
        const metadatas: Record<string, number>[] = [];
        for (let i = from; i < to; i++) {
          const m: Record<string, number> = {};
          for (const a of sdk.ATTRIBUTES) m[metadataKey(a, ef)] = batch.attrs[a][i];
          metadatas.push(m);
        }
        await this.http.call('POST', `${API}/collections/${c.id}/${verb}`, { ids, embeddings, metadatas });
      }
    }
  }

  /** Nothing to do: Chroma indexes rows as they are added. */
  async buildIndex(): Promise<void> {}

  async setKnobs(knobs: sdk.Knobs): Promise<void> {
    const ef = knobs.ef;
    if (ef === undefined) return;
    const c = typeof ef === 'number' ? this.collections.get(ef) : undefined;
    if (!c)
      throw new Error(
        `chroma: knob ef=${ef} has no collection; Chroma fixes ef_search at creation, so list ${ef} in settings.json index.ef_search (built: ${[...this.collections.keys()].join(', ')})`,
      );
    this.current = c;
    this.currentEf = ef as number;
  }

  async search(request: sdk.SearchRequest): Promise<number[]> {
    if (request.vector.length !== this.d) throw new Error(`query vector has ${request.vector.length} dimensions, the collection ${this.d}`);
    const r = await this.http.call<{ ids: string[][] }>('POST', `${API}/collections/${this.current.id}/query`, queryBody(request, this.currentEf));
    return (r.ids[0] ?? []).map(Number);
  }

  /** The load generator's worker threads each open their own undici pool (load-client.ts). */
  strategy(request: sdk.SearchRequest): sdk.Strategy {
    return sdk.declaredStrategy(request, 'graph walk', 'pre-filter + graph walk');
  }

  loadClient(): sdk.LoadClientSpec {
    if (!this.server) throw new Error('chroma: no server connection to give the load client');
    const options: ChromaLoadOptions = {
      origin: `http://${this.server.host}:${this.server.port}`,
      queryPaths: [...this.collections].map(([ef, c]) => [ef, `${API}/collections/${c.id}/query`]),
      ef: this.currentEf,
      d: this.d,
    };
    return { module: sdk.besideSource(import.meta.url, 'load-client.ts'), options };
  }

  async insert(batch: sdk.RowBatch): Promise<void> {
    await this.ingest(batch);
  }

  async upsert(batch: sdk.RowBatch): Promise<void> {
    await this.send(batch, 'upsert');
  }

  async delete(ids: Int32Array): Promise<void> {
    const body = { ids: Array.from(ids, String) };
    for (const c of this.collections.values()) await this.http.call('POST', `${API}/collections/${c.id}/delete`, body);
  }

  async close(): Promise<void> {
    await this.pool.close();
  }
}

function httpFor(ctx: sdk.OpenContext<Settings>): { http: Http; pool: Pool } {
  const server = ctx.server;
  if (!server) throw new Error('chroma: no server connection in the open context (the runner starts the server)');
  const pool = new Pool(`http://${server.host}:${server.port}`, { connections: Math.max(1, ctx.maxConcurrency), pipelining: 1, keepAliveTimeout: 60_000 });
  return { http: new Http(pool), pool };
}

function space(metric: sdk.Metric): 'ip' | 'l2' {
  // Unit-length vectors (cosine datasets after prepare): inner product ranks as cosine.
  return metric === 'l2' ? 'l2' : 'ip';
}

const participant: sdk.Participant<Settings> = {
  engine: 'Chroma',
  async engineVersion() {
    return versionCache ?? `Chroma (no server running to ask; chromadb-js-bindings ${chromaCli().bindings})`;
  },
  settingsSchema,
  // ef: one collection per value (Chroma fixes ef_search at creation).
  knobs: { ef: sdk.intKnob(1) },
  filters: sdk.EVERY_FILTER,
  filterStrategy: "pre-filter: the `where` document selects the matching ids from Chroma's SQLite metadata, then the HNSW search is restricted to them",
  concurrentSearch: true,
  server: { provision: 'provision.sh', start: startChroma, remote },
  async open(ctx) {
    const { http, pool } = httpFor(ctx);
    const s = ctx.settings;
    const collections = new Map<number, CollectionInfo>();
    for (const ef of s.ef_search) {
      const name = collectionName(ef);
      await http.call('DELETE', `${API}/collections/${name}`).catch(() => {});
      const hnsw: Record<string, unknown> = {
        space: space(ctx.dataset.metric),
        ef_construction: s.ef_construction,
        ef_search: ef,
        max_neighbors: s.max_neighbors,
      };
      const c = await http.call<CollectionInfo>('POST', `${API}/collections`, { name, configuration: { hnsw } });
      collections.set(ef, c);
    }
    if (s.num_threads !== undefined) {
      for (const c of collections.values())
        await http.call('PUT', `${API}/collections/${c.id}`, { new_configuration: { hnsw: { num_threads: s.num_threads } } });
    }
    versionCache = await readVersion(http);
    return new ChromaSession(http, pool, collections, ctx.dataset.d, ctx.server);
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
    return new ChromaSession(http, pool, collections, ctx.dataset.d, ctx.server);
  },
};

export default participant;
