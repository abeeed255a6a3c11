// hnswlib through vecbench's own thin N-API binding (./native, built by
// scripts/build-native.mjs at npm ci) as a vecbench participant: the `hnswlib` participant with
// only the path into the library changed. The binding compiles the very headers hnswlib-node
// bundles, so the library version, the graph, the settings, the ladders and the index file are
// the same; what differs is the crossing: vectors and queries go in as Float32Array read in
// place, a search comes back as one Int32Array of labels, and a filter runs in C++ inside the
// graph walk (hnswlib's BaseFilterFunctor over the attribute columns) instead of as a JS call
// per visited node. Everything else mirrors participants/hnswlib/adapter.ts: ingest includes
// the build, buildIndex saves the graph and the columns, reopen reads them back.
import { join } from 'node:path';
import type { z } from 'zod';
import * as sdk from '../../src/sdk/index.ts';
import { hnswlibDeclaration, hnswlibSettingsSchema, hnswlibSpace } from '../_shared/hnsw-settings.ts';

export const settingsSchema = hnswlibSettingsSchema;
export type HnswDirectSettings = z.infer<typeof settingsSchema>;

type Space = 'ip' | 'l2';
type Handle = { readonly __hnswlib: unique symbol };
interface Addon extends sdk.NativeGraphSearch<Handle> {
  create(space: Space, dim: number, maxElements: number, M: number, efConstruction: number, seed: number, allowReplaceDeleted: boolean): Handle;
  load(space: Space, dim: number, path: string, allowReplaceDeleted: boolean): Handle;
  save(h: Handle, path: string): void;
  addPoints(h: Handle, vectors: Float32Array, labels: Int32Array, replaceDeleted: boolean): void;
  markDelete(h: Handle, label: number): void;
  unmarkDelete(h: Handle, label: number): void;
  resize(h: Handle, maxElements: number): void;
  setEf(h: Handle, ef: number): void;
  info(h: Handle): { count: number; maxElements: number; deleted: number };
  labels(h: Handle): Int32Array;
}

export const ADDON = sdk.participantAddon<Addon>(import.meta.url, { participant: 'hnswlib-direct' });

/** hnswlib's own file: the graph and the vectors (the same name and format as `hnswlib`'s). */
const INDEX_FILE = 'hnswlib.index';
/** The adapter's side of a row: attribute columns and live / deleted flags, by label. */
const ROWS_FILE = 'hnswlib.rows.bin';

class HnswDirectSession implements sdk.EngineSession {
  private readonly native: Addon;
  private handle: Handle;
  private readonly d: number;
  /** Attributes and live / deleted flags, by label. */
  private rows: sdk.RowColumns;
  /** The graph's capacity and element count as this session tracks them (the addon's info
   * costs an N-API object a call). count never drops: deletes only mark. */
  private capacity: number;
  private count: number;
  private ef = 10;
  private readonly graph: sdk.NativeGraphSearcher<Handle>;
  /** The files in workDir lag behind the index in memory. */
  private dirty = true;
  /** One label for the per-row addPoints calls (the addon reads it in place). */
  private readonly one = new Int32Array(1);

  /** A new, empty index (n: the expected rows), or with `saved`, the one saved in workDir. */
  constructor(
    private readonly settings: HnswDirectSettings,
    n: number,
    d: number,
    private readonly space: Space,
    private readonly workDir: string,
    saved?: { handle: Handle; rows: sdk.RowColumns },
  ) {
    this.native = ADDON.get();
    this.graph = new sdk.NativeGraphSearcher('hnswlib-direct', this.native, () => this.rows);
    this.d = d;
    if (saved) {
      this.handle = saved.handle;
      this.rows = saved.rows;
      this.dirty = false;
    } else {
      const cap = Math.max(1, n);
      this.handle = this.native.create(space, d, cap, settings.M, settings.efConstruction, settings.seed, settings.replaceDeleted);
      this.rows = sdk.RowColumns.empty(cap);
    }
    const info = this.native.info(this.handle);
    this.capacity = info.maxElements;
    this.count = info.count;
    this.native.setEf(this.handle, this.ef);
  }

