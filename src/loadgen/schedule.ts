// Open-loop arrival schedules (docs/method.md §5): requests arrive at a fixed mean rate whatever the
// engine does, as independent users would. Each request's latency is measured from the time it
// was SCHEDULED to be sent, so a stall of the engine (or of the client) shows in the latency of
// every request that should have gone out during it: coordinated omission cannot hide queueing.
import { makeRng } from '../util/hash.ts';

/** Intended send times (ms from the start) of `count` Poisson arrivals at `ratePerS`: the gaps
 * are exponential with mean 1000 / rate, drawn from a seeded generator (the same schedule for
 * every participant). */
export function poissonSchedule(ratePerS: number, count: number, seed: number): Float64Array {
  if (!(ratePerS > 0) || !Number.isFinite(ratePerS)) throw new Error(`open-loop rate must be a positive number, got ${ratePerS}`);
  const rng = makeRng(seed);
  const out = new Float64Array(count);
  const meanGap = 1000 / ratePerS;
  let t = 0;
  for (let i = 0; i < count; i++) {
    // 1 - u is in (0, 1]: log never sees 0.
    t += -Math.log(1 - rng.uniform()) * meanGap;
    out[i] = t;
  }
  return out;
}

/** Requests of an open-loop step: enough for its duration at the rate, at least `min`. */
export function requestsFor(ratePerS: number, durationS: number, min: number, max: number): number {
  return Math.max(min, Math.min(max, Math.round(ratePerS * durationS)));
}
