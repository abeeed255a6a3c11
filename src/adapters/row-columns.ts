// The adapter's side of its rows, for an in-process engine that keeps neither attributes nor
// deletes a filter can read: each row's attribute columns (what compileFilter reads), whether it
// is live, and whether it was deleted, by row id. They grow as writes bring new ids, and are
// saved beside the engine's own file (one column file, persist.ts) so a reopen finds them.
import { ATTRIBUTES, type AttrName, type FilterExpr, type RowBatch } from '../contracts.ts';
import { filterKey } from '../datasets/groups.ts';
import { compileFilter, type RowPredicate } from './kit.ts';
import { readColumns, writeColumns } from './persist.ts';

/** Compiled filters kept per session, at most this many (a grid asks a few hundred). */
const MAX_PREDICATES = 4096;

type Columns = Record<AttrName, Int32Array>;

export class RowColumns {
  /** Filters compiled over the current columns, by filterKey. */
  private readonly predicates = new Map<string, RowPredicate>();
  private constructor(
    /** The attribute columns, by row id. */
    public cols: Columns,
    /** 1: the row is in the index and not deleted. */
    public live: Uint8Array,
    /** 1: the row was deleted (it may still own a tombstoned slot in the engine). */
    public deleted: Uint8Array,
  ) {}

  /** Room for `rows` ids, none live. */
  static empty(rows: number): RowColumns {
    const n = Math.max(1, rows);
    return new RowColumns(Object.fromEntries(ATTRIBUTES.map((a) => [a, new Int32Array(n)])) as Columns, new Uint8Array(n), new Uint8Array(n));
  }

  /** The columns `save` wrote to `path`, and the meta saved with them. */
  static read(path: string): { meta: Record<string, unknown>; rows: RowColumns } {
    const { meta, columns } = readColumns(path);
    const live = columns.live as Uint8Array | undefined;
    if (!live) throw new Error(`${path} has no live column`);
    for (const a of ATTRIBUTES) if (!(columns[a] instanceof Int32Array)) throw new Error(`${path} has no ${a} column`);
    const cols = Object.fromEntries(ATTRIBUTES.map((a) => [a, columns[a] as Int32Array])) as Columns;
    const deleted = (columns.deleted as Uint8Array | undefined) ?? new Uint8Array(live.length);
    return { meta, rows: new RowColumns(cols, live, deleted) };
  }

  /** Writes the columns, with `meta` (what the engine's file must match), to `path`. */
  save(path: string, meta: Record<string, unknown>): void {
    writeColumns(path, meta, { ...this.cols, live: this.live, deleted: this.deleted });
  }

  /** Makes room for id `id` (by half again at least). True when the arrays were replaced: what
   * closes over the old ones (compiled filter predicates) is stale. */
  fit(id: number): boolean {
    if (id < this.live.length) return false;
    const size = Math.max(id + 1, Math.ceil(this.live.length * 1.5));
    const grow = <T extends Int32Array | Uint8Array>(a: T, make: (n: number) => T): T => {
      const b = make(size);
      b.set(a);
      return b;
    };
    for (const a of ATTRIBUTES) this.cols[a] = grow(this.cols[a], (s) => new Int32Array(s));
    this.live = grow(this.live, (s) => new Uint8Array(s));
    this.deleted = grow(this.deleted, (s) => new Uint8Array(s));
    // The compiled filters read the old arrays.
    this.predicates.clear();
    return true;
  }

  /** The filter as a predicate over these columns by row id, compiled once per filter. */
  predicate(filter: FilterExpr): RowPredicate {
    const key = filterKey(filter);
    let p = this.predicates.get(key);
    if (!p) {
      if (this.predicates.size >= MAX_PREDICATES) this.predicates.clear();
      p = compileFilter(filter, this.cols);
      this.predicates.set(key, p);
    }
    return p;
  }

  /** Row `i` of the batch becomes id `id`'s attributes (the caller has fit the id). */
  setAttrs(batch: RowBatch, i: number, id: number): void {
    for (const a of ATTRIBUTES) this.cols[a][id] = batch.attrs[a][i];
  }

  isLive(id: number): boolean {
    return id < this.live.length && this.live[id] === 1;
  }

  markLive(id: number): void {
    this.live[id] = 1;
    this.deleted[id] = 0;
  }

  markDeleted(id: number): void {
    this.live[id] = 0;
    this.deleted[id] = 1;
  }

  /** The ids of a delete that are live now: the ones the engine must delete. */
  liveOf(ids: Int32Array): Int32Array {
    return ids.filter((id) => this.isLive(id));
  }

  markAllDeleted(ids: Int32Array): void {
    for (const id of ids) this.markDeleted(id);
  }

  /** A delete for an engine that deletes one id at a time: `remove` for each id live now, which
   * is then marked deleted. Whether any was. */
  deleteEach(ids: Int32Array, remove: (id: number) => void): boolean {
    const gone = this.liveOf(ids);
    for (const id of gone) {
      remove(id);
      this.markDeleted(id);
    }
    return gone.length > 0;
  }

  /** Rows live now. */
  liveCount(): number {
    let n = 0;
    for (let i = 0; i < this.live.length; i++) n += this.live[i];
    return n;
  }
}
