// Participants whose engine exists only in another language (Python, Java, ...): the adapter is
// a short TypeScript file (settings schema, what the engine can filter, how to start its host)
// and the engine is driven by a host process in the engine's own language that speaks the
// participant protocol over its stdin and stdout. docs/protocol.md, "The participant
// protocol", is the specification; src/sdk/python/vecbench_host.py and src/sdk/java/VecbenchHost.java
// are the reference hosts.
//
// To the runner such a participant is like any other: the protocol carries the same operations
// as EngineSession, so the contract suite, ladders, calibration, churn, resources (the host
// process is a child of the participant host, inside its measured process tree) and cold start
// need nothing of their own. Requests carry ids, so searches may overlap; a measured pass is
// timed in the host, next to the engine (timedPass). The frames are foreign-host.ts.
import type { ZodType } from 'zod';
import {
  ATTRIBUTES,
  type AttrName,
  type DatasetInfo,
  type EngineSession,
  type FilterExpr,
  type Knobs,
  type OpenContext,
  type Participant,
  type RowBatch,
  type SearchRequest,
  type ServerLifecycle,
  type Strategy,
  type TimedPass,
} from '../contracts.ts';
import { besideSource } from '../util/code-paths.ts';
import { ForeignHost, type HostCommand, type Reply } from './foreign-host.ts';

/** The directory of the Python reference host (vecbench_host.py): a Python host puts it on its
 * path (pythonHost passes it as VECBENCH_PYTHON_SDK). */
export function pythonSdkDir(): string {
  return besideSource(import.meta.url, '../sdk/python');
}

/** The command of a Python participant's host: host.py beside its adapter (`moduleUrl`: the
 * adapter's import.meta.url) run by `python` (its venv's interpreter), unbuffered so its stderr
 * lines arrive as written (-I would drop PYTHONPATH; the SDK's path goes in its own variable). */
export function pythonHost(moduleUrl: string, python: string): HostCommand {
  return { command: python, args: ['-u', besideSource(moduleUrl, 'host.py')], env: { ...process.env, VECBENCH_PYTHON_SDK: pythonSdkDir() } };
}

/** The protocol's version: a host answering another one is refused at hello. */
const PROTOCOL_VERSION = 1;

/** Operations a host may serve beyond the required ones (hello, open, ingest, build, knobs,
 * search, close): each maps onto an optional EngineSession member. */
const OPTIONAL_OPS = ['explain', 'disk_bytes', 'insert', 'upsert', 'delete', 'compact'] as const;
type OptionalOp = (typeof OPTIONAL_OPS)[number];

export interface ForeignParticipantSpec<S> {
  /** The participant's name, for messages. */
  name: string;
  /** The engine's human name (Participant.engine). */
  engine: string;
  settingsSchema: ZodType<S>;
  /** The search knobs its host takes (Participant.knobs): checked by the harness before a
   * `knobs` request is sent, so the host only applies them. */
  knobs: Participant<S>['knobs'];
  filters: Participant<S>['filters'];
  filterStrategy: string;
  /** True when the host's engine can reopen its files without ingest (cold start, threads). */
  reopen: boolean;
  /** How searches overlap. 'requests': the host answers overlapping requests from threads of its
   * own (its engine searches in parallel within one process). 'processes': the host answers one
   * at a time (e.g. a Python engine that holds the GIL through a query), and the harness's
   * search threads each start a host of their own on a copy of the work directory (needs
   * reopen; Participant.reopenInThreads 'copy'), so the engine still gets a thread per core.
   * Default 'requests'. */
  concurrency?: 'requests' | 'processes';
  host(): HostCommand;
  /** Optional: why these settings cannot run on this dataset (Participant.checkDataset). */
  checkDataset?(settings: S, dataset: DatasetInfo): string | null;
  /** Present when the engine is a server the runner starts and stops (Participant.server): the
   * host gets its connection (host, port, params, data directory) in `open`'s `server`. */
  server?: ServerLifecycle<S>;
}

// ---- payloads ----

function int32s(reply: Reply, what: string, name: string): Int32Array {
  const p = reply.payload;
  if (p.length % 4 !== 0) throw new Error(`${name}: its host answered ${what} with ${p.length} bytes, not whole int32s`);
  // A copy: the frame's buffer is shared with the next frames.
  const out = new Int32Array(p.length / 4);
  Buffer.from(out.buffer).set(p);
  return out;
}

/** The columns of a batch in ATTRIBUTES order, as the protocol sends them. */
function batchPayload(batch: RowBatch): ArrayBufferView[] {
  return [batch.ids, batch.vectors, ...ATTRIBUTES.map((a) => batch.attrs[a])];
}