  /** Reads the index and the columns a previous session (this participant's or `hnswlib`'s) saved in workDir. */
  static reopen(settings: HnswDirectSettings, d: number, space: Space, workDir: string): HnswDirectSession {
    const native = ADDON.get();
    const rowsPath = join(workDir, ROWS_FILE);
    const { meta, rows } = sdk.RowColumns.read(rowsPath);
    if (meta.d !== d || meta.space !== space) {
      throw new Error(`hnswlib-direct: ${rowsPath} belongs to a d=${String(meta.d)} ${String(meta.space)} index, the dataset is d=${d} ${space}`);
    }
    const handle = native.load(space, d, join(workDir, INDEX_FILE), settings.replaceDeleted);
    let inGraph = 0;
    for (const id of native.labels(handle)) if (rows.isLive(id)) inGraph++;
    if (rows.liveCount() !== inGraph) {
      native.free(handle);
      throw new Error(`hnswlib-direct: ${join(workDir, INDEX_FILE)} and ${rowsPath} disagree on the live rows (saved by different sessions)`);
    }
    return new HnswDirectSession(settings, 0, d, space, workDir, { handle, rows });
  }

  /** Saves the graph (hnswlib's saveIndex) and the columns to workDir. */
  private persist(): void {
    this.native.save(this.handle, join(this.workDir, INDEX_FILE));
    this.rows.save(join(this.workDir, ROWS_FILE), { d: this.d, space: this.space });
    this.dirty = false;
  }

  /** Makes room in the columns for `id`; grown columns leave the cached predicates reading the old arrays. */
  private fitRows(id: number): void {
    if (this.rows.fit(id)) this.graph.filters.clear();
  }

  /** Makes room in the graph for one more element (the `hnswlib` participant's growth rule). */
  private ensureSlot(): void {
    if (this.count < this.capacity) return;
    this.capacity = Math.ceil(this.capacity * 1.25) + 16;
    this.native.resize(this.handle, this.capacity);
  }

  private check(batch: sdk.RowBatch): void {
    if (batch.vectors.length !== batch.ids.length * this.d) {
      throw new Error(`hnswlib-direct: batch has ${batch.vectors.length} floats for ${batch.ids.length} rows of d=${this.d}`);
    }
  }

  /** One addPoint: row i of the batch (read in place) as `label`. A new element raises the
   * count unless it took a deleted slot over. */
  private add(batch: sdk.RowBatch, i: number, label: number, replaceDeleted: boolean, fresh: boolean): void {
    this.one[0] = label;
    this.native.addPoints(this.handle, batch.vectors.subarray(i * this.d, (i + 1) * this.d), this.one, replaceDeleted);
    if (fresh) this.count = this.native.info(this.handle).count;
  }

  /** Whether every id of the batch is new (never added, never deleted) and they rise strictly:
   * then one addPoints call does what one put() per row would (no slot to grow, no label to
   * update or revive). */
  private allFresh(batch: sdk.RowBatch): boolean {
    const ids = batch.ids;
    if (this.count + ids.length > this.capacity) return false;
    let prev = -1;
    for (const id of ids) {
      if (id <= prev) return false;
      if (id < this.rows.live.length && (this.rows.live[id] || this.rows.deleted[id])) return false;
      prev = id;
    }
    return true;
  }

  async ingest(batch: sdk.RowBatch): Promise<void> {
    await this.insert(batch);
  }

  /** Adds or replaces one row (participants/hnswlib/adapter.ts's put, over this addon). */
  private put(batch: sdk.RowBatch, i: number): void {
    const id = batch.ids[i];
    this.fitRows(id);
    this.rows.setAttrs(batch, i, id);
    if (this.rows.live[id]) {
      // addPoint on an existing label overwrites its vector and repairs its links.
      this.add(batch, i, id, false, false);
    } else if (this.rows.deleted[id]) {
      if (this.settings.replaceDeleted) {
        // With replacement enabled hnswlib refuses addPoint on a deleted label; bring the old
        // slot back and overwrite it, unless another label has taken that slot over since.
        let revived = true;
        try {
          this.native.unmarkDelete(this.handle, id);
        } catch {
          revived = false;
        }
        if (revived) {
          this.add(batch, i, id, false, false);
        } else {
          this.ensureSlot();
          this.add(batch, i, id, true, true);
        }
      } else {
        // Without replacement, addPoint on a deleted label unmarks it and overwrites it.
        this.add(batch, i, id, false, false);
      }
    } else {
      this.ensureSlot();
      this.add(batch, i, id, this.settings.replaceDeleted, true);
    }
    this.rows.markLive(id);
  }

