// The brute-force reference: exact top-k over the rows that pass the filter, using the same
// exact search as the ground truth. It must read recall 1.000 in every asked group; if it
// does not, the harness (not the engines) is wrong.
//
// Its "index" is a flat file: buildIndex writes the rows (vectors, ids, attribute columns,
// deleted ids) to workDir, and reopen reads them back into memory, so a cold start and a
// resumed run need no ingest.
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import type { z } from 'zod';
import * as sdk from '../../src/sdk/index.ts';

const settingsSchema = sdk.settingsObject({});

/** The row-major float32 vectors of the rows, in insertion order. */
const VECTORS_FILE = 'exact.vectors.f32';
/** ids, attribute columns and deleted ids (src/adapters/persist.ts columns file). */
const ROWS_FILE = 'exact.rows.bin';

class ExactSession implements sdk.EngineSession {
  private base: Float32Array;
  private attrs: sdk.RowAttributes;
  private n = 0;
  /** ids of rows in insertion order; `live` marks rows not deleted. */
  private ids: Int32Array;
  private deleted = new Set<number>();
  /** The files in workDir lag behind the rows in memory. */
  private dirty = true;

  constructor(
    private readonly d: number,
    private readonly metric: sdk.Metric,
    capacity: number,
    private readonly workDir: string,
  ) {
    this.base = new Float32Array(capacity * d);
    this.ids = new Int32Array(capacity);
    this.attrs = Object.fromEntries(sdk.ATTRIBUTES.map((a) => [a, new Int32Array(capacity)])) as sdk.RowAttributes;
  }

  /** The rows a previous session wrote to workDir (buildIndex, close). */
  static reopen(d: number, metric: sdk.Metric, workDir: string): ExactSession {
    const rowsPath = join(workDir, ROWS_FILE);
    const { meta, columns } = sdk.readColumns(rowsPath);
    if (meta.d !== d || meta.metric !== metric) {
      throw new Error(`exact: ${rowsPath} holds d=${String(meta.d)} ${String(meta.metric)} rows, the dataset is d=${d} ${metric}`);
    }
    const n = columns.ids.length;
    const s = new ExactSession(d, metric, 0, workDir);
    s.base = sdk.readFloats(join(workDir, VECTORS_FILE), n * d);
    s.ids = columns.ids as Int32Array;
    s.attrs = Object.fromEntries(sdk.ATTRIBUTES.map((a) => [a, columns[a] as Int32Array])) as sdk.RowAttributes;
    s.deleted = new Set(columns.deleted as Int32Array);
    s.n = n;
    s.dirty = false;
    return s;
  }

  private grow(need: number): void {
    if (need <= this.ids.length) return;
    const cap = Math.max(need, this.ids.length * 2);
    const base = new Float32Array(cap * this.d);
    base.set(this.base);
    this.base = base;
    const ids = new Int32Array(cap);
    ids.set(this.ids);
    this.ids = ids;
    for (const a of sdk.ATTRIBUTES) {
      const col = new Int32Array(cap);
      col.set(this.attrs[a]);
      this.attrs[a] = col;
    }
  }

  /** Writes the rows to workDir: the vectors file, then the rows file (its presence says the
   * pair is whole: reopen reads the rows file first and checks the vectors' size by it). */
  private persist(): void {
    sdk.writeFloats(join(this.workDir, VECTORS_FILE), this.base.subarray(0, this.n * this.d));
    const cols: Record<string, Int32Array> = { ids: this.ids.subarray(0, this.n) };
    for (const a of sdk.ATTRIBUTES) cols[a] = this.attrs[a].subarray(0, this.n);
    cols.deleted = Int32Array.from(this.deleted);
    sdk.writeColumns(join(this.workDir, ROWS_FILE), { d: this.d, metric: this.metric }, cols);
    this.dirty = false;
  }

  async ingest(batch: Parameters<sdk.EngineSession['ingest']>[0]): Promise<void> {
    const m = batch.ids.length;
    this.grow(this.n + m);
    this.base.set(batch.vectors, this.n * this.d);
    this.ids.set(batch.ids, this.n);
    for (const a of sdk.ATTRIBUTES) this.attrs[a].set(batch.attrs[a], this.n);
    for (const id of batch.ids) this.deleted.delete(id);
    this.n += m;
    this.dirty = true;
  }

  async buildIndex(): Promise<void> {
    this.persist();
  }

  /** No knobs (the harness refuses any a ladder names). */
  async setKnobs(_knobs: sdk.Knobs): Promise<void> {}

  async search(req: Parameters<sdk.EngineSession['search']>[0]): Promise<Int32Array> {
    let rows: Int32Array | undefined;
    if (req.filter !== null || this.deleted.size > 0) {
      rows = sdk.matchingRows(req.filter, this.attrs, this.n);
      if (this.deleted.size > 0) rows = rows.filter((r) => !this.deleted.has(this.ids[r]));
    }
    const r = sdk.exactTopK({
      base: this.base.subarray(0, this.n * this.d),
      n: this.n,
      d: this.d,
      queries: req.vector,
      nq: 1,
      metric: this.metric,
      k: req.k,
      rows,
    });
    return r.ids.subarray(0, r.counts[0]).map((i) => this.ids[i]);
  }

  async insert(batch: Parameters<sdk.EngineSession['ingest']>[0]): Promise<void> {
    return this.ingest(batch);
  }

  async delete(ids: Int32Array): Promise<void> {
    for (const id of ids) this.deleted.add(id);
    this.dirty = true;
  }

  strategy(request: sdk.SearchRequest): sdk.Strategy {
    return sdk.declaredStrategy(request, 'exact scan', 'exact scan of matches');
  }

  async diskBytes(): Promise<number> {
    // The two files it keeps in workDir (rewritten first when writes changed the rows).
    if (this.dirty) this.persist();
    return sdk.fileBytes(join(this.workDir, VECTORS_FILE), join(this.workDir, ROWS_FILE));
  }

  async close(): Promise<void> {
    if (this.dirty && this.n > 0) this.persist();
  }
}

const participant: sdk.Participant<z.infer<typeof settingsSchema>> = {
  engine: 'vecbench exact search',
  engineVersion: async () => `vecbench exact (${sdk.nativeAvailable() ? 'native OpenBLAS' : 'portable JS'})`,
  settingsSchema,
  // The exact scan has no search knob.
  knobs: {},
  filters: sdk.EVERY_FILTER,
  filterStrategy: 'exact scan of the rows that pass the filter',
  concurrentSearch: false,
  // reopen reads the two files buildIndex saved into memory; searches never write them.
  // Not reopenInThreads: with the native addon each search already runs on every core.
  searchParallelism: () => (sdk.nativeAvailable() ? `each search on ${availableParallelism()} threads (native addon)` : null),

  open: async (ctx: sdk.OpenContext<z.infer<typeof settingsSchema>>) => new ExactSession(ctx.dataset.d, ctx.dataset.metric, ctx.dataset.n, ctx.workDir),
  reopen: async (ctx: sdk.OpenContext<z.infer<typeof settingsSchema>>) => ExactSession.reopen(ctx.dataset.d, ctx.dataset.metric, ctx.workDir),
};
export default participant;