function batchFields(batch: RowBatch, d: number): Record<string, unknown> {
  if (batch.vectors.length !== batch.ids.length * d) throw new Error(`a batch of ${batch.ids.length} rows has ${batch.vectors.length} floats, not x ${d}`);
  return { n: batch.ids.length, attrs: ATTRIBUTES as readonly AttrName[], ...(batch.text ? { text: batch.text } : {}) };
}

function requestFields(r: SearchRequest): { k: number; filter: FilterExpr | null } {
  return { k: r.k, filter: r.filter };
}

// ---- the session ----

function hostSession(host: ForeignHost, d: number, ops: Set<string>): EngineSession {
  const name = host.name;
  const has = (op: OptionalOp) => ops.has(op);
  const session: EngineSession & { readonly hostPid: number | undefined } = {
    /** The host process (tests kill it to see the session fail in one line). */
    hostPid: host.pid,
    async ingest(batch) {
      await host.call('ingest', batchFields(batch, d), batchPayload(batch));
    },
    async buildIndex() {
      await host.call('build');
    },
    async setKnobs(knobs: Knobs) {
      await host.call('knobs', { knobs });
    },
    async search(request) {
      if (request.vector.length !== d) throw new Error(`query vector has ${request.vector.length} dimensions, the index ${d}`);
      const reply = await host.call('search', requestFields(request), [request.vector]);
      const ids = int32s(reply, 'a search', name);
      if (ids.length > request.k) throw new Error(`${name}: its host returned ${ids.length} ids for k = ${request.k}`);
      return ids;
    },
    async close() {
      await host.close();
    },
    timedPass: (requests, clients) => timedPass(host, 'pass', requests, clients, d),
    // The same frames and the same host process, answered without the engine (null_search,
    // null_pass: the host's own loop around an engine that answers at once).
    nullPath: () => ({
      setKnobs: async () => {},
      search: async (request) => int32s(await host.call('null_search', requestFields(request), [request.vector]), 'a null search', name),
      timedPass: (requests, clients) => timedPass(host, 'null_pass', requests, clients, d),
    }),
  };
  if (has('explain'))
    session.explain = async (request) => {
      const r = await host.call('explain', requestFields(request), [request.vector]);
      if (typeof r.header.plan !== 'string') throw new Error(`${name}: its host's explain gave no plan text`);
      return r.header.plan;
    };
  // A host's plan text starts with "strategy: LABEL" and, when the label was read from the
  // engine's own planner rather than declared, "(observed)" after it.
  session.strategy = (request: SearchRequest, plan: string | null): Strategy => {
    const m = plan === null ? null : /^strategy: (.+?)( \(observed\))?$/m.exec(plan);
    if (m) return { label: m[1], observed: m[2] !== undefined };
    return { label: request.filter === null ? 'graph walk' : 'filtered graph walk', observed: false };
  };
  if (has('disk_bytes'))
    session.diskBytes = async () => {
      const r = await host.call('disk_bytes');
      if (typeof r.header.bytes !== 'number' || !(r.header.bytes >= 0)) throw new Error(`${name}: its host's disk_bytes gave no byte count`);
      return r.header.bytes;
    };
  for (const op of ['insert', 'upsert'] as const)
    if (has(op))
      session[op] = async (batch) => {
        await host.call(op, batchFields(batch, d), batchPayload(batch));
      };
  if (has('delete'))
    session.delete = async (ids) => {
      await host.call('delete', { n: ids.length }, [ids]);
    };
  if (has('compact'))
    session.compact = async () => {
      await host.call('compact');
    };
  return session;
}

/** One timed pass in the host: the vectors go in one frame, the host times each search next to
 * the engine and answers latencies (float64 ms), counts and ids in one frame. */
