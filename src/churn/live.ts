// The harness's own record of which rows an engine should hold, and of every version of that
// set, so that a read can be judged against the rows that were live when it started.
//
// Rows live in slots: a slot is one (id, vector, attributes) with a lifetime [born, died) in
// write versions. Version 0 is the loaded set; every write op (a batch insert, a single-row
// write of the mixed writer...) takes the next version. Slots 0..n-1 are the base rows' own
// vectors; a new row, an upserted (moved) row or a re-inserted base row takes a new slot. A
// read that started after v write ops were acknowledged is judged against the slots live at
// snapshot v: born <= v < died.
import { ATTRIBUTES, type FilterExpr, type Metric, type RowAttributes, type RowBatch } from '../contracts.ts';
import { hashedAttributes } from '../datasets/attributes.ts';
import { passes } from '../datasets/groups.ts';
import { exactTopK } from '../groundtruth/exact.ts';
import type { Dataset } from '../datasets/layout.ts';
import type { makeRng } from '../util/hash.ts';

/** "Not yet" for born, "never" for died. */
const NEVER = 0x7fffffff;

type Rng = ReturnType<typeof makeRng>;

/** A new or moved vector lies between a base row and one of this many nearest base rows. */
const NEIGHBOURS = 10;

export class LiveStore {
  readonly d: number;
  readonly n: number;
  readonly metric: Metric;
  vectors: Float32Array;
  /** Attributes per slot. */
  attrs: RowAttributes;
  slotId: Int32Array;
  born: Int32Array;
  died: Int32Array;
  /** Slots in use (base slots 0..n-1 always count). */
  slots: number;
  /** Write ops applied so far (the current snapshot). */
  version = 0;
  /** Slots of each id beyond its base slot, in the order they were made. */
  private extra = new Map<number, number[]>();
  /** Ids that were deleted at least once (only these can leak). */
  private everDeleted = new Set<number>();
  private nextNewId: number;
  private live = 0;
  private readonly base: Float32Array;
  private readonly baseAttrs: RowAttributes;
  private readonly unitRows: boolean;

  constructor(ds: Pick<Dataset, 'n' | 'd' | 'metric' | 'base' | 'attrs'>) {
    this.d = ds.d;
    this.n = ds.n;
    this.metric = ds.metric;
    this.base = ds.base;
    this.baseAttrs = ds.attrs;
    const cap = Math.ceil(ds.n * 1.25) + 16;
    this.vectors = new Float32Array(cap * ds.d);
    this.vectors.set(ds.base);
    this.attrs = Object.fromEntries(
      ATTRIBUTES.map((a) => {
        const col = new Int32Array(cap);
        col.set(ds.attrs[a]);
        return [a, col];
      }),
    ) as RowAttributes;
    this.slotId = new Int32Array(cap);
    for (let i = 0; i < ds.n; i++) this.slotId[i] = i;
    this.born = new Int32Array(cap).fill(NEVER);
    this.died = new Int32Array(cap).fill(NEVER);
    this.slots = ds.n;
    this.nextNewId = ds.n;
    // Unit base rows (ip / cosine data) get unit new rows too, so the metric keeps its meaning.
    let unit = ds.metric !== 'l2' && ds.n > 0;
    for (let i = 0; unit && i < Math.min(ds.n, 64); i++) unit = Math.abs(this.norm(ds.base, i) - 1) < 1e-3;
    this.unitRows = unit;
  }

  private norm(v: Float32Array, row: number): number {
    let s = 0;
    for (let j = 0; j < this.d; j++) s += v[row * this.d + j] ** 2;
    return Math.sqrt(s);
  }

  get liveCount(): number {
    return this.live;
  }

  private grow(need: number): void {
    const cap = this.slotId.length;
    if (need <= cap) return;
    const next = Math.max(need, Math.ceil(cap * 1.5));
    const v = new Float32Array(next * this.d);
    v.set(this.vectors);
    this.vectors = v;
    for (const a of ATTRIBUTES) {
      const col = new Int32Array(next);
      col.set(this.attrs[a]);
      this.attrs[a] = col;
    }
    const ints = (old: Int32Array, fill: number) => {
      const x = new Int32Array(next).fill(fill);
      x.set(old);
      return x;
    };
    this.slotId = ints(this.slotId, 0);
    this.born = ints(this.born, NEVER);
    this.died = ints(this.died, NEVER);
  }

