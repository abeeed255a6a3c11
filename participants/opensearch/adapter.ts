// OpenSearch 2.19.1 with the k-NN plugin 2.19.1.0, Lucene engine: one node in a JVM started by the
// runner (OpenSearchNode.java, the server's own classes from Maven Central; provision.sh), driven
// over its REST API with undici. The plugin's Maven zip carries no native library, so the faiss
// and nmslib engines cannot run: every index here is `engine: lucene`.
//
// OpenSearch without its security plugin checks no credential, so both of its ports (HTTP, the
// runner's, and the transport port) are closed to other local users and hosts while it runs (the
// runner's port guard, as root).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Pool } from 'undici';
import type { z } from 'zod';
import * as sdk from '../../src/sdk/index.ts';

const PROVISION = 'participants/opensearch/provision.sh';
const INDEX = 'vb_items';
const VECTOR_FIELD = 'embedding';

const settingsSchema = sdk.settingsObject({
  /** HNSW graph degree (Lucene maxConn). */
  m: sdk.intSetting(2, 512, 16),
  /** Candidates while building the graph (Lucene beamWidth). */
  ef_construction: sdk.intSetting(2, 4096, 200),
});
type Settings = z.infer<typeof settingsSchema>;

/** The k-NN plugin refuses ef_search above 10,000 (its own limit on the candidate list). */
const EF_SEARCH_MAX = 10_000;

function installDir(): string {
  return join(process.env.VECBENCH_CACHE ?? '/var/cache/vecbench', 'opensearch');
}

/** The classpath provision.sh installed: the server's jars, the plugin's, the launcher. */
function classpath(): string {
  const dir = installDir();
  if (!existsSync(join(dir, '.vecbench-stamp')) || !existsSync(join(dir, 'classes', 'OpenSearchNode.class')))
    throw new sdk.SetupNeeded(`OpenSearch 2.19.1 and its launcher are not installed (${dir}; ${PROVISION} installs them)`);
  return [join(dir, 'lib', '*'), join(dir, 'knn', '*'), join(dir, 'classes')].join(':');
}

/** The java to run (spawnServer takes an absolute path): $JAVA_HOME's, else the first on PATH. */
function javaPath(): string {
  const dirs = process.env.JAVA_HOME ? [join(process.env.JAVA_HOME, 'bin')] : (process.env.PATH ?? '').split(':').filter(Boolean);
  for (const dir of dirs) if (existsSync(join(dir, 'java'))) return join(dir, 'java');
  throw new sdk.SetupNeeded(`no java found (${process.env.JAVA_HOME ? '$JAVA_HOME/bin' : 'on PATH'}; ${PROVISION} installs a JDK 17)`);
}

/** A free port for the node's transport layer, other than the HTTP one. */
async function transportPort(http: number): Promise<number> {
  for (let i = 0; i < 20; i++) {
    const port = await sdk.freePort();
    if (port !== http) return port;
  }
  throw new Error('opensearch: found no free port for the transport layer');
}

async function startOpenSearch(ctx: sdk.ServerStartContext<Settings>): Promise<sdk.ServerHandle> {
  const cp = classpath();
  const transport = await transportPort(ctx.port);
  const proc = sdk.spawnServer({
    name: 'opensearch',
    command: javaPath(),
    args: [
      // A modest heap: HNSW graphs and vectors of the Lucene engine are memory-mapped files.
      '-Xms1g',
      '-Xmx1g',
      '-XX:+UseG1GC',
      '-Djava.awt.headless=true',
      '-Dfile.encoding=UTF-8',
      '-Dlog4j2.formatMsgNoLookups=true',
      '-cp',
      cp,
      'OpenSearchNode',
      join(installDir(), 'home'),
      ctx.dataDir,
      String(ctx.port),
      String(transport),
    ],
    dataDir: ctx.dataDir,
    logFile: ctx.logFile,
    // The launcher's shutdown hook closes the node: shards flushed, the data kept.
    stopSignal: 'SIGTERM',
    stopTimeoutS: 120,
    closeToOthers: { ports: [ctx.port, transport] },
  });
  if (proc.portGuard && !proc.portGuard.closed)
    ctx.log(
      `opensearch listens on 127.0.0.1 ports ${ctx.port} and ${transport} without authentication and they could not be closed to other users (${proc.portGuard.why})`,
    );
  const connection = { host: '127.0.0.1', port: ctx.port, dataDir: ctx.dataDir, params: { transport_port: transport } };
  return sdk.serverHandle(proc, connection, () => clusterReady(ctx.port));
}

