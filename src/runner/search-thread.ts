// One search thread (search-threads.ts): loads the participant, reopens the index its host's
// session saved (Participant.reopen) and, per pass, answers the queries it takes from the
// counter all threads share, timing each search here, next to the engine.
import { parentPort } from 'node:worker_threads';
import type { EngineSession, SearchRequest } from '../contracts.ts';
import { UserError } from '../util/errors.ts';
import { checkedSession, loadParticipant } from './participants.ts';
import { packIds } from './timed-loop.ts';
import { CONTROL, GO_ABORT, GO_RUN, GO_WAIT, type PassResult, type ThreadReply, type ThreadRequest } from './search-threads.ts';

const port = parentPort!;
/** Queries a thread takes at once from a session with timedPass. */
const TIMED_CHUNK = 32;
let session: EngineSession | null = null;
/** The host's query vectors (nq x d), shared with it and the other threads. */
let queries: Float32Array | null = null;
let d = 0;
/** The requests of the last pass's query list, so repeated passes over one list copy nothing. */
let prepared: { k: number; queries: Int32Array; filters: string; requests: SearchRequest[] } | null = null;

/** One request per query, built before the clock starts. Each vector is a fresh copy, as the
 * host's own loop gives the engine (an engine may assume a vector starts its buffer). */
function requestsOf(m: Extract<ThreadRequest, { type: 'pass' }>): SearchRequest[] {
  const filters = JSON.stringify(m.filters);
  const p = prepared;
  if (p && p.k === m.k && p.filters === filters && p.queries.length === m.queries.length && p.queries.every((q, i) => q === m.queries[i])) return p.requests;
  const requests = Array.from(m.queries, (q, i) => ({ vector: queries!.slice(q * d, (q + 1) * d), k: m.k, filter: m.filters[i] }));
  prepared = { k: m.k, queries: m.queries, filters, requests };
  return requests;
}

async function pass(m: Extract<ThreadRequest, { type: 'pass' }>): Promise<PassResult> {
  const s = session!;
  const requests = requestsOf(m);
  const n = requests.length;
  const ctl = new Int32Array(m.control, 0, 4);
  const latencies = new Float64Array(m.latencies);
  // The start barrier: the last thread to arrive notes the time and releases the others, so
  // every thread starts searching together and the wall clock starts once.
  if (Atomics.add(ctl, CONTROL.arrived, 1) + 1 === m.threads) {
    new Float64Array(m.control, CONTROL.releaseByte, 1)[0] = performance.timeOrigin + performance.now();
    Atomics.store(ctl, CONTROL.go, GO_RUN);
    Atomics.notify(ctl, CONTROL.go);
  } else {
    Atomics.wait(ctl, CONTROL.go, GO_WAIT);
  }
  if (Atomics.load(ctl, CONTROL.go) === GO_ABORT) throw new Error('the pass was aborted (another search thread failed)');
  const mine: number[] = [];
  const results: ArrayLike<number>[] = [];
  const errors: [number, string][] = [];
  // A session that times its searches in its own process takes the queries in small chunks from
  // the shared counter (so the threads still share the work), each chunk one timed pass there.
  for (const timed = s.timedPass; timed; ) {
    const from = Atomics.add(ctl, CONTROL.next, TIMED_CHUNK);
    if (from >= n) break;
    const chunk = Array.from({ length: Math.min(TIMED_CHUNK, n - from) }, (_, j) => from + j);
    const pass = await timed.call(
      s,
      chunk.map((i) => requests[i]),
      1,
    );
    chunk.forEach((i, j) => {
      latencies[i] = pass.latenciesMs[j];
      mine.push(i);
      results.push(pass.results[j]);
      if (pass.errors[j] !== null) errors.push([i, pass.errors[j]!]);
    });
  }
  for (; !s.timedPass; ) {
    const i = Atomics.add(ctl, CONTROL.next, 1);
    if (i >= n) break;
    const t0 = performance.now();
    let r: ArrayLike<number>;
    try {
      r = await s.search(requests[i]);
    } catch (e) {
      r = [];
      errors.push([i, (e as Error).message ?? String(e)]);
    }
    latencies[i] = performance.now() - t0;
    mine.push(i);
    results.push(r);
  }
  const endMs = performance.timeOrigin + performance.now();
  const offsets = new Int32Array(results.length + 1);
  // Packed here (ids checked as the host checks them), so only three buffers cross back.
  const ids = packIds(results, offsets, true);
  return { indices: Int32Array.from(mine), ids, offsets, errors, endMs };
}

async function handle(m: ThreadRequest): Promise<PassResult | undefined> {
  switch (m.type) {
    case 'open': {
      const p = await loadParticipant(m.participant, m.settingsPath);
      if (!p.adapter.reopen) throw new Error(`participant ${m.participant} has no reopen()`);
      queries = m.queries;
      d = m.dataset.d;
      session = checkedSession(
        p,
        await p.adapter.reopen({
          dataset: m.dataset,
          settings: p.index,
          workDir: m.workDir,
          maxConcurrency: m.maxConcurrency,
          log: (line: string) => process.stderr.write(`[${m.participant} search thread ${m.index}] ${line}\n`),
        }),
      );
      return undefined;
    }
    case 'knobs':
      await session!.setKnobs(m.knobs);
      return undefined;
    case 'pass':
      return pass(m);
    case 'close':
      await session?.close();
      session = null;
      return undefined;
  }
}

port.on('message', (m: ThreadRequest) => {
  handle(m).then(
    (result) => {
      const reply: ThreadReply = { ok: true, result };
      port.postMessage(reply, result ? ([result.indices.buffer, result.ids.buffer, result.offsets.buffer] as ArrayBuffer[]) : []);
      // Nothing keeps the thread alive once its port closes: it exits on its own.
      if (m.type === 'close') port.close();
    },
    (e: unknown) => port.postMessage({ ok: false, error: e instanceof Error ? e.message : String(e), userError: e instanceof UserError } satisfies ThreadReply),
  );
});
