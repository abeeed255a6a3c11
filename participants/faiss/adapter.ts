// faiss (Debian's libfaiss-dev 1.7.3, linked statically) as a vecbench participant, through the
// small N-API binding in ./native (built by scripts/build-native.mjs at npm ci). An in-process,
// in-memory index of the type the `type` setting names: IndexHNSWFlat (knob efSearch),
// IndexIVFFlat (nprobe) or IndexIVFPQ inside an IndexRefineFlat (nprobe, k_factor).
// Rows are buffered by ingest and handed to faiss in buildIndex (IVF types train first; one
// add call, on `threads` OpenMP threads). faiss labels are positions in insertion order; this
// adapter keeps position -> row and the attribute columns, and passes them to every search,
// where the filter runs inside faiss as an IDSelector (during the graph walk for HNSW, during
// the scan of the probed lists for IVF). Deletes: remove_ids for the IVF types; HNSW cannot
// remove, so its deleted positions are tombstones the selector refuses. buildIndex saves the
// index (write_index) and the adapter's columns to workDir, so reopen reads them back.
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import * as sdk from '../../src/sdk/index.ts';

export const settingsSchema = sdk.settingsObject({
  /** The faiss index: hnsw (IndexHNSWFlat), ivfflat (IndexIVFFlat), ivfpq (IndexIVFPQ + IndexRefineFlat). */
  type: z.enum(['hnsw', 'ivfflat', 'ivfpq']).default('hnsw'),
  /** HNSW links per node (layer 0 keeps 2 x M). */
  M: sdk.intSetting(2, 256, 16),
  /** HNSW candidate list size while inserting. */
  efConstruction: sdk.intSetting(1, 10_000, 200),
  /** IVF lists; 0: nlist_factor x sqrt(n), at most n / 39 (faiss wants 39 training points a centroid). */
  nlist: sdk.intSetting(0, 1 << 20, 0),
  /** With nlist 0: lists per square root of the rows. k-means costs rows x lists a pass: at 1M
   * rows, 4 (4,000 lists) trains for most of an hour on two cores, 1 for minutes. */
  nlist_factor: z.number().min(0.1).max(64).default(4),
  /** IVFPQ sub-quantizers (must divide d); 0: the largest divisor of d up to d / 4. */
  pq_m: sdk.intSetting(0, 4096, 0),
  /** Bits per IVFPQ sub-quantizer code. */
  pq_nbits: sdk.intSetting(1, 16, 8),
  /** Where an ivfpq index is searched from: 'memory', or 'disk': its lists in a faiss
   * OnDiskInvertedLists file and its full vectors (the refine step's) in a raw file, both
   * memory-mapped read-only, so what a query probes and re-ranks comes through the page cache
   * (the disk tier's layout). A session writes into its index in memory and searches the files
   * saved from it; an index reopened from the files takes no writes. */
  storage: z.enum(['memory', 'disk']).default('memory'),
  /** OpenMP (and OpenBLAS) threads for training and add; 0: the machine's cores. Each search
   * runs on one thread (the harness runs searches side by side in worker threads). */
  threads: sdk.intSetting(0, 1024, 0),
});
export type FaissSettings = z.infer<typeof settingsSchema>;
type Kind = FaissSettings['type'];

/** The knobs each index type takes. */
const KNOBS: Record<Kind, readonly string[]> = { hnsw: ['efSearch'], ivfflat: ['nprobe'], ivfpq: ['nprobe', 'k_factor'] };
const DEFAULT_KNOBS: Record<string, number> = { efSearch: 16, nprobe: 1, k_factor: 1 };

/** Candidates re-ranked are k x k_factor, rounded down: any number from 1, so a calibration can
 * search between two integers (at k = 1000, k_factor 1 and 2 are 0.81 and 0.98 recall apart). */
const kFactorKnob = sdk.knobWith<number>((v) => typeof v === 'number' && Number.isFinite(v) && v >= 1, 'a number >= 1 (k x k_factor candidates, rounded down)');

/** faiss's own file (write_index). */
const INDEX_FILE = 'faiss.index';
/** storage 'disk': the IndexIVFPQ (its lists named inside), the lists, the vectors by label. */
const DISK_FILES = { index: 'faiss.disk.index', lists: 'faiss.ivfdata', vectors: 'faiss.vectors.f32' };
/** The adapter's side: attribute columns by row, and position -> row with the alive flag. */
const ROWS_FILE = 'faiss.rows.bin';

