// The churn routines inside a participant's host process (or in-process for tests): loading a
// row range, batched writes, compaction, timed searches, and the freshness and mixed routines,
// which must run next to the engine so no message passing enters a latency.
import { packIds, timedLoop } from '../runner/timed-loop.ts';
import { ATTRIBUTES, type EngineSession, type RowAttributes, type RowBatch } from '../contracts.ts';
import type { Dataset } from '../datasets/layout.ts';
import type { PointReply } from '../runner/point-reply.ts';
import { hostFeature } from '../runner/feature.ts';
import type { ChurnCaps, ChurnHostReply, ChurnHostRequest, FreshnessReply, MixedReply, WireRows, WriteOp } from './protocol.ts';

type ProgressFn = (p: { what: string; done: number; total: number }) => void;

/** Lets timers and I/O run between calls: a synchronous engine's searches would otherwise
 * keep the event loop in microtasks and starve the writer's timer. */
const yieldLoop = () => new Promise<void>((r) => setImmediate(r));
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

export function capsOf(s: EngineSession): ChurnCaps {
  return {
    insert: typeof s.insert === 'function',
    upsert: typeof s.upsert === 'function',
    delete: typeof s.delete === 'function',
    compact: typeof s.compact === 'function',
    disk: typeof s.diskBytes === 'function',
  };
}

function baseRows(ds: Dataset, ids: Int32Array): RowBatch {
  const d = ds.d;
  const vectors = new Float32Array(ids.length * d);
  ids.forEach((id, i) => {
    if (id < 0 || id >= ds.n) throw new Error(`churn: base row ${id} is not a row of ${ds.name}`);
    vectors.set(ds.base.subarray(id * d, (id + 1) * d), i * d);
  });
  const attrs = Object.fromEntries(ATTRIBUTES.map((a) => [a, Int32Array.from(ids, (id) => ds.attrs[a][id])])) as RowAttributes;
  return { ids, vectors, attrs };
}

/** Rows [from, to) of a wire batch as a RowBatch of their own (fresh arrays). */
function sliceRows(ds: Dataset, rows: WireRows, from: number, to: number): RowBatch {
  const ids = rows.ids.slice(from, to);
  if (!rows.vectors || !rows.attrs) return baseRows(ds, ids);
  const attrs = Object.fromEntries(ATTRIBUTES.map((a) => [a, rows.attrs![a].slice(from, to)])) as RowAttributes;
  return { ids, vectors: rows.vectors.slice(from * ds.d, to * ds.d), attrs };
}

async function applyWrite(s: EngineSession, op: WriteOp, batch: RowBatch): Promise<void> {
  if (op === 'delete') return s.delete!(batch.ids);
  if (op === 'upsert') return s.upsert!(batch);
  return s.insert!(batch);
}

function requireOp(s: EngineSession, op: WriteOp): void {
  if (typeof s[op] !== 'function') throw new Error(`churn: the participant has no ${op}()`);
}

/** Each query once with `clients` in flight, timed beside the engine. */
async function timedSearches(
  s: EngineSession,
  ds: Dataset,
  concurrent: boolean,
  req: Extract<ChurnHostRequest, { type: 'churn-search' }>,
): Promise<PointReply> {
  await s.setKnobs(req.knobs);
  const n = req.queries.length;
  const vectors = req.queries.map((q) => ds.queries.slice(q * ds.d, (q + 1) * ds.d));
  const clients = concurrent ? Math.max(1, Math.min(req.clients, n)) : 1;
  const { results, latenciesMs, errors, wallS } = await timedLoop((i) => s.search({ vector: vectors[i], k: req.k, filter: req.filters[i] }), n, clients);
  const offsets = new Int32Array(n + 1);
  return { ids: packIds(results, offsets, true), offsets, latenciesMs, wallS, errors };
}

/** Single-row inserts; after each, searches for the row's own vector until the id is among the
 * first k hits (visible) or the timeout passes (never visible). */
