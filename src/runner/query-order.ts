// The query order every participant and group shares, and its slices per point (docs/method.md §5).
import { makeRng } from '../util/hash.ts';

export const QUERY_SEED = 20251129;
/** Queries per point at each k (docs/method.md §5). */
export const SLICE_CAP: Record<number, number> = { 10: 1000, 100: 500, 1000: 200 };

/** The shuffled query order every participant and group uses (fixed seed). */
export function queryOrder(nq: number, seed = QUERY_SEED): Int32Array {
  const order = new Int32Array(nq);
  for (let i = 0; i < nq; i++) order[i] = i;
  const rng = makeRng(seed);
  for (let i = nq - 1; i > 0; i--) {
    const j = Math.floor(rng.uniform() * (i + 1));
    const t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  return order;
}

/** Slices for a group: one query of its own for the first-query timing, then the next
 * slice for each (ladder point, view). No query runs twice within a group while the query
 * set lasts; all participants get the same slices for the same ladder length. */
export function planSlices(nq: number, k: number, slots: number): { first: number; slices: [number, number][] } {
  const per = Math.max(1, Math.min(SLICE_CAP[k] ?? 200, Math.floor((nq - 1) / Math.max(1, slots))));
  const slices: [number, number][] = [];
  for (let s = 0; s < slots; s++) {
    const from = (1 + s * per) % nq;
    slices.push([from, from + per]);
  }
  return { first: 0, slices };
}