type Handle = { readonly __faiss: unique symbol };
type SearchArgs = [
  h: Handle,
  queries: Float32Array,
  k: number,
  knob: number,
  kFactor: number,
  clauses: Int32Array | null,
  alive: Uint8Array | null,
  rowOf: Int32Array,
  ...cols: Int32Array[],
];
interface Addon {
  version: string;
  create(kind: Kind, d: number, innerProduct: boolean, M: number, efConstruction: number, nlist: number, pqM: number, pqNbits: number): Handle;
  read(path: string): Handle;
  write(h: Handle, path: string): void;
  /** An in-memory ivfpq's disk form: the index with on-disk lists, the lists, the raw vectors. */
  writeDisk(h: Handle, indexPath: string, listsPath: string, vectorsPath: string): void;
  /** The disk form writeDisk saved, mapped read-only (takes no writes). */
  readDisk(indexPath: string, vectorsPath: string): Handle;
  info(h: Handle): { kind: Kind; d: number; innerProduct: boolean; ntotal: number; trained: boolean; nlist: number; onDisk: boolean };
  train(h: Handle, vectors: Float32Array, threads: number): void;
  add(h: Handle, vectors: Float32Array, firstLabel: number, threads: number): void;
  remove(h: Handle, labels: Int32Array): number;
  /** queries: one query (search) or n (n x d, timedSearch); clauses: each query's filter
   * triples one after another, or null; alive: the alive flag by position, or null for all. */
  search(...a: SearchArgs): Int32Array;
  /** n queries searched as search() does, each timed alone in C++: row ids one query after
   * another, their offsets (n + 1) and each query's nanoseconds. */
  timedSearch(...a: SearchArgs): [Int32Array, Int32Array, Float64Array];
  free(h: Handle): void;
}

/** Where the addon is, what builds it and what it needs; `ADDON.get()` loads it on first use,
 * `ADDON.load(path)` says in one line why an addon at `path` is unavailable. */
export const ADDON = sdk.participantAddon<Addon>(import.meta.url, {
  participant: 'faiss',
  needs: 'libfaiss-dev',
  // libgomp reads its wait policy when it is loaded (with the addon). Spinning OpenMP threads
  // made IVFPQ training 20x slower on this busy 2-core machine (48 s instead of 2 s at 3,000 x
  // 128); passive waiting costs nothing measurable on an idle one. A value set by the user stays.
  beforeLoad: () => {
    process.env.OMP_WAIT_POLICY ??= 'PASSIVE';
  },
});

export function autoNlist(n: number, factor = 4): number {
  return Math.max(1, Math.min(Math.round(factor * Math.sqrt(n)), Math.floor(n / 39)));
}

export function autoPqM(d: number): number {
  for (let m = Math.max(1, Math.floor(d / 4)); m > 1; m--) if (d % m === 0) return m;
  return 1;
}

/** Column slots of the addon's search: a filter reads at most this many attributes. */
const SLOTS = 6;

/** A filter as the SDK's (slot, lo, hi) triples over at most SLOTS attributes (the addon takes
 * SLOTS columns, fewer than there are attributes, so each filter names the ones it reads), its
 * bounds clamped to int32 as the addon compares them. */
export function filterClauses(f: sdk.FilterExpr): { clauses: Int32Array; fields: sdk.AttrName[] } {
  const { clauses, fields } = sdk.filterClauses(f, 'faiss', SLOTS);
  const clamp = (v: number) => Math.max(-(2 ** 31), Math.min(2 ** 31 - 1, v));
  return { clauses: Int32Array.from(clauses, clamp), fields };
}

type Columns = Record<sdk.AttrName, Int32Array>;

