// The participant host: a child process that loads one participant's adapter, ingests the
// dataset and runs each point's queries, timing them beside the engine. Running engines in
// a child of their own lets the runner time out a hung engine, survive a crash and measure
// the engine's memory like a server's. It handles the measurement's own messages here and
// routes the features' messages by type to the feature that declared them (feature.ts); its
// entry, src/host-main.ts, hands it the features.
import type { EngineSession, Knobs, RowAttributes } from '../contracts.ts';
import { ATTRIBUTES } from '../contracts.ts';
import { loadDataset, type Dataset } from '../datasets/layout.ts';
import { UserError, diskFullError } from '../util/errors.ts';
import { checkedSession, loadParticipant } from './participants.ts';
import type { HostFeature, HostState } from './feature.ts';
import type { FeatureRequest, HostMessage, HostReply, HostRequest } from './protocol.ts';
import type { PointReply } from './point-reply.ts';
import { redactStandardStreams } from '../util/redact.ts';
import { digestOf, packIds, timedLoop } from './timed-loop.ts';
import { SearchThreads, type SearchThreadsOptions } from './search-threads.ts';

let session: EngineSession | null = null;
/** The engine's work directory (the last open), named when its disk is full. */
let workDir: string | null = null;
let dataset: Dataset | null = null;
let concurrent = false;

function send(m: HostMessage): void {
  process.send?.(m);
}

function rowsOf(ds: Dataset, from: number, to: number) {
  const ids = new Int32Array(to - from);
  for (let i = 0; i < ids.length; i++) ids[i] = from + i;
  const attrs = Object.fromEntries(ATTRIBUTES.map((a) => [a, ds.attrs[a].slice(from, to)])) as RowAttributes;
  return { ids, vectors: ds.base.slice(from * ds.d, to * ds.d), attrs, text: ds.text?.slice(from, to) };
}

/** Vectors of the last query list asked, so repeated passes over one set copy nothing. */
let vectorCache: { queries: number[]; vectors: Float32Array[] } | null = null;

function queryVectors(ds: Dataset, queries: number[]): Float32Array[] {
  const c = vectorCache;
  if (c && c.queries.length === queries.length && c.queries.every((q, i) => q === queries[i])) return c.vectors;
  const vectors = queries.map((q) => ds.queries.slice(q * ds.d, (q + 1) * ds.d));
  vectorCache = { queries, vectors };
  return vectors;
}

/** The null engine of the 'null-pass': answers at once, so a pass times only the harness. */
function nullSession(k: number): Pick<EngineSession, 'setKnobs' | 'search'> {
  const ids = Int32Array.from({ length: k }, (_, i) => i);
  return { setKnobs: async () => {}, search: async () => ids };
}

/** Where search threads reopen the session's index (the last open), when its adapter allows it. */
let threadsFrom: Omit<SearchThreadsOptions, 'threads' | 'loaded'> | null = null;
/** The work directory holds what the session holds: after buildIndex or a reopen, before any write. */
let indexSaved = false;
/** Opened by the first threaded pass, closed before anything changes the index. */
let searchThreads: SearchThreads | null = null;

async function closeThreads(): Promise<void> {
  const t = searchThreads;
  searchThreads = null;
  await t?.close();
}

/** One pass in `threads` search threads, opened (or reopened with a new count) on demand. */
async function threadedPass(req: Extract<HostRequest, { type: 'point' }>, threads: number) {
  if (searchThreads === null || searchThreads.size !== threads || searchThreads.failed) {
    await closeThreads();
    searchThreads = await SearchThreads.open({ ...threadsFrom!, threads, loaded: dataset! });
  }
  try {
    return await searchThreads.pass(req);
  } catch (e) {
    // A dead thread ends these threads; a bad knob leaves them usable.
    if (searchThreads.failed) await closeThreads();
    throw e;
  }
}

