// hnswlib (through the hnswlib-node N-API binding) as a vecbench participant. An in-process,
// in-memory HNSW graph. hnswlib builds the graph while points are added, so ingest includes
// the build and buildIndex has nothing left to do. Filters run during the graph walk: the
// binding calls a JS predicate for every candidate label, and only labels that pass enter the
// result set (rejected nodes are still traversed). Searches are synchronous native calls.
// buildIndex saves the graph (writeIndex) and the attribute columns to workDir, so reopen
// reads them back without ingest (cold start, a resumed run).
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { z } from 'zod';
import * as sdk from '../../src/sdk/index.ts';
import { hnswlibDeclaration, hnswlibSettingsSchema, hnswlibSpace } from '../_shared/hnsw-settings.ts';

const require = createRequire(import.meta.url);
// A CommonJS package whose exports Node's ESM loader cannot list statically.
const hnswlib = require('hnswlib-node') as typeof import('hnswlib-node');
type Hnsw = InstanceType<typeof hnswlib.HierarchicalNSW>;

export const settingsSchema = hnswlibSettingsSchema;
export type HnswSettings = z.infer<typeof settingsSchema>;

/** hnswlib's own file: the graph and the vectors. */
const INDEX_FILE = 'hnswlib.index';
/** The adapter's side of a row: attribute columns and live / deleted flags, by label. */
const ROWS_FILE = 'hnswlib.rows.bin';

class HnswSession implements sdk.EngineSession {
  private index: Hnsw;
  private readonly d: number;
  /** Attributes and live / deleted flags, by label. */
  private rows: sdk.RowColumns;
  private capacity: number;
  private ef = 10;
  /** The query as the binding takes it (a plain array), refilled for every search: the
   * binding reads it synchronously, so one buffer serves all and a search allocates nothing. */
  private readonly queryBuf: number[];
  /** No point was ever added (hnswlib's count never drops: deletes only mark). */
  private empty: boolean;
  /** The files in workDir lag behind the index in memory. */
  private dirty = true;

  /** A new, empty index (n: the expected rows), or with `saved`, the one saved in workDir. */
  constructor(
    private readonly settings: HnswSettings,
    n: number,
    d: number,
    private readonly space: 'ip' | 'l2',
    private readonly workDir: string,
    saved?: { index: Hnsw; rows: sdk.RowColumns },
  ) {
    this.d = d;
    if (saved) {
      this.index = saved.index;
      this.capacity = this.index.getMaxElements();
      this.rows = saved.rows;
      this.dirty = false;
    } else {
      this.capacity = Math.max(1, n);
      this.index = new hnswlib.HierarchicalNSW(this.space, d);
      this.index.initIndex({
        maxElements: this.capacity,
        m: settings.M,
        efConstruction: settings.efConstruction,
        randomSeed: settings.seed,
        allowReplaceDeleted: settings.replaceDeleted,
      });
      this.rows = sdk.RowColumns.empty(this.capacity);
    }
    this.index.setEf(this.ef);
    this.queryBuf = new Array<number>(d).fill(0);
    this.empty = this.index.getCurrentCount() === 0;
  }

  /** Reads the index and the columns a previous session saved in workDir. */
  static async reopen(settings: HnswSettings, d: number, space: 'ip' | 'l2', workDir: string): Promise<HnswSession> {
    const rowsPath = join(workDir, ROWS_FILE);
    const { meta, rows } = sdk.RowColumns.read(rowsPath);
    if (meta.d !== d || meta.space !== space) {
      throw new Error(`hnswlib: ${rowsPath} belongs to a d=${String(meta.d)} ${String(meta.space)} index, the dataset is d=${d} ${space}`);
    }
    const index = new hnswlib.HierarchicalNSW(space, d);
    await index.readIndex(join(workDir, INDEX_FILE), settings.replaceDeleted);
    if (rows.liveCount() !== index.getIdsList().filter((id) => rows.isLive(id)).length) {
      throw new Error(`hnswlib: ${join(workDir, INDEX_FILE)} and ${rowsPath} disagree on the live rows (saved by different sessions)`);
    }
    return new HnswSession(settings, 0, d, space, workDir, { index, rows });
  }

  /** Saves the graph (hnswlib's writeIndex) and the columns to workDir. */
  private async persist(): Promise<void> {
    await this.index.writeIndex(join(this.workDir, INDEX_FILE));
    this.rows.save(join(this.workDir, ROWS_FILE), { d: this.d, space: this.space });
    this.dirty = false;
  }

  /** Makes room in the graph for one more element. */
  private ensureSlot(): void {
    if (this.index.getCurrentCount() < this.index.getMaxElements()) return;
    this.capacity = Math.ceil(this.index.getMaxElements() * 1.25) + 16;
    this.index.resizeIndex(this.capacity);
  }

  private row(batch: sdk.RowBatch, i: number): number[] {
    // The binding takes a plain JS array (it checks IsArray, so a typed array is refused).
    return Array.from(batch.vectors.subarray(i * this.d, (i + 1) * this.d));
  }

  private check(batch: sdk.RowBatch): void {
    if (batch.vectors.length !== batch.ids.length * this.d) {
      throw new Error(`hnswlib: batch has ${batch.vectors.length} floats for ${batch.ids.length} rows of d=${this.d}`);
    }
  }