class FaissSession implements sdk.EngineSession {
  private readonly native: Addon;
  private handle: Handle;
  private readonly threads: number;
  /** Row -> attribute values (by row id). */
  private cols: Columns;
  /** Label (position) -> row id; -1 never added. */
  private rowOf: Int32Array;
  /** Label -> 1 while that position holds its row's current vector. */
  private alive: Uint8Array;
  /** Row -> its label, or -1 when the row is not live. */
  private posOf: Int32Array;
  /** The next label. */
  private next = 0;
  /** Labels that are dead but still in the index (HNSW tombstones): searches must check. */
  private tombstones = 0;
  /** Rows waiting for buildIndex (IVF must train first; every type adds in one call). */
  private pending: { vectors: Float32Array; rows: Int32Array; count: number } | null;
  private knob = 0;
  private kFactor = 1;
  private readonly clauses = new Map<string, ReturnType<typeof filterClauses>>();
  /** The files in workDir lag behind the index in memory. */
  private dirty = true;
  /** storage 'disk': the handle searches use, read from the files the last persist saved. */
  private diskHandle: Handle | null = null;
  /** Reopened from the disk form: there is no index in memory to write into. */
  private readonly readOnly: boolean = false;

  constructor(
    private readonly settings: FaissSettings,
    private readonly d: number,
    private readonly innerProduct: boolean,
    private readonly workDir: string,
    init: { n: number } | { handle: Handle; cols: Columns; rowOf: Int32Array; alive: Uint8Array; next: number },
  ) {
    this.native = ADDON.get();
    this.threads = settings.threads === 0 ? availableParallelism() : settings.threads;
    if ('handle' in init) {
      this.handle = init.handle;
      if (settings.storage === 'disk') {
        this.diskHandle = init.handle;
        this.readOnly = true;
      }
      this.cols = init.cols;
      this.rowOf = init.rowOf;
      this.alive = init.alive;
      this.next = init.next;
      this.posOf = new Int32Array(this.cols.cat10.length).fill(-1);
      for (let p = 0; p < this.next; p++) {
        if (this.alive[p]) this.posOf[this.rowOf[p]] = p;
        else if (settings.type === 'hnsw') this.tombstones++;
      }
      this.pending = null;
      this.dirty = false;
    } else {
      const n = Math.max(1, init.n);
      const s = settings;
      const nlist = s.nlist || autoNlist(n, s.nlist_factor);
      this.handle = this.native.create(s.type, d, innerProduct, s.M, s.efConstruction, nlist, s.pq_m || autoPqM(d), s.pq_nbits);
      this.cols = Object.fromEntries(sdk.ATTRIBUTES.map((a) => [a, new Int32Array(n)])) as Columns;
      this.rowOf = new Int32Array(n).fill(-1);
      this.alive = new Uint8Array(n);
      this.posOf = new Int32Array(n).fill(-1);
      this.pending = { vectors: new Float32Array(n * d), rows: new Int32Array(n), count: 0 };
    }
    this.knob = DEFAULT_KNOBS[KNOBS[settings.type][0]];
  }

  static reopen(settings: FaissSettings, d: number, innerProduct: boolean, workDir: string): FaissSession {
    const native = ADDON.get();
    const rowsPath = join(workDir, ROWS_FILE);
    const { meta, columns } = sdk.readColumns(rowsPath);
    if (meta.d !== d || meta.innerProduct !== innerProduct || meta.type !== settings.type) {
      throw new Error(
        `faiss: ${rowsPath} belongs to a d=${String(meta.d)} ${String(meta.type)} index (inner product ${String(meta.innerProduct)}); the dataset is d=${d} and the settings say ${settings.type} (inner product ${String(innerProduct)})`,
      );
    }
    const disk = settings.storage === 'disk';
    const path = join(workDir, disk ? DISK_FILES.index : INDEX_FILE);
    const handle = disk ? native.readDisk(path, join(workDir, DISK_FILES.vectors)) : native.read(path);
    const info = native.info(handle);
    if (info.kind !== settings.type || info.d !== d) throw new Error(`faiss: ${path} holds a d=${info.d} ${info.kind} index, expected d=${d} ${settings.type}`);
    const cols = Object.fromEntries(sdk.ATTRIBUTES.map((a) => [a, columns[a] as Int32Array])) as Columns;
    return new FaissSession(settings, d, innerProduct, workDir, {
      handle,
      cols,
      rowOf: columns.rowOf as Int32Array,
      alive: columns.alive as Uint8Array,
      next: Number(meta.next),
    });
  }

