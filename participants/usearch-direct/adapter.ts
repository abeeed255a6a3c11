// USearch through vecbench's own thin N-API binding (./native, built by
// scripts/build-native.mjs at npm ci) as a vecbench participant: the `usearch` participant with
// the path into the library changed. The binding compiles the very headers and NumKong kernels
// the npm package `usearch` ships, with the defines of its binding, so the library version, the
// distance code, the settings and the index file are the same; what differs is the crossing:
// queries go in as Float32Array read in place, a search comes back as one Int32Array of keys
// (no BigInt keys, no result objects), expansion_search changes in place instead of by
// reloading the index, and a filter runs in C++ during the graph walk (USearch's filtered_search
// over the attribute columns) instead of after it in JS, so there is no `expansion` knob.
// Ingest links rows into the graph on `threads` threads as `usearch` does; buildIndex saves the
// graph and the columns, reopen reads them back (or maps the graph, storage: view).
import { join } from 'node:path';
import type { z } from 'zod';
import * as sdk from '../../src/sdk/index.ts';
import { usearchSettingsSchema } from '../_shared/hnsw-settings.ts';

export const settingsSchema = usearchSettingsSchema;
export type UsearchDirectSettings = z.infer<typeof settingsSchema>;

/** USearch's own file and the columns file: the names and formats `usearch` uses. */
const INDEX_FILE = 'usearch.index';
const ROWS_FILE = 'usearch.rows.bin';

/** The metric names USearch's files and the `usearch` participant's column file use. */
type Metric = 'ip' | 'l2sq';
type Handle = { readonly __usearch: unique symbol };
interface Addon extends sdk.NativeGraphSearch<Handle> {
  create(metric: Metric, dim: number, connectivity: number, expansionAdd: number, expansionSearch: number): Handle;
  /** An index file read into memory, or mapped read-only. */
  open(path: string, dim: number, mapped: boolean): Handle;
  save(h: Handle, path: string): void;
  add(h: Handle, keys: Int32Array, vectors: Float32Array, threads: number): void;
  remove(h: Handle, keys: Int32Array): void;
  setExpansion(h: Handle, expansionSearch: number): void;
  size(h: Handle): number;
}

export const ADDON = sdk.participantAddon<Addon>(import.meta.url, { participant: 'usearch-direct' });

class UsearchDirectSession implements sdk.EngineSession {
  private rows: sdk.RowColumns;
  private readonly native: Addon;
  private handle: Handle;
  private readonly graph: sdk.NativeGraphSearcher<Handle>;
  private expansionSearch: number;
  /** The handle maps the saved file (storage: view): read-only until a write loads it. */
  private mapped = false;
  /** The files in workDir lag behind the index in memory. */
  private dirty = true;
  private readonly path: string;
  private readonly rowsPath: string;

  constructor(
    private readonly settings: UsearchDirectSettings,
    n: number,
    private readonly d: number,
    private readonly metric: Metric,
    workDir: string,
    saved?: { handle: Handle; rows: sdk.RowColumns; mapped: boolean },
  ) {
    this.native = ADDON.get();
    this.graph = new sdk.NativeGraphSearcher('usearch-direct', this.native, () => this.rows);
    this.path = join(workDir, INDEX_FILE);
    this.rowsPath = join(workDir, ROWS_FILE);
    this.expansionSearch = settings.expansion_search;
    if (saved) {
      ({ handle: this.handle, rows: this.rows, mapped: this.mapped } = saved);
      this.dirty = false;
      this.native.setExpansion(this.handle, this.expansionSearch);
    } else {
      this.handle = this.native.create(metric, d, settings.connectivity, settings.expansion_add, settings.expansion_search);
      this.rows = sdk.RowColumns.empty(Math.max(1, n));
    }
  }

  /** Reads (or maps) the index and the columns a previous session, this participant's or
   * `usearch`'s, saved in workDir. */
  static reopen(settings: UsearchDirectSettings, d: number, metric: Metric, workDir: string): UsearchDirectSession {
    const native = ADDON.get();
    const rowsPath = join(workDir, ROWS_FILE);
    const { meta, rows } = sdk.RowColumns.read(rowsPath);
    if (meta.d !== d || meta.metric !== metric) {
      throw new Error(
        `usearch-direct: ${rowsPath} belongs to a d=${String(meta.d)} metric ${String(meta.metric)} index, the dataset is d=${d} metric ${metric}`,
      );
    }
    const mapped = settings.storage === 'view';
    const handle = native.open(join(workDir, INDEX_FILE), d, mapped);
    if (native.size(handle) !== rows.liveCount()) {
      const size = native.size(handle);
      native.free(handle);
      throw new Error(
        `usearch-direct: ${join(workDir, INDEX_FILE)} holds ${size} vectors, ${rowsPath} ${rows.liveCount()} live rows (saved by different sessions)`,
      );
    }
    return new UsearchDirectSession(settings, 0, d, metric, workDir, { handle, rows, mapped });
  }

  private persist(): void {
    this.native.save(this.handle, this.path);
    this.rows.save(this.rowsPath, { d: this.d, metric: this.metric });
    this.dirty = false;
  }

  /** Swaps the handle for one over the saved file, mapped or in memory, at this session's knob. */
  private swap(mapped: boolean): void {
    const next = this.native.open(this.path, this.d, mapped);
    this.native.free(this.handle);
    this.handle = next;
    this.mapped = mapped;
    this.native.setExpansion(this.handle, this.expansionSearch);
  }