async function timedPass(host: ForeignHost, op: 'pass' | 'null_pass', requests: SearchRequest[], clients: number, d: number): Promise<TimedPass> {
  const n = requests.length;
  const vectors = new Float32Array(n * d);
  requests.forEach((r, i) => {
    if (r.vector.length !== d) throw new Error(`query vector has ${r.vector.length} dimensions, the index ${d}`);
    vectors.set(r.vector, i * d);
  });
  const k = requests[0]?.k ?? 0;
  if (requests.some((r) => r.k !== k)) throw new Error('a timed pass asks one k');
  const reply = await host.call(op, { n, k, clients, filters: requests.map((r) => r.filter) }, [vectors]);
  const p = reply.payload;
  const name = host.name;
  const wallS = reply.header.wall_s;
  if (typeof wallS !== 'number' || !(wallS >= 0) || p.length < n * 12)
    throw new Error(`${name}: its host answered a pass of ${n} queries with ${p.length} bytes and wall_s ${String(wallS)}`);
  const latenciesMs = new Float64Array(n);
  Buffer.from(latenciesMs.buffer).set(p.subarray(0, n * 8));
  const counts = new Int32Array(n);
  Buffer.from(counts.buffer).set(p.subarray(n * 8, n * 12));
  const total = counts.reduce((a, b) => a + b, 0);
  if (p.length !== n * 12 + total * 4) throw new Error(`${name}: its host's pass payload is ${p.length} bytes, not ${n * 12 + total * 4}`);
  const ids = new Int32Array(total);
  Buffer.from(ids.buffer).set(p.subarray(n * 12));
  const results: Int32Array[] = [];
  let at = 0;
  for (let i = 0; i < n; i++) {
    if (counts[i] < 0 || counts[i] > k) throw new Error(`${name}: its host returned ${counts[i]} ids for k = ${k}`);
    results.push(ids.subarray(at, at + counts[i]));
    at += counts[i];
  }
  const errors: (string | null)[] = new Array(n).fill(null);
  for (const e of (reply.header.errors as [number, string][] | undefined) ?? []) {
    if (Number.isInteger(e?.[0]) && e[0] >= 0 && e[0] < n) errors[e[0]] = `${name}: ${String(e[1]).split('\n')[0]}`;
  }
  return { results, latenciesMs, errors, wallS };
}

/** hello: the protocol version, the engine's name and version, and the optional ops served. */
async function hello(host: ForeignHost): Promise<{ engine: string; version: string; ops: Set<string> }> {
  const r = await host.call('hello', { protocol: PROTOCOL_VERSION });
  const h = r.header;
  if (h.protocol !== PROTOCOL_VERSION)
    throw new Error(`${host.name}: its host speaks participant protocol ${String(h.protocol)}, this vecbench ${PROTOCOL_VERSION}; update one of them`);
  if (typeof h.engine !== 'string' || typeof h.version !== 'string' || !Array.isArray(h.ops))
    throw new Error(`${host.name}: its host's hello lacks engine, version or ops`);
  const unknown = (h.ops as unknown[]).filter((o) => !(OPTIONAL_OPS as readonly unknown[]).includes(o));
  if (unknown.length > 0) throw new Error(`${host.name}: its host serves unknown ops ${unknown.join(', ')}`);
  return { engine: h.engine, version: h.version, ops: new Set(h.ops as string[]) };
}

/** A Participant whose engine runs in a host process of another language. */
export function foreignParticipant<S>(spec: ForeignParticipantSpec<S>): Participant<S> {
  let versionCache: string | null = null;
  async function start(ctx: OpenContext<S>, reopen: boolean): Promise<EngineSession> {
    const host = new ForeignHost(spec.name, spec.host(), ctx.log);
    try {
      const h = await hello(host);
      const d = ctx.dataset;
      const opened = await host.call('open', {
        dataset: { name: d.name, n: d.n, d: d.d, metric: d.metric, has_text: d.hasText },
        settings: ctx.settings,
        work_dir: ctx.workDir,
        max_concurrency: ctx.maxConcurrency,
        reopen,
        server: ctx.server ?? null,
      });
      // A host may name the version of what it opened (a server answers only once connected).
      if (typeof opened.header.version === 'string' && opened.header.version !== '') versionCache = opened.header.version;
      return hostSession(host, d.d, h.ops);
    } catch (e) {
      host.kill();
      throw e;
    }
  }
  const participant: Participant<S> = {
    engine: spec.engine,
    async engineVersion() {
      if (versionCache) return versionCache;
      const host = new ForeignHost(spec.name, spec.host(), () => {});
      try {
        const h = await hello(host);
        versionCache = h.version;
        return versionCache;
      } finally {
        await host.close(30).catch(() => host.kill());
      }
    },
    settingsSchema: spec.settingsSchema,
    knobs: spec.knobs,
    filters: spec.filters,
    filterStrategy: spec.filterStrategy,
    concurrentSearch: spec.concurrency !== 'processes',
    open: (ctx) => start(ctx, false),
  };
  if (spec.reopen) participant.reopen = (ctx) => start(ctx, true);
  if (spec.concurrency === 'processes') {
    if (!spec.reopen) throw new Error(`${spec.name}: concurrency 'processes' needs reopen (each search thread reopens a copy)`);
    participant.reopenInThreads = 'copy';
  }
  if (spec.checkDataset) participant.checkDataset = spec.checkDataset;
  if (spec.server) participant.server = spec.server;
  return participant;
}