  private persist(): void {
    if (this.settings.storage === 'memory') {
      this.native.write(this.handle, join(this.workDir, INDEX_FILE));
    } else if (this.next > 0) {
      // The files are rewritten: the mapping of the last ones goes first.
      if (this.diskHandle) this.native.free(this.diskHandle);
      this.diskHandle = null;
      const at = (f: string) => join(this.workDir, f);
      this.native.writeDisk(this.handle, at(DISK_FILES.index), at(DISK_FILES.lists), at(DISK_FILES.vectors));
      this.diskHandle = this.native.readDisk(at(DISK_FILES.index), at(DISK_FILES.vectors));
    }
    sdk.writeColumns(
      join(this.workDir, ROWS_FILE),
      { d: this.d, innerProduct: this.innerProduct, type: this.settings.type, next: this.next },
      { ...this.cols, rowOf: this.rowOf.subarray(0, this.next), alive: this.alive.subarray(0, this.next) },
    );
    this.dirty = false;
  }

  private grow<T extends Int32Array | Uint8Array>(a: T, size: number, fill: number): T {
    const b = new (a.constructor as new (n: number) => T)(size);
    if (fill !== 0) b.fill(fill);
    b.set(a);
    return b;
  }

  /** Room for row `id` in the row-indexed arrays. */
  private ensureRow(id: number): void {
    if (id < this.posOf.length) return;
    const size = Math.max(id + 1, Math.ceil(this.posOf.length * 1.5));
    for (const a of sdk.ATTRIBUTES) this.cols[a] = this.grow(this.cols[a], size, 0);
    this.posOf = this.grow(this.posOf, size, -1);
  }

  /** Room for `count` more labels. */
  private ensureLabels(count: number): void {
    if (this.next + count <= this.rowOf.length) return;
    const size = Math.max(this.next + count, Math.ceil(this.rowOf.length * 1.5));
    this.rowOf = this.grow(this.rowOf, size, -1);
    this.alive = this.grow(this.alive, size, 0);
  }

  private check(batch: sdk.RowBatch): void {
    if (batch.vectors.length !== batch.ids.length * this.d) {
      throw new Error(`faiss: batch has ${batch.vectors.length} floats for ${batch.ids.length} rows of d=${this.d}`);
    }
  }

  async ingest(batch: sdk.RowBatch): Promise<void> {
    await this.upsert(batch);
  }

  /** Takes the rows of a batch (the last of duplicate ids wins) into the index or the pending buffer. */
  async upsert(batch: sdk.RowBatch): Promise<void> {
    this.check(batch);
    this.writable();
    const count = batch.ids.length;
    if (count === 0) return;
    const last = new Map<number, number>();
    batch.ids.forEach((id, i) => last.set(id, i));
    const keep = last.size === count ? null : [...last.values()].sort((a, b) => a - b);
    const ids = keep ? Int32Array.from(keep, (i) => batch.ids[i]) : batch.ids;
    let vectors = batch.vectors;
    if (keep) {
      vectors = new Float32Array(keep.length * this.d);
      keep.forEach((i, j) => vectors.set(batch.vectors.subarray(i * this.d, (i + 1) * this.d), j * this.d));
    }
    // Replaced rows leave first (removed from an IVF, tombstoned in HNSW).
    await this.delete(ids);
    for (let j = 0; j < ids.length; j++) {
      const id = ids[j];
      const i = keep ? keep[j] : j;
      this.ensureRow(id);
      for (const a of sdk.ATTRIBUTES) this.cols[a][id] = batch.attrs[a][i];
    }
    this.ensureLabels(ids.length);
    const first = this.next;
    if (this.pending) {
      const p = this.pending;
      if ((p.count + ids.length) * this.d > p.vectors.length) {
        const cap = Math.max(p.count + ids.length, Math.ceil(p.count * 1.5));
        const v = new Float32Array(cap * this.d);
        v.set(p.vectors.subarray(0, p.count * this.d));
        p.vectors = v;
      }
      p.vectors.set(vectors, p.count * this.d);
      p.count += ids.length;
    } else {
      this.native.add(this.handle, vectors, first, this.threads);
    }
    for (let j = 0; j < ids.length; j++) {
      this.rowOf[first + j] = ids[j];
      this.alive[first + j] = 1;
      this.posOf[ids[j]] = first + j;
    }
    this.next += ids.length;
    this.dirty = true;
  }

  async insert(batch: sdk.RowBatch): Promise<void> {
    await this.upsert(batch);
  }