  async ingest(batch: sdk.RowBatch): Promise<void> {
    this.check(batch);
    for (let i = 0; i < batch.ids.length; i++) this.put(batch, i);
    this.dirty = true;
  }

  /** Adds or replaces one row. */
  private put(batch: sdk.RowBatch, i: number): void {
    const id = batch.ids[i];
    this.rows.fit(id);
    this.rows.setAttrs(batch, i, id);
    const vec = this.row(batch, i);
    if (this.rows.live[id]) {
      // addPoint on an existing label overwrites its vector and repairs its links.
      this.index.addPoint(vec, id);
    } else if (this.rows.deleted[id]) {
      if (this.settings.replaceDeleted) {
        // With replacement enabled hnswlib refuses addPoint on a deleted label; bring the old
        // slot back and overwrite it, unless another label has taken that slot over since.
        let revived = true;
        try {
          this.index.unmarkDelete(id);
        } catch {
          revived = false;
        }
        if (revived) {
          this.index.addPoint(vec, id);
        } else {
          this.ensureSlot();
          this.index.addPoint(vec, id, true);
        }
      } else {
        // Without replacement, addPoint on a deleted label unmarks it and overwrites it.
        this.index.addPoint(vec, id);
      }
    } else {
      this.ensureSlot();
      this.index.addPoint(vec, id, this.settings.replaceDeleted);
    }
    this.rows.markLive(id);
    this.empty = false;
  }

  async buildIndex(): Promise<void> {
    // hnswlib links every point into the graph as it is added: nothing is left to build but
    // the saved copy that reopen reads (its write is part of the build time).
    await this.persist();
  }

  async setKnobs(knobs: sdk.Knobs): Promise<void> {
    if (knobs.ef === undefined) return;
    this.ef = knobs.ef as number;
    this.index.setEf(this.ef);
  }

  async search(request: sdk.SearchRequest): Promise<ArrayLike<number>> {
    // The count and capacity as the session tracks them: asking the binding costs ~0.1 us a call.
    if (this.empty) return [];
    // searchKnn throws when k exceeds the allocated capacity; it returns fewer rows when
    // fewer are live or reachable through the filter.
    const k = Math.min(request.k, this.capacity);
    const v = request.vector;
    const buf = this.queryBuf;
    // A vector of another length goes as it is, so the binding refuses it as before.
    let query: number[];
    if (v.length === buf.length) {
      for (let i = 0; i < buf.length; i++) buf[i] = v[i];
      query = buf;
    } else {
      query = Array.from(v);
    }
    const pred = request.filter === null ? null : this.rows.predicate(request.filter);
    const res = pred ? this.index.searchKnn(query, k, pred) : this.index.searchKnn(query, k);
    const ids = res.neighbors;
    const live = this.rows.live;
    // hnswlib already applied both; re-checking k labels costs nothing and guards the contract.
    // The binding's array is returned as it is unless a label fails (never, so far).
    let j = 0;
    while (j < ids.length && live[ids[j]] === 1 && (pred === null || pred(ids[j]))) j++;
    return j === ids.length ? ids : ids.filter((id) => live[id] && (pred === null || pred(id)));
  }

  async explain(request: sdk.SearchRequest): Promise<string> {
    const f = request.filter === null ? 'no filter' : `JS predicate ${sdk.filterKey(request.filter)} applied to every label the walk visits`;
    return `HNSW graph walk, ef=max(${this.ef}, k=${request.k}); ${f}`;
  }

  strategy(request: sdk.SearchRequest): sdk.Strategy {
    return sdk.declaredStrategy(request, 'graph walk', 'graph walk + filter');
  }

  async diskBytes(): Promise<number> {
    // In-memory engine: the size of what it saves (graph + vectors, and the adapter's columns),
    // saved again first when writes changed the index.
    if (this.dirty) await this.persist();
    return sdk.fileBytes(join(this.workDir, INDEX_FILE), join(this.workDir, ROWS_FILE));
  }

  async insert(batch: sdk.RowBatch): Promise<void> {
    this.check(batch);
    for (let i = 0; i < batch.ids.length; i++) this.put(batch, i);
    this.dirty = true;
  }

  async upsert(batch: sdk.RowBatch): Promise<void> {
    await this.insert(batch);
  }

  async delete(ids: Int32Array): Promise<void> {
    if (this.rows.deleteEach(ids, (id) => this.index.markDelete(id))) this.dirty = true;
  }

  async close(): Promise<void> {
    // What a later reopen finds is what this session held.
    if (this.dirty && this.index.getCurrentCount() > 0) await this.persist();
  }
}

const participant: sdk.Participant<HnswSettings> = {
  engine: 'hnswlib-node',
  engineVersion: async () => sdk.packageVersion('hnswlib-node'),
  ...hnswlibDeclaration,
  filterStrategy: 'during the graph walk: a JS predicate per visited label decides which labels may enter the result set',
  open: async (ctx) => new HnswSession(ctx.settings, ctx.dataset.n, ctx.dataset.d, hnswlibSpace(ctx.dataset.metric), ctx.workDir),
  reopen: async (ctx) => HnswSession.reopen(ctx.settings, ctx.dataset.d, hnswlibSpace(ctx.dataset.metric), ctx.workDir),
};

export default participant;