  /** Before a write: a mapped index is read-only, so it is loaded into memory (its file is what
   * it maps, so nothing is lost), and stays there until the next buildIndex maps it again. */
  private writable(): void {
    if (this.mapped) this.swap(false);
    this.dirty = true;
  }

  async ingest(batch: sdk.RowBatch): Promise<void> {
    await this.upsert(batch);
  }

  async buildIndex(): Promise<void> {
    // USearch links every vector into the graph during add: nothing is left to build but the
    // saved copy that reopen reads (its write is part of the build time).
    if (this.dirty) this.persist();
    // The view layout searches the built graph from its file from now on.
    if (this.settings.storage === 'view' && !this.mapped) this.swap(true);
  }

  async setKnobs(knobs: sdk.Knobs): Promise<void> {
    this.expansionSearch = (knobs.expansion_search as number | undefined) ?? this.settings.expansion_search;
    this.native.setExpansion(this.handle, this.expansionSearch);
  }

  async timedPass(requests: sdk.SearchRequest[]): Promise<sdk.TimedPass> {
    const session = { d: this.d, empty: this.rows.liveCount() === 0, kOf: (k: number) => k, search: (r: sdk.SearchRequest) => this.search(r) };
    return this.graph.timedPass(this.handle, session, requests);
  }

  async search(request: sdk.SearchRequest): Promise<ArrayLike<number>> {
    if (request.vector.length !== this.d) throw new Error(`usearch-direct: query has ${request.vector.length} floats, the index d=${this.d}`);
    if (this.native.size(this.handle) === 0) return [];
    return this.graph.search(this.handle, request.vector, request.k, request.filter);
  }

  async explain(request: sdk.SearchRequest): Promise<string> {
    const f =
      request.filter === null
        ? 'no filter'
        : `native filter ${sdk.filterKey(request.filter)} (a C++ predicate over the attribute columns) applied to every key the walk visits`;
    return `HNSW graph walk, expansion_search=max(${this.expansionSearch}, k=${request.k}); ${f}`;
  }

  strategy(request: sdk.SearchRequest): sdk.Strategy {
    return sdk.declaredStrategy(request, 'graph walk', 'graph walk + filter');
  }

  async diskBytes(): Promise<number> {
    // In-memory engine: the size of what it saves, saved again first when writes changed it.
    if (this.dirty) this.persist();
    return sdk.fileBytes(this.path, this.rowsPath);
  }

  async insert(batch: sdk.RowBatch): Promise<void> {
    await this.upsert(batch);
  }

  async upsert(batch: sdk.RowBatch): Promise<void> {
    if (batch.vectors.length !== batch.ids.length * this.d) {
      throw new Error(`usearch-direct: batch has ${batch.vectors.length} floats for ${batch.ids.length} rows of d=${this.d}`);
    }
    // The last occurrence of each id wins; USearch refuses a key it holds, so live ones leave first.
    const last = new Map<number, number>();
    batch.ids.forEach((id, i) => last.set(id, i));
    const keep = last.size === batch.ids.length ? null : [...last.values()].sort((a, b) => a - b);
    const ids = keep === null ? batch.ids : Int32Array.from(keep, (i) => batch.ids[i]);
    if (ids.length === 0) return;
    let vectors = batch.vectors;
    if (keep !== null) {
      vectors = new Float32Array(keep.length * this.d);
      keep.forEach((i, j) => vectors.set(batch.vectors.subarray(i * this.d, (i + 1) * this.d), j * this.d));
    }
    const present = ids.filter((id) => this.rows.isLive(id));
    if (present.length > 0) await this.delete(present);
    this.writable();
    let top = 0;
    for (const id of ids) top = Math.max(top, id);
    if (this.rows.fit(top)) this.graph.filters.clear();
    for (let j = 0; j < ids.length; j++) this.rows.setAttrs(batch, keep === null ? j : keep[j], ids[j]);
    this.native.add(this.handle, ids, vectors, this.settings.threads);
    for (const id of ids) this.rows.markLive(id);
  }

  async delete(ids: Int32Array): Promise<void> {
    const gone = this.rows.liveOf(ids);
    if (gone.length === 0) return;
    this.writable();
    this.native.remove(this.handle, gone);
    this.rows.markAllDeleted(gone);
  }

  async close(): Promise<void> {
    // What a later reopen finds is what this session held.
    if (this.dirty && this.rows.liveCount() > 0) this.persist();
    this.graph.filters.clear();
    this.native.free(this.handle);
  }
}

const metricOf = (m: string): Metric => (m === 'l2' ? 'l2sq' : 'ip');

const participant: sdk.Participant<UsearchDirectSettings> = {
  engine: 'usearch',
  engineVersion: async () => `${sdk.packageVersion('usearch')} (the headers and NumKong kernels of the npm package usearch)`,
  settingsSchema,
  knobs: { expansion_search: sdk.intKnob(1) },
  filters: sdk.EVERY_FILTER,
  filterStrategy: 'during the graph walk: a native (C++) predicate over the attribute columns decides which keys may enter the result set',
  concurrentSearch: false,
  // reopen reads (or maps) the files buildIndex saved; searches never write them.
  reopenInThreads: true,
  async open(ctx) {
    // cosine: vectors are unit length after prepare, so the index ranks by inner product.
    return new UsearchDirectSession(ctx.settings, ctx.dataset.n, ctx.dataset.d, metricOf(ctx.dataset.metric), ctx.workDir);
  },
  async reopen(ctx) {
    return UsearchDirectSession.reopen(ctx.settings, ctx.dataset.d, metricOf(ctx.dataset.metric), ctx.workDir);
  },
};

export default participant;
