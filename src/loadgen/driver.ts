// The two request loops of the load generator, independent of where they run (a participant
// host's main thread for in-process engines, a worker thread for network engines) and of the
// engine: `search(i)` issues request i.
//
// - Closed loop: `inFlight` logical clients, each sending its next request when its previous
//   one returns. Latency is measured from the send.
// - Open loop: request i is due at start + intended[i], whatever happened before. Latency is
//   measured from that intended time, never from the actual send, so when the engine (or a
//   synchronous engine blocking this thread) stalls, every request that should have gone out
//   during the stall carries the wait in its latency. `sendLag` records how late each request
//   actually left: for a client thread of its own, a large lag means the client fell behind.
import { nowMs } from './clock.ts';
import { LatencyHistogram } from './histogram.ts';
import { packIds } from '../runner/timed-loop.ts';

type SearchFn = (i: number) => Promise<ArrayLike<number>> | ArrayLike<number>;

/** Request outcome codes in DriveResult.status. */
export const OK = 0;
const FAILED = 1;
const TIMED_OUT = 2;

export interface DriveResult {
  /** Request indices this loop handled (all of 0..n-1 unless a pool split them). */
  indices: Int32Array;
  /** Per handled request, in `indices` order. */
  latenciesMs: Float64Array;
  sendLagMs: Float64Array;
  status: Uint8Array;
  /** Returned ids; request indices[j] owns ids[offsets[j]..offsets[j+1]). */
  ids: Int32Array;
  offsets: Int32Array;
  errors: number;
  timeouts: number;
  firstError: string | null;
  /** Encoded HDR histogram of the successful requests' latencies. */
  histogram: string;
  /** First send to last completion, in ms on the shared clock. */
  startMs: number;
  endMs: number;
}

interface Recorder {
  record(i: number, latencyMs: number, lagMs: number, status: number, ids: ArrayLike<number> | null, error: string | null): void;
  finish(startMs: number, endMs: number): DriveResult;
}

function recorder(capacity: number): Recorder {
  const indices: number[] = [];
  const lat: number[] = [];
  const lag: number[] = [];
  const status: number[] = [];
  const idLists: (ArrayLike<number> | null)[] = [];
  const hist = new LatencyHistogram();
  let errors = 0;
  let timeouts = 0;
  let firstError: string | null = null;
  void capacity;
  return {
    record(i, latencyMs, lagMs, st, ids, error) {
      indices.push(i);
      lat.push(latencyMs);
      lag.push(lagMs);
      status.push(st);
      idLists.push(ids);
      if (st === OK) hist.recordMs(latencyMs);
      else if (st === TIMED_OUT) timeouts++;
      else errors++;
      if (error !== null && firstError === null) firstError = error;
    },
    finish(startMs, endMs) {
      // The runner's one range check: a non-integer or an id past int32 (2^32 + id would wrap
      // to a real id) is stored as an id no dataset has, counted as unknown.
      const offsets = new Int32Array(indices.length + 1);
      const ids = packIds(idLists, offsets, true);
      return {
        indices: Int32Array.from(indices),
        latenciesMs: Float64Array.from(lat),
        sendLagMs: Float64Array.from(lag),
        status: Uint8Array.from(status),
        ids,
        offsets,
        errors,
        timeouts,
        firstError,
        histogram: hist.encode(),
        startMs,
        endMs,
      };
    },
  };
}

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** Outcome of one request: OK with its ids, FAILED with its error, or TIMED_OUT. */
type Done = (j: number, sentMs: number, status: number, ids: ArrayLike<number> | null, error: string | null) => void;

interface Pending {
  j: number;
  sentMs: number;
  settled: boolean;
}

/**
 * Sends requests and reports each outcome exactly once. The per-request cost is one `then` on the
 * search's promise: time limits are enforced by one watchdog timer for all outstanding requests
 * (a timer and a Promise.race per request cost more client time than a fast engine's answer
 * takes to parse). A request past its limit is reported TIMED_OUT when the watchdog sees it
 * (at most a twentieth of the limit late) and its answer, if it comes, is ignored.
 */
class Issuer {
  private readonly live = new Set<Pending>();
  private watchdog: NodeJS.Timeout | null = null;

  constructor(
    private readonly search: SearchFn,
    private readonly timeoutMs: number,
    private readonly done: Done,
  ) {}

