// USearch (npm usearch, prebuilt N-API binding) as a vecbench participant. An in-process,
// in-memory HNSW index. USearch links points into the graph as they are added (in parallel over
// the batch), so ingest includes the build and buildIndex has nothing left to do. The JS API
// has no filtered search: filters are applied after the search, over k x `expansion`
// candidates, so a filter that keeps few of the nearest rows returns short results.
// expansion_search is fixed when an Index is constructed and the JS API cannot change it; a new
// value is applied by saving the index to workDir and loading it into a new Index configured
// with that value, after the old Index is emptied (release()). Searches are synchronous native
// calls. buildIndex saves the index and the attribute columns to workDir, so reopen loads them
// back without ingest (cold start, resume).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { z } from 'zod';
import { Index, MetricKind, ScalarKind } from 'usearch';
import * as sdk from '../../src/sdk/index.ts';
import { usearchSettingsSchema } from '../_shared/hnsw-settings.ts';

export const settingsSchema = usearchSettingsSchema;
export type UsearchSettings = z.infer<typeof settingsSchema>;

/** USearch's own file: the graph and the vectors. */
const INDEX_FILE = 'usearch.index';
/** An index of no vectors, loaded into a replaced Index to free its memory (release()). */
const EMPTY_FILE = 'usearch.empty.index';
/** The adapter's side of a row: attribute columns and the live flag, by key (RowColumns). */
const ROWS_FILE = 'usearch.rows.bin';

class UsearchSession implements sdk.EngineSession {
  private index: Index;
  private readonly d: number;
  private readonly metric: MetricKind;
  /** Attributes and the live flag (1: the key is in the index, not removed), by key. */
  private rows: sdk.RowColumns;
  private expansionSearch: number;
  private expansion = 1;
  /** The index is USearch's read-only view of its file (storage: view). */
  private viewed = false;
  /** The saved index file matches the in-memory index. */
  private savedClean = false;
  /** The saved columns file matches the columns in memory. */
  private colsClean = false;
  private readonly path: string;
  private readonly rowsPath: string;
  private readonly emptyPath: string;

  constructor(
    private readonly settings: UsearchSettings,
    n: number,
    d: number,
    metric: MetricKind,
    workDir: string,
  ) {
    this.d = d;
    this.metric = metric;
    this.expansionSearch = settings.expansion_search;
    this.index = this.makeIndex(this.expansionSearch);
    this.rows = sdk.RowColumns.empty(n);
    this.path = join(workDir, INDEX_FILE);
    this.rowsPath = join(workDir, ROWS_FILE);
    this.emptyPath = join(workDir, EMPTY_FILE);
  }

  /** Loads the index and the columns a previous session saved in workDir (Index.load reads
   * the whole file into memory, as the session that built it held it; the view layout maps it). */
  static reopen(settings: UsearchSettings, d: number, metric: MetricKind, workDir: string): UsearchSession {
    const s = new UsearchSession(settings, 0, d, metric, workDir);
    const { meta, rows } = sdk.RowColumns.read(s.rowsPath);
    if (meta.d !== d || meta.metric !== metric) {
      throw new Error(`usearch: ${s.rowsPath} belongs to a d=${String(meta.d)} metric ${String(meta.metric)} index, the dataset is d=${d} metric ${metric}`);
    }
    s.readFile(s.index);
    s.rows = rows;
    const liveRows = rows.liveCount();
    if (liveRows !== s.index.size())
      throw new Error(`usearch: ${s.path} holds ${s.index.size()} vectors, ${s.rowsPath} ${liveRows} live rows (saved by different sessions)`);
    s.savedClean = s.colsClean = true;
    return s;
  }

  /** The saved index into `index`: copied into memory, or mapped in the view layout. */
  private readFile(index: Index): void {
    if (this.settings.storage === 'view') index.view(this.path);
    else index.load(this.path);
    this.viewed = this.settings.storage === 'view';
  }

  /** Before a write: a viewed index is read-only, so it is loaded into memory, and stays there
   * until the next buildIndex maps the saved file again. */
  private writable(): void {
    if (!this.viewed) return;
    const next = this.makeIndex(this.expansionSearch);
    next.load(this.path);
    this.release(this.index);
    this.index = next;
    this.viewed = false;
  }