  async buildIndex(): Promise<void> {
    const p = this.pending;
    if (p) {
      this.pending = null;
      const vectors = p.vectors.subarray(0, p.count * this.d);
      if (this.settings.type !== 'hnsw' && p.count > 0) this.native.train(this.handle, vectors, this.threads);
      // Positions removed before the build (a row given twice across batches) go in too and
      // are removed right after, so that labels stay positions.
      this.native.add(this.handle, vectors, 0, this.threads);
      const dead: number[] = [];
      for (let l = 0; l < p.count; l++) if (!this.alive[l]) dead.push(l);
      if (dead.length > 0) this.removeLabels(Int32Array.from(dead));
    }
    this.persist();
  }

  private removeLabels(labels: Int32Array): void {
    if (this.pending) return; // not in the index yet: buildIndex removes them after its add
    const removed = this.native.remove(this.handle, labels);
    if (removed < 0) this.tombstones += labels.length;
  }

  /** Refuses a write to an index reopened from its disk form. */
  private writable(): void {
    if (this.readOnly)
      throw new sdk.UserError(
        `faiss: the index in ${this.workDir} was reopened from its disk form (storage: disk), which takes no writes; load it again to change it`,
      );
  }

  /** The handle searches use: the index in memory, or (storage 'disk') the one read from the
   * files, saved again first when writes have changed the index since. */
  private searched(): Handle {
    if (this.settings.storage !== 'disk') return this.handle;
    if (this.dirty || this.diskHandle === null) this.persist();
    return this.diskHandle!;
  }

  async delete(ids: Int32Array): Promise<void> {
    this.writable();
    const labels: number[] = [];
    for (const id of ids) {
      if (id < 0 || id >= this.posOf.length) continue;
      const l = this.posOf[id];
      if (l < 0) continue;
      this.posOf[id] = -1;
      this.alive[l] = 0;
      labels.push(l);
    }
    if (labels.length === 0) return;
    this.dirty = true;
    this.removeLabels(Int32Array.from(labels));
  }

  async setKnobs(knobs: sdk.Knobs): Promise<void> {
    const main = KNOBS[this.settings.type][0];
    this.knob = (knobs[main] as number | undefined) ?? DEFAULT_KNOBS[main];
    this.kFactor = (knobs.k_factor as number | undefined) ?? DEFAULT_KNOBS.k_factor;
  }

  private clausesOf(filter: sdk.FilterExpr): ReturnType<typeof filterClauses> {
    const key = sdk.filterKey(filter);
    let c = this.clauses.get(key);
    if (!c) {
      if (this.clauses.size >= 4096) this.clauses.clear();
      c = filterClauses(filter);
      this.clauses.set(key, c);
    }
    return c;
  }

  /** The columns of a filter's slots; the unused slots repeat the first (never read). */
  private slotsOf(fields: readonly string[]): Int32Array[] {
    const c = this.cols as Record<string, Int32Array>;
    return Array.from({ length: SLOTS }, (_, i) => c[fields[i] ?? fields[0] ?? sdk.ATTRIBUTES[0]]);
  }

  /** A pass timed in C++, query by query (the SDK's timedNativePass over timedSearch): the
   * addon's selector already applied the filter and the tombstones, so ids come back as found. */
  async timedPass(requests: sdk.SearchRequest[]): Promise<sdk.TimedPass> {
    return sdk.timedNativePass(
      {
        d: this.d,
        empty: this.pending !== null || this.next === 0,
        kOf: (k) => k,
        compile: (f) => ({ ...this.clausesOf(f), pred: null }),
        timedSearch: (queries, k, clauses, fields) =>
          this.native.timedSearch(
            this.searched(),
            queries,
            k,
            this.knob,
            this.kFactor,
            clauses && Int32Array.from(clauses),
            this.tombstones > 0 ? this.alive : null,
            this.rowOf,
            ...this.slotsOf(fields),
          ),
        kept: (ids) => ids,
        search: (r) => this.search(r),
      },
      requests,
    );
  }

  async search(request: sdk.SearchRequest): Promise<ArrayLike<number>> {
    if (this.pending || this.next === 0) return [];
    const v = request.vector;
    // The binding reads a Float32Array of exactly d floats in place (a view at an offset is fine).
    const query = v instanceof Float32Array ? v : Float32Array.from(v);
    const compiled = request.filter === null ? null : this.clausesOf(request.filter);
    const alive = this.tombstones > 0 ? this.alive : null;
    const slots = this.slotsOf(compiled?.fields ?? []);
    return this.native.search(this.searched(), query, request.k, this.knob, this.kFactor, compiled?.clauses ?? null, alive, this.rowOf, ...slots);
  }

