// The portable backend of exact top-k (exact.ts): candidate selection in TypeScript, row blocks
// small enough to stay in cache and a bounded heap per query. Used when the native addon is not
// built or not asked for; exact.ts then reranks its candidates exactly like the addon's.
import type { Metric } from '../contracts.ts';

/** A bounded max-heap per query on (key, id): the root is the worst kept candidate. */
class TopK {
  readonly key: Float64Array;
  readonly id: Int32Array;
  readonly count: Int32Array;
  /** The root's key per query, or +Infinity while the heap is not full. */
  readonly thr: Float64Array;

  constructor(
    nq: number,
    readonly kk: number,
  ) {
    this.key = new Float64Array(nq * kk);
    this.id = new Int32Array(nq * kk);
    this.count = new Int32Array(nq);
    this.thr = new Float64Array(nq).fill(Infinity);
  }

  /** Offer (v, vi) to query q; callers check v <= thr[q] first. */
  push(q: number, v: number, vi: number): void {
    const kk = this.kk,
      key = this.key,
      id = this.id,
      o = q * kk;
    let i: number;
    if (this.count[q] < kk) {
      i = this.count[q]++;
      while (i > 0) {
        const p = (i - 1) >> 1;
        if (!(v > key[o + p] || (v === key[o + p] && vi > id[o + p]))) break;
        key[o + i] = key[o + p];
        id[o + i] = id[o + p];
        i = p;
      }
    } else {
      if (!(v < key[o] || (v === key[o] && vi < id[o]))) return;
      i = 0;
      for (;;) {
        let c = 2 * i + 1;
        if (c >= kk) break;
        if (c + 1 < kk && (key[o + c + 1] > key[o + c] || (key[o + c + 1] === key[o + c] && id[o + c + 1] > id[o + c]))) c++;
        if (!(key[o + c] > v || (key[o + c] === v && id[o + c] > vi))) break;
        key[o + i] = key[o + c];
        id[o + i] = id[o + c];
        i = c;
      }
    }
    key[o + i] = v;
    id[o + i] = vi;
    if (this.count[q] === kk) this.thr[q] = key[o];
  }

  offer(q: number, v: number, vi: number): void {
    if (v <= this.thr[q]) this.push(q, v, vi);
  }
}

const JS_ROW_BLOCK = 128;

/**
 * Portable candidate selection: row blocks small enough to stay in cache, 4 queries x 2 rows per
 * inner loop (8 float64 accumulators). key is -dot (ip, cosine) or the squared distance (l2).
 */
export function jsCandidates(
  base: Float32Array,
  d: number,
  queries: Float32Array,
  nq: number,
  metric: Metric,
  kk: number,
  rows: Int32Array | undefined,
  cands: number,
): Int32Array {
  const heap = new TopK(nq, kk);
  const l2 = metric === 'l2';
  const rowAt = (j: number): number => (rows ? rows[j] : j);
  const nq4 = nq - (nq % 4);
  for (let r0 = 0; r0 < cands; r0 += JS_ROW_BLOCK) {
    const r1 = Math.min(cands, r0 + JS_ROW_BLOCK);
    const r1p = r1 - ((r1 - r0) % 2);
    for (let q = 0; q < nq4; q += 4) {
      const a0 = q * d,
        a1 = a0 + d,
        a2 = a1 + d,
        a3 = a2 + d;
      for (let j = r0; j < r1p; j += 2) {
        const ia = rowAt(j),
          ib = rowAt(j + 1);
        const b0 = ia * d,
          b1 = ib * d;
        let s00 = 0,
          s01 = 0,
          s10 = 0,
          s11 = 0,
          s20 = 0,
          s21 = 0,
          s30 = 0,
          s31 = 0;
        if (l2) {
          for (let i = 0; i < d; i++) {
            const x = base[b0 + i],
              y = base[b1 + i];
            const v0 = queries[a0 + i],
              v1 = queries[a1 + i],
              v2 = queries[a2 + i],
              v3 = queries[a3 + i];
            let t = v0 - x;
            s00 += t * t;
            t = v0 - y;
            s01 += t * t;
            t = v1 - x;
            s10 += t * t;
            t = v1 - y;
            s11 += t * t;
            t = v2 - x;
            s20 += t * t;
            t = v2 - y;
            s21 += t * t;
            t = v3 - x;
            s30 += t * t;
            t = v3 - y;
            s31 += t * t;
          }
        } else {
          for (let i = 0; i < d; i++) {
            const x = base[b0 + i],
              y = base[b1 + i];
            const v0 = queries[a0 + i],
              v1 = queries[a1 + i],
              v2 = queries[a2 + i],
              v3 = queries[a3 + i];
            s00 -= v0 * x;
            s01 -= v0 * y;
            s10 -= v1 * x;
            s11 -= v1 * y;
            s20 -= v2 * x;
            s21 -= v2 * y;
            s30 -= v3 * x;
            s31 -= v3 * y;
          }
        }
        heap.offer(q, s00, ia);
        heap.offer(q, s01, ib);
        heap.offer(q + 1, s10, ia);
        heap.offer(q + 1, s11, ib);
        heap.offer(q + 2, s20, ia);
        heap.offer(q + 2, s21, ib);
        heap.offer(q + 3, s30, ia);
        heap.offer(q + 3, s31, ib);
      }
      for (let j = r1p; j < r1; j++) {
        for (let qq = q; qq < q + 4; qq++) heap.offer(qq, jsKey(l2, queries, qq * d, base, rowAt(j) * d, d), rowAt(j));
      }
    }
    for (let q = nq4; q < nq; q++) {
      for (let j = r0; j < r1; j++) heap.offer(q, jsKey(l2, queries, q * d, base, rowAt(j) * d, d), rowAt(j));
    }
  }
  const out = new Int32Array(nq * kk).fill(-1);
  for (let q = 0; q < nq; q++) {
    const c = heap.count[q];
    out.set(heap.id.subarray(q * kk, q * kk + c), q * kk);
  }
  return out;
}

function jsKey(l2: boolean, a: Float32Array, aOff: number, b: Float32Array, bOff: number, d: number): number {
  let s = 0;
  if (l2) {
    for (let i = 0; i < d; i++) {
      const t = a[aOff + i] - b[bOff + i];
      s += t * t;
    }
  } else {
    for (let i = 0; i < d; i++) s -= a[aOff + i] * b[bOff + i];
  }
  return s;
}