  /** Saves what changed since the last save: USearch's index file and the columns file. */
  private persist(): void {
    if (!this.savedClean) {
      this.index.save(this.path);
      this.savedClean = true;
    }
    if (!this.colsClean) {
      this.rows.save(this.rowsPath, { d: this.d, metric: this.metric });
      this.colsClean = true;
    }
  }

  private makeIndex(expansionSearch: number): Index {
    return new Index({
      dimensions: this.d,
      metric: this.metric,
      quantization: ScalarKind.F32,
      connectivity: this.settings.connectivity,
      expansion_add: this.settings.expansion_add,
      expansion_search: expansionSearch,
      multi: false,
    });
  }

  /** Adds rows whose ids are not live. Keys are BigInt; vectors are always a fresh copy (the
   * binding is documented to have read typed arrays from the start of their buffer). */
  private add(batch: sdk.RowBatch): void {
    const count = batch.ids.length;
    if (batch.vectors.length !== count * this.d) {
      throw new Error(`usearch: batch has ${batch.vectors.length} floats for ${count} rows of d=${this.d}`);
    }
    if (count === 0) return;
    for (let i = 0; i < count; i++) {
      const id = batch.ids[i];
      this.rows.fit(id);
      this.rows.setAttrs(batch, i, id);
    }
    const keys = BigUint64Array.from(batch.ids, (id) => BigInt(id));
    this.writable();
    this.savedClean = this.colsClean = false;
    this.index.add(keys, batch.vectors.slice(), this.settings.threads);
    for (const id of batch.ids) this.rows.markLive(id);
  }

  /** The last occurrence of each id in a batch (USearch refuses a key twice in one add). */
  private dedupe(batch: sdk.RowBatch): sdk.RowBatch {
    const last = new Map<number, number>();
    batch.ids.forEach((id, i) => last.set(id, i));
    if (last.size === batch.ids.length) return batch;
    const keep = [...last.values()].sort((a, b) => a - b);
    const vectors = new Float32Array(keep.length * this.d);
    keep.forEach((i, j) => vectors.set(batch.vectors.subarray(i * this.d, (i + 1) * this.d), j * this.d));
    const attrs = Object.fromEntries(sdk.ATTRIBUTES.map((a) => [a, Int32Array.from(keep, (i) => batch.attrs[a][i])])) as sdk.RowBatch['attrs'];
    return { ids: Int32Array.from(keep, (i) => batch.ids[i]), vectors, attrs };
  }

  async ingest(batch: sdk.RowBatch): Promise<void> {
    await this.upsert(batch);
  }

  async buildIndex(): Promise<void> {
    // USearch links every vector into the graph during add: nothing is left to build but the
    // saved copy that reopen loads (its write is part of the build time).
    this.persist();
    if (this.settings.storage === 'view' && !this.viewed) {
      // The built graph is searched from its file from now on: the in-memory copy goes.
      const next = this.makeIndex(this.expansionSearch);
      next.view(this.path);
      this.release(this.index);
      this.index = next;
      this.viewed = true;
    }
  }

  /** Applies expansion_search by reloading the saved index into an Index configured with it. */
  private reload(expansionSearch: number): void {
    if (expansionSearch === this.expansionSearch) return;
    if (!this.savedClean) {
      this.index.save(this.path);
      this.savedClean = true;
    }
    // The old copy is emptied before the new one is read, so the process never holds two and
    // the allocator can hand the freed blocks to the new copy.
    const size = this.index.size();
    this.release(this.index);
    const next = this.makeIndex(expansionSearch);
    try {
      this.readFile(next);
    } catch (e) {
      // Put the old copy back, so a failed knob change fails its point, not every later search.
      this.readFile(this.index);
      throw e;
    }
    if (next.size() !== size) throw new Error(`usearch: reloaded index has ${next.size()} vectors, expected ${size}`);
    this.index = next;
    this.expansionSearch = expansionSearch;
  }

  /** Frees a replaced Index's native memory now. The binding has no close, and V8 does not
   * count the native bytes, so an unreachable Index can wait for a collection that does not
   * come (12 knob changes on a 30,000-row index grew the host 267 MiB). Loading a file resets
   * the index first, so loading an empty one empties it. */
  private release(old: Index): void {
    if (!existsSync(this.emptyPath)) this.makeIndex(this.expansionSearch).save(this.emptyPath);
    old.load(this.emptyPath);
  }