  async buildIndex(): Promise<void> {
    // hnswlib links every point into the graph as it is added: nothing is left to build but
    // the saved copy that reopen reads (its write is part of the build time).
    this.persist();
  }

  async setKnobs(knobs: sdk.Knobs): Promise<void> {
    if (knobs.ef === undefined) return;
    this.ef = knobs.ef as number;
    this.native.setEf(this.handle, this.ef);
  }

  /** A pass timed in C++, query by query. */
  async timedPass(requests: sdk.SearchRequest[]): Promise<sdk.TimedPass> {
    const session = { d: this.d, empty: this.count === 0, kOf: (k: number) => Math.min(k, this.capacity), search: (r: sdk.SearchRequest) => this.search(r) };
    return this.graph.timedPass(this.handle, session, requests);
  }

  async search(request: sdk.SearchRequest): Promise<ArrayLike<number>> {
    if (this.count === 0) return [];
    // hnswlib returns fewer labels when fewer are live or pass the filter; k above the
    // capacity is clamped as the `hnswlib` participant does (hnswlib-node refuses it).
    return this.graph.search(this.handle, request.vector, Math.min(request.k, this.capacity), request.filter);
  }

  async explain(request: sdk.SearchRequest): Promise<string> {
    const f =
      request.filter === null
        ? 'no filter'
        : `native filter ${sdk.filterKey(request.filter)} (C++ BaseFilterFunctor over the attribute columns) applied to every label the walk visits`;
    return `HNSW graph walk, ef=max(${this.ef}, k=${request.k}); ${f}`;
  }

  strategy(request: sdk.SearchRequest): sdk.Strategy {
    return sdk.declaredStrategy(request, 'graph walk', 'graph walk + filter');
  }

  async diskBytes(): Promise<number> {
    // In-memory engine: the size of what it saves (graph + vectors, and the adapter's columns),
    // saved again first when writes changed the index.
    if (this.dirty) this.persist();
    return sdk.fileBytes(join(this.workDir, INDEX_FILE), join(this.workDir, ROWS_FILE));
  }

  async insert(batch: sdk.RowBatch): Promise<void> {
    this.check(batch);
    if (batch.ids.length === 0) return;
    if (this.allFresh(batch)) {
      // The bulk path of ingest: one call, every vector read in place.
      const ids = batch.ids;
      this.fitRows(ids[ids.length - 1]);
      for (let i = 0; i < ids.length; i++) this.rows.setAttrs(batch, i, ids[i]);
      this.native.addPoints(this.handle, batch.vectors, ids, this.settings.replaceDeleted);
      for (const id of ids) this.rows.markLive(id);
      this.count = this.native.info(this.handle).count;
    } else {
      for (let i = 0; i < batch.ids.length; i++) this.put(batch, i);
    }
    this.dirty = true;
  }

  async upsert(batch: sdk.RowBatch): Promise<void> {
    await this.insert(batch);
  }

  async delete(ids: Int32Array): Promise<void> {
    if (this.rows.deleteEach(ids, (id) => this.native.markDelete(this.handle, id))) this.dirty = true;
  }

  async close(): Promise<void> {
    // What a later reopen finds is what this session held.
    if (this.dirty && this.count > 0) this.persist();
    this.graph.filters.clear();
    this.native.free(this.handle);
  }
}

const participant: sdk.Participant<HnswDirectSettings> = {
  engine: 'hnswlib',
  // No version in hnswlib's headers: the hnswlib-node release whose bundled copy the addon compiles.
  engineVersion: async () => `${sdk.packageVersion('hnswlib-node')} (the hnswlib headers bundled by hnswlib-node)`,
  ...hnswlibDeclaration,
  filterStrategy: 'during the graph walk: a native (C++) filter over the attribute columns decides which labels may enter the result set',
  open: async (ctx) => new HnswDirectSession(ctx.settings, ctx.dataset.n, ctx.dataset.d, hnswlibSpace(ctx.dataset.metric), ctx.workDir),
  reopen: async (ctx) => HnswDirectSession.reopen(ctx.settings, ctx.dataset.d, hnswlibSpace(ctx.dataset.metric), ctx.workDir),
};

export default participant;