  private newSlot(id: number, v: number): number {
    this.grow(this.slots + 1);
    const slot = this.slots++;
    this.slotId[slot] = id;
    this.born[slot] = v;
    this.died[slot] = NEVER;
    const list = this.extra.get(id);
    if (list) list.push(slot);
    else this.extra.set(id, [slot]);
    this.live++;
    return slot;
  }

  /** Every slot an id ever had, oldest first. */
  private slotsOf(id: number): number[] {
    const extra = this.extra.get(id) ?? [];
    return id >= 0 && id < this.n ? [id, ...extra] : extra;
  }

  /** The id's slot live at snapshot s, or -1. */
  slotAt(id: number, s: number): number {
    if (id >= 0 && id < this.n && !this.extra.has(id)) return this.born[id] <= s && s < this.died[id] ? id : -1;
    const list = this.slotsOf(id);
    for (let i = list.length - 1; i >= 0; i--) {
      const slot = list[i];
      if (this.born[slot] <= s && s < this.died[slot]) return slot;
    }
    return -1;
  }

  /** The id's slot live at s, else one born in (s, e] (a write in flight during a read), else -1. */
  slotWithin(id: number, s: number, e: number): number {
    const at = this.slotAt(id, s);
    if (at >= 0 || e <= s) return at;
    const list = this.slotsOf(id);
    for (let i = list.length - 1; i >= 0; i--) {
      const slot = list[i];
      if (this.born[slot] > s && this.born[slot] <= e) return slot;
    }
    return -1;
  }

  isLive(id: number): boolean {
    return this.slotAt(id, this.version) >= 0;
  }

  /** A tombstone leak: the id was deleted by an op acknowledged at or before snapshot s, is not
   * live at s, and no op in flight during the read (s, e] brought it back. Returns the version
   * of that delete, or 0 when the id did not leak. */
  leakVersion(id: number, s: number, e: number): number {
    if (!this.everDeleted.has(id)) return 0;
    if (this.slotWithin(id, s, e) >= 0) return 0;
    let deletedAt = 0;
    for (const slot of this.slotsOf(id)) if (this.died[slot] <= s) deletedAt = Math.max(deletedAt, this.died[slot]);
    return deletedAt;
  }

  /** Ids deleted and not live now: any read returning one of them leaks. */
  deadIds(): Int32Array {
    const out: number[] = [];
    for (const id of this.everDeleted) if (!this.isLive(id)) out.push(id);
    return Int32Array.from(out);
  }

  /** Slots live at snapshot s that pass the filter (ascending). */
  liveSlots(s: number, filter: FilterExpr | null): Int32Array {
    const out = new Int32Array(this.slots);
    let m = 0;
    for (let slot = 0; slot < this.slots; slot++) {
      if (this.born[slot] <= s && s < this.died[slot] && (filter === null || passes(filter, this.attrs, slot))) out[m++] = slot;
    }
    return out.slice(0, m);
  }

  /** Ids live now, ascending slot order. */
  liveIds(): Int32Array {
    const slots = this.liveSlots(this.version, null);
    return slots.map((s) => this.slotId[s]);
  }

  /** Marks base rows [from, to) as loaded at version 0. */
  load(from: number, to: number): void {
    if (this.version !== 0) throw new Error('LiveStore.load: the load comes before any write');
    for (let r = from; r < to; r++) {
      if (this.born[r] === NEVER) this.live++;
      this.born[r] = 0;
    }
  }

  /** Starts the next write op; returns its version. */
  nextVersion(): number {
    return ++this.version;
  }

  /** Base rows as the engine receives them (their original vectors). */
  baseRows(ids: Int32Array): RowBatch {
    const d = this.d;
    const vectors = new Float32Array(ids.length * d);
    ids.forEach((id, i) => vectors.set(this.base.subarray(id * d, (id + 1) * d), i * d));
    const attrs = Object.fromEntries(ATTRIBUTES.map((a) => [a, Int32Array.from(ids, (id) => this.baseAttrs[a][id])])) as RowAttributes;
    return { ids, vectors, attrs };
  }