  async setKnobs(knobs: sdk.Knobs): Promise<void> {
    this.expansion = (knobs.expansion as number | undefined) ?? 1;
    this.reload((knobs.expansion_search as number | undefined) ?? this.settings.expansion_search);
  }

  async search(request: sdk.SearchRequest): Promise<ArrayLike<number>> {
    const size = this.index.size();
    if (size === 0) return [];
    const k = request.k;
    const pred = request.filter === null ? null : this.rows.predicate(request.filter);
    // Post-filter: ask for k x expansion candidates (never more than the index holds).
    const wanted = pred === null ? Math.min(k, size) : Math.min(k * this.expansion, size);
    // A fresh copy: never hand the binding a view into a larger buffer.
    const m = this.index.search(request.vector.slice(), wanted, 1);
    const out: number[] = [];
    const live = this.rows.live;
    const keys = m.keys;
    for (let i = 0; i < keys.length && out.length < k; i++) {
      const id = Number(keys[i]);
      if (live[id] && (pred === null || pred(id))) out.push(id);
    }
    return out;
  }

  async explain(request: sdk.SearchRequest): Promise<string> {
    if (request.filter === null) return `HNSW search, expansion_search=max(${this.expansionSearch}, k=${request.k})`;
    const wanted = request.k * this.expansion;
    return `HNSW search of ${wanted} candidates (k=${request.k} x expansion=${this.expansion}, beam max(${this.expansionSearch}, ${wanted})), then post-filter ${sdk.filterKey(request.filter)} keeping the first ${request.k}`;
  }

  strategy(request: sdk.SearchRequest): sdk.Strategy {
    return sdk.declaredStrategy(request, 'graph walk', 'post-filter');
  }

  async diskBytes(): Promise<number> {
    // In-memory engine: the size of what it saves (graph + vectors, and the adapter's columns),
    // saved again first when writes changed the index.
    this.persist();
    return sdk.fileBytes(this.path, this.rowsPath);
  }

  async insert(batch: sdk.RowBatch): Promise<void> {
    await this.upsert(batch);
  }

  async upsert(batch: sdk.RowBatch): Promise<void> {
    const b = this.dedupe(batch);
    // USearch refuses a key that is present: remove the live ones first (a removed key can be
    // added again).
    const present = b.ids.filter((id) => this.rows.isLive(id));
    if (present.length > 0) await this.delete(present);
    this.add(b);
  }

  async delete(ids: Int32Array): Promise<void> {
    const gone = this.rows.liveOf(ids);
    if (gone.length === 0) return;
    this.writable();
    this.savedClean = this.colsClean = false;
    this.index.remove(BigUint64Array.from(gone, (id) => BigInt(id)));
    this.rows.markAllDeleted(gone);
  }

  async close(): Promise<void> {
    // What a later reopen finds is what this session held.
    if (this.index.size() > 0) this.persist();
  }
}

const participant: sdk.Participant<UsearchSettings> = {
  engine: 'usearch',
  engineVersion: async () => sdk.packageVersion('usearch'),
  settingsSchema,
  knobs: { expansion_search: sdk.intKnob(1), expansion: sdk.intKnob(1) },
  filters: sdk.EVERY_FILTER,
  filterStrategy: 'post-filter: HNSW search of k x expansion candidates, then the first k that pass (short results when too few pass)',
  concurrentSearch: false,
  // reopen loads (or, in the view layout, maps) the files buildIndex saved; searches and knob
  // reloads only read them.
  reopenInThreads: true,
  async open(ctx) {
    // cosine: vectors are unit length after prepare, so the index ranks by inner product.
    const metric = ctx.dataset.metric === 'l2' ? MetricKind.L2sq : MetricKind.IP;
    return new UsearchSession(ctx.settings, ctx.dataset.n, ctx.dataset.d, metric, ctx.workDir);
  },
  async reopen(ctx) {
    const metric = ctx.dataset.metric === 'l2' ? MetricKind.L2sq : MetricKind.IP;
    return UsearchSession.reopen(ctx.settings, ctx.dataset.d, metric, ctx.workDir);
  },
};

export default participant;