async function freshness(
  s: EngineSession,
  ds: Dataset,
  req: Extract<ChurnHostRequest, { type: 'churn-freshness' }>,
  progress?: ProgressFn,
): Promise<FreshnessReply> {
  requireOp(s, 'insert');
  await s.setKnobs(req.knobs);
  const m = req.rows.ids.length;
  const ackMs = new Float64Array(m).fill(NaN);
  const visibleMs = new Float64Array(m).fill(NaN);
  const polls = new Int32Array(m);
  const errors: (string | null)[] = new Array(m).fill(null);
  const tombstones = new Set(req.tombstones);
  const leaks: { id: number; write: number }[] = [];
  const leaked = new Set<number>();
  let applied = 0;
  let missedInARow = 0;
  let gaveUp = false;
  for (let i = 0; i < m; i++) {
    const row = sliceRows(ds, req.rows, i, i + 1);
    const id = row.ids[0];
    const vector = row.vectors.slice();
    applied = i + 1;
    const t0 = performance.now();
    try {
      await s.insert!(row);
    } catch (e) {
      errors[i] = message(e);
      continue;
    }
    const t1 = performance.now();
    ackMs[i] = t1 - t0;
    for (;;) {
      let hits: ArrayLike<number> = [];
      try {
        hits = await s.search({ vector, k: req.k, filter: null });
      } catch (e) {
        errors[i] ??= `search: ${message(e)}`;
      }
      const now = performance.now();
      polls[i]++;
      let seen = false;
      for (let j = 0; j < hits.length; j++) {
        const h = hits[j];
        if (h === id && j < req.k) seen = true;
        if (tombstones.has(h) && !leaked.has(h)) {
          leaked.add(h);
          leaks.push({ id: h, write: i });
        }
      }
      if (seen) {
        visibleMs[i] = now - t1;
        break;
      }
      if (now - t1 >= req.timeoutMs) break;
      await yieldLoop();
    }
    missedInARow = Number.isNaN(visibleMs[i]) ? missedInARow + 1 : 0;
    progress?.({ what: 'freshness', done: i + 1, total: m });
    if (missedInARow >= req.giveUpAfter) {
      gaveUp = true;
      break;
    }
    await yieldLoop();
  }
  return {
    applied,
    ackMs: ackMs.slice(0, applied),
    visibleMs: visibleMs.slice(0, applied),
    polls: polls.slice(0, applied),
    errors: errors.slice(0, applied),
    leaks,
    gaveUp,
  };
}

/** One writer issuing the plan's ops at the target rate and `readers` loops searching the
 * query list, for durationS. Every read records how many writes were acknowledged when it
 * started and how many were issued when it ended, so the runner can judge it against the rows
 * live at that moment. A writer that falls behind issues its next op at once, so the achieved
 * rate falls short of the target only when writes take longer than 1 / rate on average. */
async function mixed(
  s: EngineSession,
  ds: Dataset,
  concurrent: boolean,
  req: Extract<ChurnHostRequest, { type: 'churn-mixed' }>,
  progress?: ProgressFn,
): Promise<MixedReply> {
  const { plan } = req;
  const W = plan.ops.length;
  for (const code of new Set(plan.ops)) requireOp(s, (['insert', 'upsert', 'delete'] as const)[code]);
  await s.setKnobs(req.knobs);
  const writeStartMs = new Float64Array(W).fill(NaN);
  const writeAckMs = new Float64Array(W).fill(NaN);
  const writeErrors: (string | null)[] = new Array(W).fill(null);
  const nq = req.queries.length;
  const vectors = req.queries.map((q) => ds.queries.slice(q * ds.d, (q + 1) * ds.d));
  const pos: number[] = [];
  const startMs: number[] = [];
  const endMs: number[] = [];
  const ackedAt: number[] = [];
  const issuedAt: number[] = [];
  const failed: number[] = [];
  const ids: number[] = [];
  const offsets: number[] = [0];
  let firstReadError: string | null = null;
  let acked = 0;
  let issued = 0;
  const t0 = performance.now();
  const end = t0 + req.durationS * 1000;
  const interval = 1000 / req.rate;

  const writer = async () => {
    for (let i = 0; i < W; i++) {
      const due = t0 + i * interval;
      if (due >= end) return;
      const wait = due - performance.now();
      // A writer behind schedule still yields once per op: an engine whose calls resolve in
      // microtasks (WASM, synchronous native code) would otherwise starve the readers.
      if (wait > 0) await sleep(wait);
      else await yieldLoop();
      const start = performance.now();
      if (start >= end) return;
      const op = (['insert', 'upsert', 'delete'] as const)[plan.ops[i]];
      const batch = op === 'delete' ? { ids: plan.ids.slice(i, i + 1), vectors: new Float32Array(0), attrs: emptyAttrs() } : sliceRows(ds, plan, i, i + 1);
      issued = i + 1;
      writeStartMs[i] = start - t0;
      try {
        await applyWrite(s, op, batch);
      } catch (e) {
        writeErrors[i] = message(e);
      }
      writeAckMs[i] = performance.now() - t0;
      acked = i + 1;
    }
  };

  let next = 0;
  const reader = async () => {
    for (;;) {
      const ts = performance.now();
      if (ts >= end) return;
      const p = next++ % nq;
      const a = acked;
      let hits: ArrayLike<number> = [];
      let bad = 0;
      try {
        hits = await s.search({ vector: vectors[p], k: req.k, filter: req.filters[p] });
      } catch (e) {
        bad = 1;
        firstReadError ??= message(e);
      }
      const te = performance.now();
      pos.push(p);
      startMs.push(ts - t0);
      endMs.push(te - t0);
      ackedAt.push(a);
      issuedAt.push(issued);
      failed.push(bad);
      for (let j = 0; j < hits.length; j++) ids.push(Number.isInteger(hits[j]) ? hits[j] : -2);
      offsets.push(ids.length);
      await yieldLoop();
    }
  };

  const readersUsed = concurrent ? req.readers : 1;
  const total = Math.ceil(req.durationS);
  const ticker = setInterval(
    () => progress?.({ what: 'reads under writes (s)', done: Math.min(total, Math.round((performance.now() - t0) / 1000)), total }),
    1000,
  );
  try {
    await Promise.all([writer(), ...Array.from({ length: readersUsed }, reader)]);
  } finally {
    clearInterval(ticker);
  }
  const wallS = (performance.now() - t0) / 1000;
  return {
    wallS,
    issued,
    writeStartMs: writeStartMs.slice(0, issued),
    writeAckMs: writeAckMs.slice(0, issued),
    writeErrors: writeErrors.slice(0, issued),
    readersUsed,
    reads: {
      pos: Int32Array.from(pos),
      startMs: Float64Array.from(startMs),
      endMs: Float64Array.from(endMs),
      acked: Int32Array.from(ackedAt),
      issuedAtEnd: Int32Array.from(issuedAt),
      ids: Int32Array.from(ids),
      offsets: Int32Array.from(offsets),
      failed: Uint8Array.from(failed),
    },
    firstReadError,
  };
}