/** engine / overlap: the session and whether its searches overlap (the null pass's own). */
async function runPoint(
  req: Extract<HostRequest, { type: 'point' }>,
  engine?: Pick<EngineSession, 'setKnobs' | 'search' | 'timedPass'>,
  overlap = concurrent,
): Promise<PointReply> {
  const s = engine ?? session!;
  const ds = dataset!;
  const n = req.queries.length;
  const threads = req.threads ?? 1;
  let threadsUsed: number[] | undefined;
  let pass: Awaited<ReturnType<typeof timedLoop>>;
  if (!engine && !overlap && threads > 1 && threadsFrom !== null && indexSaved) {
    const { perThread, ...rest } = await threadedPass(req, threads);
    pass = rest;
    threadsUsed = perThread;
  } else {
    await s.setKnobs(req.knobs);
    const vectors = queryVectors(ds, req.queries);
    const clients = overlap ? Math.max(1, Math.min(req.clients, n)) : 1;
    const request = (i: number) => ({ vector: vectors[i], k: req.k, filter: req.filters[i] });
    // A session whose engine runs in another process times its searches there (timedPass).
    pass = s.timedPass
      ? await s.timedPass(
          Array.from({ length: n }, (_, i) => request(i)),
          clients,
        )
      : await timedLoop((i) => s.search(request(i)), n, clients);
  }
  const { results, latenciesMs, errors, wallS } = pass;
  const digests = new Uint32Array(n);
  for (let i = 0; i < n; i++) digests[i] = digestOf(results[i]);
  const offsets = new Int32Array(n + 1);
  const ids = packIds(results, offsets, req.ids !== false);
  return { ids, offsets, latenciesMs, wallS, errors, digests, ...(threadsUsed ? { threadsUsed } : {}) };
}

/** Time limit of the between-load probe: an engine that cannot answer yet may block. */
const PROBE_LIMIT_MS = 60_000;