/** The cluster's health is yellow or green (a real request to the node). */
async function clusterReady(port: number): Promise<boolean> {
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: 1 });
  try {
    const r = await pool.request({ method: 'GET', path: '/_cluster/health', headersTimeout: 2000, bodyTimeout: 2000 });
    const body = (await r.body.json()) as { status?: string };
    return r.statusCode === 200 && (body.status === 'green' || body.status === 'yellow');
  } catch {
    return false;
  } finally {
    await pool.close();
  }
}

/** The space type the k-NN plugin calls each metric. Cosine rows are unit vectors after prepare,
 * so their inner product is their cosine; innerproduct spares the Lucene engine a normalisation. */
function spaceType(metric: sdk.Metric): string {
  return metric === 'l2' ? 'l2' : 'innerproduct';
}

/** A filter as the OpenSearch query the knn query applies while it walks the graph. */
export function filterQuery(f: sdk.FilterExpr): Record<string, unknown> {
  return sdk.foldFilter<Record<string, unknown>>(f, {
    eq: (field, value) => ({ term: { [field]: value } }),
    range: (field, gte, lt) => ({ range: { [field]: { gte, lt } } }),
    and: (parts) => ({ bool: { filter: parts } }),
  });
}

const KNOBS = { ef_search: sdk.intKnob(1, EF_SEARCH_MAX) };

let versionCache: string | null = null;

class OpenSearchClient {
  constructor(
    private readonly pool: Pool,
    /** The Authorization header of a server the user runs with its security plugin on. */
    private readonly authorization: string | null = null,
  ) {}

  async call(method: 'GET' | 'PUT' | 'POST' | 'DELETE', path: string, body?: unknown, contentType = 'application/json'): Promise<unknown> {
    const text = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    const headers: Record<string, string> = text === undefined ? {} : { 'content-type': contentType };
    if (this.authorization !== null) headers.authorization = this.authorization;
    const r = await this.pool.request({ method, path, body: text, headers });
    const reply = await r.body.text();
    if (r.statusCode >= 300) throw new Error(`opensearch: ${method} ${path.split('?')[0]} answered ${r.statusCode}: ${reply.slice(0, 400)}`);
    return reply === '' ? null : JSON.parse(reply);
  }

  async version(): Promise<string> {
    const root = (await this.call('GET', '/')) as { version: { number: string; lucene_version: string } };
    // The launcher loads the plugin from the classpath, where OpenSearch lists it without a
    // version: the node attribute it sets holds the version of the plugin jar it loaded.
    const nodes = (await this.call('GET', '/_nodes/_local?filter_path=nodes.*.attributes,nodes.*.plugins.classname,nodes.*.plugins.version')) as {
      nodes: Record<string, { attributes?: Record<string, string>; plugins?: { classname: string; version?: string }[] }>;
    };
    const node = Object.values(nodes.nodes)[0];
    // A node installed from the distribution (a server the user runs) lists the plugin with its version.
    const plugin = node?.plugins?.find((p) => p.classname.endsWith('.KNNPlugin')) as { classname: string; version?: string } | undefined;
    const listed = plugin?.version && plugin.version !== 'NA' ? plugin.version : undefined;
    const knn = plugin ? (node.attributes?.knn_plugin_version ?? listed ?? 'unknown version') : 'not loaded';
    return `OpenSearch ${root.version.number} (Lucene ${root.version.lucene_version}), k-NN plugin ${knn}`;
  }
}

class OpenSearchSession implements sdk.EngineSession {
  private efSearch: number | null = null;

  constructor(
    private readonly client: OpenSearchClient,
    private readonly pool: Pool,
    private readonly d: number,
  ) {}

  /** Rows as one _bulk body: an index action per row (a row already there is replaced). */
  private bulkBody(batch: sdk.RowBatch): string {
    const lines: string[] = [];
    for (let i = 0; i < batch.ids.length; i++) {
      const doc: Record<string, unknown> = { [VECTOR_FIELD]: Array.from(batch.vectors.subarray(i * this.d, (i + 1) * this.d)) };
      for (const a of sdk.ATTRIBUTES) doc[a] = batch.attrs[a][i];
      lines.push(`{"index":{"_id":"${batch.ids[i]}"}}`, JSON.stringify(doc));
    }
    return `${lines.join('\n')}\n`;
  }

