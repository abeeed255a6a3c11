// The load generator inside a participant's host process. An in-process engine is driven by the
// host's own event loop (the engine's session lives here); a network engine whose session offers
// loadClient() is driven from worker threads that each build their own client, so the host's
// single thread never caps the rate. Either way latencies are taken beside the engine.
import type { EngineSession } from '../contracts.ts';
import type { Dataset } from '../datasets/layout.ts';
import { hostFeature } from '../runner/feature.ts';
import { nowMs } from './clock.ts';
import { closedLoop, openLoop, type DriveResult } from './driver.ts';
import { loadClientProtocol, mergeResults, WorkerPool } from './pool.ts';
import type { LoadgenHostReply, LoadgenHostRequest, LoadReply } from './protocol.ts';

let pool: WorkerPool | null = null;
let poolClient = '';

/** Open-loop requests outstanding at once when the engine's searches overlap: effectively
 * unbounded (arrivals beyond it queue in the client, and the wait counts in their latency). */
const OPEN_MAX_IN_FLIGHT = 4096;

function single(n: number, r: DriveResult): LoadReply {
  return mergeResults(n, [r]);
}

/** The null engine of the in-process ceiling: answers every search at once with k fixed ids. */
function nullSearch(k: number): () => Promise<Int32Array> {
  const ids = Int32Array.from({ length: k }, (_, i) => i);
  return async () => ids;
}

async function handleLoadgen(session: EngineSession | null, ds: Dataset | null, concurrent: boolean, req: LoadgenHostRequest): Promise<LoadgenHostReply> {
  switch (req.type) {
    case 'loadgen-init': {
      const s = session!;
      if (pool) {
        await pool.close();
        pool = null;
      }
      const spec = s.loadClient?.();
      if (!spec)
        return { type: 'loadgen-ready', mode: 'in-process', workers: 0, client: 'the host event loop (in-process engine)', concurrent, protocol: null };
      const protocol = await loadClientProtocol(spec);
      pool = await WorkerPool.start(spec, req.workers, req.maxInFlight, ds!.queries, ds!.d);
      poolClient = spec.module;
      return { type: 'loadgen-ready', mode: 'workers', workers: pool.size, client: poolClient, concurrent, protocol, spec };
    }
    case 'loadgen-closed': {
      const s = session!;
      const d = ds!;
      await s.setKnobs(req.knobs);
      if (pool) {
        await pool.setKnobs(req.knobs);
        return { type: 'loadgen-result', reply: await pool.closed(req.k, req.queries, req.filters, req.inFlight, req.timeoutMs) };
      }
      const vectors = req.queries.map((q) => d.queries.slice(q * d.d, (q + 1) * d.d));
      const inFlight = concurrent ? req.inFlight : 1;
      const r = await closedLoop((i) => s.search({ vector: vectors[i], k: req.k, filter: req.filters[i] }), {
        inFlight,
        timeoutMs: req.timeoutMs,
        n: vectors.length,
      });
      return { type: 'loadgen-result', reply: single(vectors.length, r) };
    }
    case 'loadgen-open': {
      const s = session!;
      const d = ds!;
      await s.setKnobs(req.knobs);
      if (pool) {
        await pool.setKnobs(req.knobs);
        return { type: 'loadgen-result', reply: await pool.open(req.k, req.queries, req.filters, req.intendedMs, OPEN_MAX_IN_FLIGHT, req.timeoutMs) };
      }
      const vectors = req.queries.map((q) => d.queries.slice(q * d.d, (q + 1) * d.d));
      const indices = Int32Array.from(vectors, (_, i) => i);
      const r = await openLoop((i) => s.search({ vector: vectors[i], k: req.k, filter: req.filters[i] }), {
        indices,
        intendedMs: req.intendedMs,
        startAtMs: nowMs() + 5,
        // An engine whose searches cannot overlap serves one at a time; the rest queue.
        maxInFlight: concurrent ? OPEN_MAX_IN_FLIGHT : 1,
        timeoutMs: req.timeoutMs,
      });
      return { type: 'loadgen-result', reply: single(vectors.length, r) };
    }
    case 'loadgen-ceiling': {
      const r = await closedLoop(nullSearch(req.k), { inFlight: req.inFlight, timeoutMs: Infinity, n: req.requests });
      return { type: 'loadgen-result', reply: single(req.requests, r) };
    }
    case 'loadgen-knobs':
      await session!.setKnobs(req.knobs);
      return { type: 'loadgen-knobs-set' };
    case 'loadgen-stop':
      await pool?.close();
      pool = null;
      return { type: 'loadgen-stopped' };
  }
}

/** The load generator's messages in the participant host. */
export const loadgenHost = hostFeature<LoadgenHostRequest>(
  'loadgen',
  {
    'loadgen-init': true,
    'loadgen-closed': true,
    'loadgen-open': true,
    'loadgen-ceiling': true,
    'loadgen-knobs': true,
    'loadgen-stop': true,
  },
  (state, req) => handleLoadgen(state.session, state.dataset, state.concurrent, req),
);