async function probeBetween(probe: { knobs: Knobs; k: number; queries: number[] }): Promise<{ reply: PointReply | null; error: string | null }> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${PROBE_LIMIT_MS / 1000}s`)), PROBE_LIMIT_MS);
  });
  try {
    const reply = await Promise.race([
      runPoint({ type: 'point', knobs: probe.knobs, k: probe.k, queries: probe.queries, filters: probe.queries.map(() => null), clients: 1 }),
      limit,
    ]);
    const failed = reply.errors.find((e) => e !== null);
    return { reply, error: failed ?? null };
  } catch (e) {
    return { reply: null, error: (e as Error).message ?? String(e) };
  } finally {
    clearTimeout(timer);
  }
}

type CoreRequest = Exclude<HostRequest, FeatureRequest>;
type CoreHandlers = { [T in CoreRequest['type']]: (req: Extract<CoreRequest, { type: T }>) => Promise<HostReply> };

/** The measurement's own messages. */
const core: CoreHandlers = {
  dataset: async (req) => {
    await loadParticipant(req.participant, req.settingsPath);
    if (dataset?.name !== req.dataset) dataset = await loadDataset(req.dataDir, req.dataset, { verify: false });
    return { type: 'dataset' };
  },
  open: async (req) => {
    const p = await loadParticipant(req.participant, req.settingsPath);
    if (dataset?.name !== req.dataset) dataset = await loadDataset(req.dataDir, req.dataset, { verify: false });
    await closeThreads();
    concurrent = p.adapter.concurrentSearch;
    workDir = req.workDir;
    const inThreads = p.adapter.reopenInThreads;
    threadsFrom =
      inThreads && !concurrent && p.adapter.reopen
        ? {
            participant: req.participant,
            settingsPath: req.settingsPath,
            dataDir: req.dataDir,
            dataset: req.dataset,
            workDir: req.workDir,
            maxConcurrency: req.maxConcurrency,
            copyWorkDir: inThreads === 'copy',
          }
        : null;
    if (threadsFrom?.copyWorkDir) SearchThreads.removeCopies(req.workDir);
    indexSaved = false;
    const ctx = {
      dataset: { name: dataset.name, n: dataset.n, d: dataset.d, metric: dataset.metric, hasText: dataset.text !== undefined },
      settings: p.index,
      workDir: req.workDir,
      maxConcurrency: req.maxConcurrency,
      log: (m: string) => process.stderr.write(`[${req.participant}] ${m}\n`),
      server: req.server,
    };
    if (req.reopen && !p.adapter.reopen) throw new Error(`participant ${req.participant} cannot reopen its data (no reopen in its adapter)`);
    const t0 = performance.now();
    session = checkedSession(p, req.reopen ? await p.adapter.reopen!(ctx) : await p.adapter.open(ctx));
    const openS = (performance.now() - t0) / 1000;
    indexSaved = req.reopen === true;
    return { type: 'opened', engineVersion: await p.adapter.engineVersion(), openS };
  },
  load: async (req) => {
    await closeThreads();
    indexSaved = false;
    const ds = dataset!;
    const t0 = performance.now();
    for (let from = 0; from < ds.n; from += req.batchSize) {
      const to = Math.min(ds.n, from + req.batchSize);
      await session!.ingest(rowsOf(ds, from, to));
      send({ id: -1, progress: { what: 'ingest', done: to, total: ds.n } });
    }
    const t1 = performance.now();
    // The probe runs outside both timings: does the engine answer before its index is built?
    const probe = req.probe ? await probeBetween(req.probe) : undefined;
    const t2 = performance.now();
    await session!.buildIndex();
    const t3 = performance.now();
    indexSaved = true;
    return { type: 'loaded', ingestS: (t1 - t0) / 1000, indexS: (t3 - t2) / 1000, rows: ds.n, probe };
  },
  point: async (req) => ({ type: 'point', reply: await runPoint(req) }),
  'null-pass': async (req) => ({
    type: 'null-pass',
    reply: await runPoint(
      { type: 'point', knobs: {}, k: req.k, queries: req.queries, filters: req.queries.map(() => null), clients: req.clients },
      session?.nullPath?.() ?? nullSession(req.k),
      true,
    ),
  }),
  explain: async (req) => {
    const s = session!;
    if (!s.explain && !s.strategy) return { type: 'explained', plan: null, planError: null, strategy: null };
    await s.setKnobs(req.knobs);
    const ds = dataset!;
    const request = { vector: ds.queries.slice(req.query * ds.d, (req.query + 1) * ds.d), k: req.k, filter: req.filter };
    const plan = s.explain ? await s.explain(request) : null;
    let planError: string | null = null;
    try {
      if (plan !== null) s.checkPlan?.(plan, request);
    } catch (e) {
      planError = (e as Error).message;
    }
    return { type: 'explained', plan, planError, strategy: s.strategy?.(request, plan) ?? null };
  },
  disk: async () => ({ type: 'disk', bytes: session?.diskBytes ? await session.diskBytes() : null }),
  close: async () => {
    await closeThreads();
    await session?.close();
    session = null;
    return { type: 'closed' };
  },
};

/** What a feature's handler may use of the host. */
const state: HostState = {
  get session() {
    return session;
  },
  get dataset() {
    return dataset;
  },
  get concurrent() {
    return concurrent;
  },
  progress: (p) => send({ id: -1, progress: p }),
  indexChanging: async () => {
    // A write leaves the threads' copies stale and the saved index behind the session.
    await closeThreads();
    indexSaved = false;
  },
};

/** Routes each message type to its handler: the host's own, or the feature that declared it. */
function router(features: readonly HostFeature[]): (req: HostRequest) => Promise<HostReply> {
  const byType = new Map<string, (req: HostRequest) => Promise<HostReply>>();
  for (const [type, handler] of Object.entries(core)) byType.set(type, handler as (req: HostRequest) => Promise<HostReply>);
  for (const f of features) {
    for (const type of f.types) {
      if (byType.has(type)) throw new Error(`host feature ${f.name} declares message ${type}, which is already handled`);
      byType.set(type, (req) => f.handle(state, req as FeatureRequest));
    }
  }
  return (req) => {
    const handler = byType.get(req.type);
    if (!handler) return Promise.reject(new Error(`the participant host has no handler for a ${req.type} message`));
    return handler(req);
  };
}

/** Serves the runner's requests over IPC until the channel closes. */
export function serveHost(features: readonly HostFeature[]): void {
  // The host prints engine log lines and errors: credentials are masked there too.
  redactStandardStreams();
  const handle = router(features);
  process.on('message', (raw) => {
    const { id, req } = raw as { id: number; req: HostRequest };
    handle(req).then(
      (reply) => {
        send({ id, ok: true, reply });
        if (reply.type === 'closed') setImmediate(() => process.exit(0));
      },
      (e: unknown) => {
        // A full disk under the engine's data is the user's to fix, not an engine failure.
        const full = diskFullError(e, workDir === null ? undefined : `the engine's data in ${workDir}`);
        const err = full ?? e;
        send({ id, ok: false, error: err instanceof Error ? err.message : String(err), userError: err instanceof UserError });
      },
    );
  });
  // The host never outlives the runner: when the IPC channel closes, it exits.
  process.on('disconnect', () => process.exit(0));
}