  private async bulk(body: string, refresh: boolean): Promise<void> {
    const reply = (await this.client.call(
      'POST',
      `/${INDEX}/_bulk?filter_path=errors,items.*.error${refresh ? '&refresh=true' : ''}`,
      body,
      'application/x-ndjson',
    )) as {
      errors: boolean;
      items?: Record<string, { error?: unknown }>[];
    };
    if (reply.errors) {
      const first = reply.items?.map((it) => Object.values(it)[0].error).find((e) => e !== undefined);
      throw new Error(`opensearch: _bulk refused rows: ${JSON.stringify(first).slice(0, 400)}`);
    }
  }

  async ingest(batch: sdk.RowBatch): Promise<void> {
    if (batch.ids.length > 0) await this.bulk(this.bulkBody(batch), false);
  }

  async buildIndex(): Promise<void> {
    await this.client.call('POST', `/${INDEX}/_refresh`);
    // Lucene keeps one HNSW graph per segment and a search walks every one of them: merged into a
    // single segment, a query walks one graph, as the other HNSW participants do.
    await this.client.call('POST', `/${INDEX}/_forcemerge?max_num_segments=1&wait_for_completion=true`);
    await this.client.call('POST', `/${INDEX}/_refresh`);
  }

  async setKnobs(knobs: sdk.Knobs): Promise<void> {
    this.efSearch = (knobs.ef_search as number | undefined) ?? null;
  }

  /** The request body of one search: the knn query, the filter inside it, no _source. */
  private searchBody(request: sdk.SearchRequest): string {
    const knn: Record<string, unknown> = { vector: Array.from(request.vector), k: request.k };
    if (this.efSearch !== null) knn.method_parameters = { ef_search: this.efSearch };
    if (request.filter) knn.filter = filterQuery(request.filter);
    return JSON.stringify({ size: request.k, _source: false, track_total_hits: false, query: { knn: { [VECTOR_FIELD]: knn } } });
  }

  async search(request: sdk.SearchRequest): Promise<Int32Array> {
    const r = await this.pool.request({
      method: 'POST',
      path: `/${INDEX}/_search?filter_path=hits.hits._id`,
      body: this.searchBody(request),
      headers: { 'content-type': 'application/json' },
    });
    const text = await r.body.text();
    if (r.statusCode !== 200) throw new Error(`opensearch: _search answered ${r.statusCode}: ${text.slice(0, 400)}`);
    const hits = (JSON.parse(text) as { hits?: { hits?: { _id: string }[] } }).hits?.hits ?? [];
    const ids = new Int32Array(Math.min(hits.length, request.k));
    for (let i = 0; i < ids.length; i++) ids[i] = Number(hits[i]._id);
    return ids;
  }

  async explain(request: sdk.SearchRequest): Promise<string> {
    const body = JSON.parse(this.searchBody(request)) as Record<string, unknown>;
    const reply = await this.client.call('POST', `/${INDEX}/_search?filter_path=profile.shards.searches.query.type,profile.shards.searches.query.description`, {
      ...body,
      profile: true,
    });
    return JSON.stringify(reply);
  }

  strategy(request: sdk.SearchRequest): sdk.Strategy {
    return sdk.declaredStrategy(request, 'graph walk', 'graph walk + filter');
  }

  async diskBytes(): Promise<number> {
    const s = (await this.client.call('GET', `/${INDEX}/_stats/store?filter_path=_all.total.store.size_in_bytes`)) as {
      _all: { total: { store: { size_in_bytes: number } } };
    };
    return s._all.total.store.size_in_bytes;
  }

  // Writes are refreshed before they return: the next search sees them.
  async insert(batch: sdk.RowBatch): Promise<void> {
    if (batch.ids.length > 0) await this.bulk(this.bulkBody(batch), true);
  }

  async upsert(batch: sdk.RowBatch): Promise<void> {
    await this.insert(batch);
  }

  async delete(ids: Int32Array): Promise<void> {
    if (ids.length === 0) return;
    const body = `${Array.from(ids, (id) => `{"delete":{"_id":"${id}"}}`).join('\n')}\n`;
    await this.bulk(body, true);
  }

  async compact(): Promise<void> {
    // Deleted rows leave the graph only when their segment is merged away.
    await this.client.call('POST', `/${INDEX}/_forcemerge?max_num_segments=1&wait_for_completion=true`);
    await this.client.call('POST', `/${INDEX}/_refresh`);
  }

  async close(): Promise<void> {
    // A flush commits the segments, so a restart on the data replays no translog.
    await this.client.call('POST', `/${INDEX}/_flush`).catch(() => {});
    await this.pool.close();
  }
}

