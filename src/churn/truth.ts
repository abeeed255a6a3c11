// Ground truth over the live set: the exact top-k among the rows live at a snapshot that pass
// each query's filter, by the same exact search as the static ground truth (src/groundtruth),
// and the scoring of one read against it.
import type { FilterExpr } from '../contracts.ts';
import { filterKey } from '../datasets/groups.ts';
import { passes } from '../datasets/groups.ts';
import { exactDistance, exactTopK } from '../groundtruth/exact.ts';
import { scoreQuery, type QueryScore } from '../metrics/recall.ts';
import type { LiveStore } from './live.ts';

interface LiveTruth {
  k: number;
  /** nq x k row ids (not slots), best first; -1 padding. */
  ids: Int32Array;
  dists: Float32Array;
  /** Per query: the live rows that pass its filter. */
  matches: Int32Array;
}

interface SlotTop {
  depth: number;
  /** nq x depth slots, best first; -1 padding. */
  slots: Int32Array;
  dists: Float32Array;
  counts: Int32Array;
  matches: Int32Array;
}

/** Exact top-`depth` slots of each query among the slots live at snapshot s that pass its
 * filter. Queries that share a filter share one exact search. */
function liveTopSlots(store: LiveStore, s: number, queries: Float32Array, filters: (FilterExpr | null)[], depth: number): SlotTop {
  const nq = filters.length;
  const d = store.d;
  const slots = new Int32Array(nq * depth).fill(-1);
  const dists = new Float32Array(nq * depth).fill(Infinity);
  const counts = new Int32Array(nq);
  const matches = new Int32Array(nq);
  const byFilter = new Map<string, number[]>();
  filters.forEach((f, q) => {
    const key = filterKey(f);
    const list = byFilter.get(key);
    if (list) list.push(q);
    else byFilter.set(key, [q]);
  });
  for (const qs of byFilter.values()) {
    const rows = store.liveSlots(s, filters[qs[0]]);
    const qv = new Float32Array(qs.length * d);
    qs.forEach((q, i) => qv.set(queries.subarray(q * d, (q + 1) * d), i * d));
    const r = exactTopK({
      base: store.vectors.subarray(0, store.slots * d),
      n: store.slots,
      d,
      queries: qv,
      nq: qs.length,
      metric: store.metric,
      k: depth,
      rows,
    });
    qs.forEach((q, i) => {
      matches[q] = rows.length;
      counts[q] = r.counts[i];
      slots.set(r.ids.subarray(i * depth, i * depth + r.counts[i]), q * depth);
      dists.set(r.dists.subarray(i * depth, i * depth + r.counts[i]), q * depth);
    });
  }
  return { depth, slots, dists, counts, matches };
}

/** Exact top-k of each query (row-major nq x d) among the rows live at snapshot s. */
export function liveTruth(store: LiveStore, s: number, queries: Float32Array, filters: (FilterExpr | null)[], k: number): LiveTruth {
  const top = liveTopSlots(store, s, queries, filters, k);
  const ids = new Int32Array(top.slots.length).fill(-1);
  for (let i = 0; i < ids.length; i++) if (top.slots[i] >= 0) ids[i] = store.slotId[top.slots[i]];
  return { k, ids, dists: top.dists, matches: top.matches };
}

/**
 * Ground truth for reads under writes, each at its own snapshot, without an exact search per
 * read. Built at snapshot v0, before the writes that follow are recorded: the exact top-`depth`
 * of every query at v0 is kept. The truth at a later snapshot s is then the merge of (a) those
 * entries whose slot is still live at s and (b) every slot made after v0 that is live at s and
 * passes the filter, distances recomputed in float64 and ordered as the exact search orders
 * them. Exact as long as at least k entries of (a) survive (a slot live at v0 that is not among
 * them ranks below all of them) or (a) held every row passing the filter at v0; otherwise that
 * read falls back to an exact search at s.
 */
export class SnapshotTruth {
  private readonly top: SlotTop;
  private readonly firstNew: number;
  /** Slots live at v0 that pass each distinct filter, for the match counts at s. */
  private readonly passing = new Map<string, Int32Array>();
  fallbacks = 0;

  constructor(
    private readonly store: LiveStore,
    readonly v0: number,
    private readonly queries: Float32Array,
    private readonly filters: (FilterExpr | null)[],
    private readonly k: number,
  ) {
    this.firstNew = store.slots;
    this.top = liveTopSlots(store, v0, queries, filters, Math.max(2 * k, k + 64));
    for (const f of filters) {
      const key = filterKey(f);
      if (!this.passing.has(key)) this.passing.set(key, store.liveSlots(v0, f));
    }
  }

  /** The truth of query qi at snapshot s (>= v0), as a one-query LiveTruth. */
  at(qi: number, s: number): LiveTruth {
    const { store, top, k } = this;
    const d = store.d;
    const filter = this.filters[qi];
    const query = this.queries.subarray(qi * d, (qi + 1) * d);
    const live = (slot: number) => store.born[slot] <= s && s < store.died[slot];
    const cand: number[] = [];
    let survivors = 0;
    for (let j = 0; j < top.counts[qi]; j++) {
      const slot = top.slots[qi * top.depth + j];
      if (live(slot)) {
        cand.push(slot);
        survivors++;
      }
    }
    let matches = 0;
    for (const slot of this.passing.get(filterKey(filter))!) if (live(slot)) matches++;
    for (let slot = this.firstNew; slot < store.slots; slot++) {
      if (live(slot) && passes(filter, store.attrs, slot)) {
        cand.push(slot);
        matches++;
      }
    }
    if (survivors < k && top.counts[qi] < top.matches[qi]) {
      this.fallbacks++;
      return liveTruth(store, s, query, [filter], k);
    }
    const dist = new Map<number, number>();
    for (const slot of cand) dist.set(slot, exactDistance(store.metric, query, 0, store.vectors, slot * d, d));
    cand.sort((a, b) => dist.get(a)! - dist.get(b)! || a - b);
    const m = Math.min(k, cand.length);
    const ids = new Int32Array(k).fill(-1);
    const dists = new Float32Array(k).fill(Infinity);
    for (let j = 0; j < m; j++) {
      ids[j] = store.slotId[cand[j]];
      dists[j] = dist.get(cand[j])!;
    }
    return { k, ids, dists, matches: Int32Array.of(matches) };
  }
}

/** Scores one read that started at snapshot s and ended with the writes up to e issued: ids
 * live at s are known; ids written by an op in flight during the read are known too (the
 * engine may show them already) but the truth is the set at s. */
export function scoreRead(args: {
  store: LiveStore;
  truth: LiveTruth;
  /** The query's position in the truth. */
  qi: number;
  query: Float32Array;
  filter: FilterExpr | null;
  returned: ArrayLike<number>;
  k: number;
  s: number;
  e: number;
}): QueryScore {
  const { store, truth, qi, query, filter, returned, k, s, e } = args;
  const slotOf = (id: number) => store.slotWithin(id, s, e);
  return scoreQuery({
    returned,
    k,
    trueIds: truth.ids.subarray(qi * truth.k, (qi + 1) * truth.k),
    trueDists: truth.dists.subarray(qi * truth.k, (qi + 1) * truth.k),
    matches: truth.matches[qi],
    isKnownId: (id) => slotOf(id) >= 0,
    passes: (id) => passes(filter, store.attrs, slotOf(id)),
    distanceOf: (id) => exactDistance(store.metric, query, 0, store.vectors, slotOf(id) * store.d, store.d),
  });
}