function emptyAttrs(): RowAttributes {
  return Object.fromEntries(ATTRIBUTES.map((a) => [a, new Int32Array(0)])) as RowAttributes;
}

export async function handleChurn(s: EngineSession, ds: Dataset, concurrent: boolean, req: ChurnHostRequest, progress?: ProgressFn): Promise<ChurnHostReply> {
  switch (req.type) {
    case 'churn-caps':
      return { type: 'churn-caps', caps: capsOf(s) };
    case 'churn-load': {
      const t0 = performance.now();
      for (let from = req.from; from < req.to; from += req.batchSize) {
        const to = Math.min(req.to, from + req.batchSize);
        const ids = new Int32Array(to - from);
        for (let i = 0; i < ids.length; i++) ids[i] = from + i;
        await s.ingest(baseRows(ds, ids));
        progress?.({ what: 'ingest', done: to - req.from, total: req.to - req.from });
      }
      const t1 = performance.now();
      await s.buildIndex();
      const t2 = performance.now();
      return { type: 'churn-loaded', ingestS: (t1 - t0) / 1000, indexS: (t2 - t1) / 1000, rows: req.to - req.from };
    }
    case 'churn-write': {
      requireOp(s, req.op);
      const total = req.rows.ids.length;
      let batches = 0;
      const t0 = performance.now();
      for (let from = 0; from < total; from += req.batchSize) {
        const to = Math.min(total, from + req.batchSize);
        await applyWrite(
          s,
          req.op,
          req.op === 'delete' ? { ids: req.rows.ids.slice(from, to), vectors: new Float32Array(0), attrs: emptyAttrs() } : sliceRows(ds, req.rows, from, to),
        );
        batches++;
        progress?.({ what: req.op, done: to, total });
      }
      return { type: 'churn-written', durationS: (performance.now() - t0) / 1000, batches };
    }
    case 'churn-compact': {
      if (!s.compact) return { type: 'churn-compacted', durationS: null };
      const t0 = performance.now();
      await s.compact();
      return { type: 'churn-compacted', durationS: (performance.now() - t0) / 1000 };
    }
    case 'churn-disk':
      return { type: 'churn-disk', bytes: s.diskBytes ? await s.diskBytes() : null };
    case 'churn-search':
      return { type: 'churn-searched', reply: await timedSearches(s, ds, concurrent, req) };
    case 'churn-freshness':
      return { type: 'churn-freshness', reply: await freshness(s, ds, req, progress) };
    case 'churn-mixed':
      return { type: 'churn-mixed', reply: await mixed(s, ds, concurrent, req, progress) };
  }
}

/** Churn's messages in the participant host. Its writes change the index under the search
 * threads' copies and the saved work directory: the host is told before each. */
export const churnHost = hostFeature<ChurnHostRequest>(
  'churn',
  {
    'churn-caps': true,
    'churn-load': true,
    'churn-write': true,
    'churn-compact': true,
    'churn-disk': true,
    'churn-search': true,
    'churn-freshness': true,
    'churn-mixed': true,
  },
  async (state, req) => {
    if (req.type !== 'churn-caps' && req.type !== 'churn-disk' && req.type !== 'churn-search') await state.indexChanging();
    return handleChurn(state.session!, state.dataset!, state.concurrent, req, state.progress);
  },
);