function connect(ctx: sdk.OpenContext<Settings>): { pool: Pool; client: OpenSearchClient } {
  const server = ctx.server;
  if (!server)
    throw new Error('opensearch: no server connection in the open context (the runner starts the server; tests start it with participant.server.start)');
  const pool = new Pool(`http://${server.host}:${server.port}`, { connections: Math.max(1, ctx.maxConcurrency), pipelining: 1 });
  return { pool, client: new OpenSearchClient(pool, basicAuth(server)) };
}

/** The Authorization header of a server given with a user and password, else none. */
function basicAuth(c: sdk.ServerConnection): string | null {
  if (c.params.user === undefined) return null;
  return `Basic ${Buffer.from(`${String(c.params.user)}:${String(c.params.password ?? '')}`).toString('base64')}`;
}

/** An OpenSearch the user runs (--connect opensearch=http://user:password@host:9200, or without
 * user and password when its security plugin is off), with the k-NN plugin: vecbench makes and
 * drops its own index there, vb_items. Plain http: a cluster serving only https is refused by the check. */
const remote: sdk.RemoteServer = {
  schemes: ['http'],
  defaultPort: 9200,
  connection: (url) => sdk.urlConnection(url, 9200, sdk.urlCredentials(url)),
  async check(c) {
    const pool = new Pool(`http://${c.host}:${c.port}`, { connections: 1 });
    try {
      const client = new OpenSearchClient(pool, basicAuth(c));
      const root = (await client.call('GET', '/')) as { version?: { number?: string; distribution?: string } } | null;
      if (root?.version?.distribution !== 'opensearch') throw new Error('it does not answer GET / as OpenSearch does (no version.distribution "opensearch")');
      const version = await client.version();
      if (version.endsWith('k-NN plugin not loaded')) throw new Error(`it answers as ${version}, without the k-NN plugin vecbench needs`);
    } finally {
      await pool.close();
    }
  },
};

const participant: sdk.Participant<Settings> = {
  engine: 'OpenSearch k-NN (Lucene engine)',
  async engineVersion() {
    return versionCache ?? 'OpenSearch 2.19.1 with k-NN 2.19.1.0 (installed; no server running to ask)';
  },
  settingsSchema,
  knobs: KNOBS,
  filters: sdk.EVERY_FILTER,
  filterStrategy:
    "the filter as a bool/term/range query inside the knn query: Lucene's efficient filtering per segment (an exact scan of the matches when they are no more than the candidates, else an HNSW walk that checks the filter and falls back to the exact scan when it visits more nodes than matches)",
  concurrentSearch: true,
  server: { provision: 'provision.sh', start: startOpenSearch, remote },
  async open(ctx) {
    const d = ctx.dataset.d;
    if (!Number.isInteger(d) || d < 1 || d > 16_000) throw new Error(`opensearch: the k-NN plugin takes at most 16,000 dimensions; the dataset has ${d}`);
    const { pool, client } = connect(ctx);
    await client.call('DELETE', `/${INDEX}?ignore_unavailable=true`);
    const s = ctx.settings;
    await client.call('PUT', `/${INDEX}`, {
      settings: {
        index: {
          knn: true,
          number_of_shards: 1,
          number_of_replicas: 0,
          // No refresh during the load: segments are made by the buffer and merged in buildIndex.
          refresh_interval: '-1',
        },
      },
      mappings: {
        dynamic: 'strict',
        _source: { enabled: false },
        properties: {
          [VECTOR_FIELD]: {
            type: 'knn_vector',
            dimension: d,
            space_type: spaceType(ctx.dataset.metric),
            method: { name: 'hnsw', engine: 'lucene', parameters: { m: s.m, ef_construction: s.ef_construction } },
          },
          ...Object.fromEntries(sdk.ATTRIBUTES.map((a) => [a, { type: 'integer' }])),
        },
      },
    });
    versionCache = await client.version();
    return new OpenSearchSession(client, pool, d);
  },
  async reopen(ctx) {
    const { pool, client } = connect(ctx);
    // After a restart the shard recovers from its files: wait until it is searchable.
    await client.call('GET', `/_cluster/health/${INDEX}?wait_for_status=yellow&timeout=60s`);
    await client.call('POST', `/${INDEX}/_refresh`);
    versionCache = await client.version();
    return new OpenSearchSession(client, pool, ctx.dataset.d);
  },
};

export default participant;