  issue(j: number): void {
    const p: Pending = { j, sentMs: nowMs(), settled: false };
    let r: Promise<ArrayLike<number>> | ArrayLike<number>;
    try {
      r = this.search(j);
    } catch (e) {
      // Reported on a later turn: a caller that sends its next request from `done` must not
      // recurse once per synchronous failure.
      queueMicrotask(() => this.settle(p, FAILED, null, message(e)));
      return;
    }
    if (typeof (r as Promise<ArrayLike<number>>).then !== 'function') {
      queueMicrotask(() => this.settle(p, OK, r as ArrayLike<number>, null));
      return;
    }
    if (Number.isFinite(this.timeoutMs)) {
      this.live.add(p);
      this.watchdog ??= setInterval(() => this.expire(), Math.min(1000, Math.max(1, this.timeoutMs / 20)));
    }
    (r as Promise<ArrayLike<number>>).then(
      (ids) => this.settle(p, OK, ids, null),
      (e: unknown) => this.settle(p, FAILED, null, message(e)),
    );
  }

  private settle(p: Pending, status: number, ids: ArrayLike<number> | null, error: string | null): void {
    if (p.settled) return;
    p.settled = true;
    this.live.delete(p);
    this.done(p.j, p.sentMs, status, ids, error);
  }

  private expire(): void {
    const now = nowMs();
    for (const p of this.live) if (now - p.sentMs >= this.timeoutMs) this.settle(p, TIMED_OUT, null, `no answer within ${this.timeoutMs} ms`);
  }

  stop(): void {
    if (this.watchdog) clearInterval(this.watchdog);
    this.watchdog = null;
  }
}

interface ClosedLoopOptions {
  inFlight: number;
  timeoutMs: number;
  /** Hands out the next request index, or -1 when none is left (default: 0..n-1 in order; a
   * worker pool shares one atomic counter instead). */
  next?: () => number;
  n: number;
}

/** Closed loop: `inFlight` clients, each sending its next request when the previous returns. */
export function closedLoop(search: SearchFn, o: ClosedLoopOptions): Promise<DriveResult> {
  const rec = recorder(o.n);
  let counter = 0;
  const next = o.next ?? (() => (counter < o.n ? counter++ : -1));
  return new Promise((resolve) => {
    const clients = Math.max(1, o.inFlight);
    let running = clients;
    const start = nowMs();
    const issuer = new Issuer(search, o.timeoutMs, (i, sentMs, status, ids, error) => {
      rec.record(i, nowMs() - sentMs, 0, status, ids, error);
      send();
    });
    // One logical client: its next request, or it stops when none is left.
    const send = () => {
      const i = next();
      if (i >= 0) issuer.issue(i);
      else if (--running === 0) {
        issuer.stop();
        resolve(rec.finish(start, nowMs()));
      }
    };
    for (let c = 0; c < clients; c++) send();
  });
}

interface OpenLoopOptions {
  /** Request indices this loop sends, and their intended send times (ms after startAtMs). */
  indices: ArrayLike<number>;
  intendedMs: ArrayLike<number>;
  /** On the shared clock (clock.ts nowMs). */
  startAtMs: number;
  /** Requests outstanding at once; the rest wait in a queue (their wait is in their latency).
   * 1 for an engine whose searches cannot overlap. */
  maxInFlight: number;
  timeoutMs: number;
}

/** Open loop: request j is due at startAtMs + intendedMs[j]; its latency runs from then. */
export function openLoop(search: SearchFn, o: OpenLoopOptions): Promise<DriveResult> {
  const n = o.indices.length;
  const rec = recorder(n);
  const queue = new Int32Array(n);
  let qHead = 0;
  let qTail = 0;
  let due = 0; // next j not yet due
  let inFlight = 0;
  let completed = 0;
  let firstSend = Infinity;
  return new Promise((resolve) => {
    const issuer = new Issuer(
      (j) => search(o.indices[j]),
      o.timeoutMs,
      (j, sentMs, status, ids, error) => {
        const intended = o.startAtMs + o.intendedMs[j];
        rec.record(o.indices[j], nowMs() - intended, sentMs - intended, status, ids, error);
        inFlight--;
        completed++;
        if (qHead < qTail) launch(queue[qHead++]);
        if (completed === n) {
          issuer.stop();
          resolve(rec.finish(Number.isFinite(firstSend) ? firstSend : o.startAtMs, nowMs()));
        }
      },
    );
    const launch = (j: number) => {
      inFlight++;
      const sent = nowMs();
      if (sent < firstSend) firstSend = sent;
      issuer.issue(j);
    };
    const pump = () => {
      const now = nowMs();
      while (due < n && o.startAtMs + o.intendedMs[due] <= now) {
        const j = due++;
        if (inFlight < o.maxInFlight) launch(j);
        else queue[qTail++] = j;
      }
      if (due >= n) return;
      const wait = o.startAtMs + o.intendedMs[due] - nowMs();
      // Timers are good to about a millisecond; closer than that, poll on the next turn.
      if (wait > 1.5) setTimeout(pump, wait - 1);
      else setImmediate(pump);
    };
    if (n === 0) resolve(rec.finish(o.startAtMs, o.startAtMs));
    else pump();
  });
}