  async explain(request: sdk.SearchRequest): Promise<string> {
    const f = request.filter === null ? 'no filter' : `IDSelector ${sdk.filterKey(request.filter)} (attribute columns checked per candidate label)`;
    const t = this.settings.type;
    if (t === 'hnsw') {
      const dead = this.tombstones ? `; ${this.tombstones} tombstones refused by the IDSelector` : '';
      return `IndexHNSWFlat search, efSearch=max(${this.knob}, k=${request.k})${dead}; ${f}`;
    }
    const nlist = this.native.info(this.handle).nlist;
    if (t === 'ivfflat') return `IndexIVFFlat search, nprobe=${Math.min(this.knob, nlist)} of ${nlist} lists; ${f}`;
    const store =
      this.settings.storage === 'disk' ? `the vectors file (memory-mapped), lists read from ${DISK_FILES.lists} (memory-mapped)` : 'the IndexRefineFlat store';
    return `IndexIVFPQ search of k x k_factor=${request.k * this.kFactor} candidates, nprobe=${Math.min(this.knob, nlist)} of ${nlist} lists, then exact re-ranking from ${store}; ${f}`;
  }

  strategy(request: sdk.SearchRequest): sdk.Strategy {
    return sdk.declaredStrategy(
      request,
      this.settings.type === 'hnsw' ? 'graph walk' : 'IVF probe',
      this.settings.type === 'hnsw' ? 'graph walk + filter' : 'IVF probe + filter',
    );
  }

  async diskBytes(): Promise<number> {
    if (this.dirty && !this.pending) this.persist();
    const files = this.settings.storage === 'disk' ? Object.values(DISK_FILES) : [INDEX_FILE];
    return sdk.fileBytes(...files.map((f) => join(this.workDir, f)), join(this.workDir, ROWS_FILE));
  }

  async close(): Promise<void> {
    // What a later reopen finds is what this session held.
    if (this.dirty && !this.pending && this.next > 0) this.persist();
    if (this.diskHandle && this.diskHandle !== this.handle) this.native.free(this.diskHandle);
    this.diskHandle = null;
    this.native.free(this.handle);
    this.clauses.clear();
  }
}

const participant: sdk.Participant<FaissSettings> = {
  engine: 'faiss',
  engineVersion: async () => ADDON.get().version,
  settingsSchema,
  // The knobs of the index type the settings name.
  knobs: (settings) => Object.fromEntries(KNOBS[settings.type].map((name) => [name, name === 'k_factor' ? kFactorKnob : sdk.intKnob(1)])),
  filters: sdk.EVERY_FILTER,
  filterStrategy:
    'during the search: a faiss IDSelector (search parameters sel) checks each candidate label against the attribute columns (HNSW: during the graph walk, only passing labels enter the results; IVF: while scanning the probed lists)',
  concurrentSearch: false,
  // reopen reads the two files buildIndex saved into memory; searches never write them.
  reopenInThreads: true,
  checkDataset(s, dataset) {
    if (s.storage === 'disk' && s.type !== 'ivfpq')
      return `settings index.storage = disk is for type ivfpq (its lists and vectors are what go to disk); the settings say type ${s.type}`;
    if (s.type !== 'ivfpq' || s.pq_m === 0 || dataset.d % s.pq_m === 0) return null;
    const divisors = Array.from({ length: dataset.d }, (_, i) => i + 1).filter((x) => dataset.d % x === 0 && x > 1);
    return `settings index.pq_m = ${s.pq_m} does not divide the ${dataset.d} dimensions of dataset ${dataset.name} (IndexIVFPQ splits each vector into pq_m equal sub-vectors); use a divisor of ${dataset.d} (${divisors.slice(-6).join(', ')}) or 0 for the default`;
  },
  async open(ctx) {
    // cosine: vectors are unit length after prepare, so the index ranks by inner product.
    return new FaissSession(ctx.settings, ctx.dataset.d, ctx.dataset.metric !== 'l2', ctx.workDir, { n: ctx.dataset.n });
  },
  async reopen(ctx) {
    return FaissSession.reopen(ctx.settings, ctx.dataset.d, ctx.dataset.metric !== 'l2', ctx.workDir);
  },
};

export default participant;