  /** Rows for the given ids with new vectors that stay on the data's own manifold: each is a
   * point on the segment between a random base row and one of its 10 nearest base rows
   * (t uniform in [0.2, 0.8]), re-normalised on unit data. An isotropic perturbation would
   * leave the data's subspace and make rows unlike any the engine indexed at load.
   * cat / num / tenant follow the id like every row's; cluster, lang and region follow the nearer end. Not
   * applied yet. */
  movedRows(ids: Int32Array, rng: Rng): RowBatch {
    const d = this.d;
    const m = ids.length;
    const vectors = new Float32Array(m * d);
    const attrs = Object.fromEntries(ATTRIBUTES.map((a) => [a, new Int32Array(m)])) as RowAttributes;
    if (m === 0) return { ids, vectors, attrs };
    const src = Int32Array.from({ length: m }, () => Math.min(this.n - 1, Math.floor(rng.uniform() * this.n)));
    const probe = new Float32Array(m * d);
    src.forEach((r, i) => probe.set(this.base.subarray(r * d, (r + 1) * d), i * d));
    const k = Math.min(NEIGHBOURS + 1, this.n);
    const nn = exactTopK({ base: this.base, n: this.n, d, queries: probe, nq: m, metric: this.metric, k });
    for (let i = 0; i < m; i++) {
      const a = src[i];
      const others: number[] = [];
      for (let j = 0; j < nn.counts[i]; j++) if (nn.ids[i * k + j] !== a) others.push(nn.ids[i * k + j]);
      const b = others.length > 0 ? others[Math.floor(rng.uniform() * others.length)] : a;
      const t = 0.2 + 0.6 * rng.uniform();
      let s = 0;
      for (let j = 0; j < d; j++) {
        const x = this.base[a * d + j] + t * (this.base[b * d + j] - this.base[a * d + j]);
        vectors[i * d + j] = x;
        s += x * x;
      }
      if (this.unitRows && s > 0) {
        const inv = 1 / Math.sqrt(s);
        for (let j = 0; j < d; j++) vectors[i * d + j] *= inv;
      }
      const near = t < 0.5 ? a : b;
      const h = hashedAttributes(1, ids[i]);
      attrs.cat10[i] = h.cat10[0];
      attrs.cat100[i] = h.cat100[0];
      attrs.cat1000[i] = h.cat1000[0];
      attrs.num[i] = h.num[0];
      attrs.tenant[i] = h.tenant[0];
      attrs.cluster[i] = this.baseAttrs.cluster[near];
      attrs.lang[i] = this.baseAttrs.lang[near];
      attrs.region[i] = this.baseAttrs.region[near];
      // A new row between two real rows takes the real label and measure of the nearer one.
      attrs.label[i] = this.baseAttrs.label[near];
      attrs.measure[i] = this.baseAttrs.measure[near];
    }
    return { ids, vectors, attrs };
  }

  /** Fresh ids past n for new rows. */
  takeNewIds(count: number): Int32Array {
    const ids = new Int32Array(count);
    for (let i = 0; i < count; i++) ids[i] = this.nextNewId++;
    return ids;
  }

  /** Applies an insert or upsert of these rows at version v: a live id's slot dies, each row
   * gets a slot born at v (a base row never loaded uses its own base slot). */
  put(rows: RowBatch, v: number, fromBase = false): void {
    const d = this.d;
    for (let i = 0; i < rows.ids.length; i++) {
      const id = rows.ids[i];
      const old = this.slotAt(id, v);
      if (old >= 0) {
        this.died[old] = v;
        this.live--;
      }
      if (fromBase && id < this.n && this.born[id] === NEVER && !this.extra.has(id)) {
        this.born[id] = v;
        this.live++;
        continue;
      }
      const slot = this.newSlot(id, v);
      this.vectors.set(rows.vectors.subarray(i * d, (i + 1) * d), slot * d);
      for (const a of ATTRIBUTES) this.attrs[a][slot] = rows.attrs[a][i];
    }
  }

  /** Applies a delete at version v (ids not live are ignored). */
  remove(ids: ArrayLike<number>, v: number): void {
    for (let i = 0; i < ids.length; i++) {
      const slot = this.slotAt(ids[i], v);
      if (slot < 0) continue;
      this.died[slot] = v;
      this.live--;
      this.everDeleted.add(ids[i]);
    }
  }

  /** A seeded draw of `count` distinct live ids. */
  drawLive(count: number, rng: Rng): Int32Array {
    const ids = this.liveIds();
    const m = Math.min(count, ids.length);
    for (let i = 0; i < m; i++) {
      const j = i + Math.floor(rng.uniform() * (ids.length - i));
      const t = ids[i];
      ids[i] = ids[j];
      ids[j] = t;
    }
    return ids.slice(0, m);
  }
}
