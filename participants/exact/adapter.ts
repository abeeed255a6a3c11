// The brute-force reference: exact top-k over the rows that pass the filter, using the same
// exact search as the ground truth. It must read recall 1.000 in every asked group; if it
// does not, the harness (not the engines) is wrong.
import { z } from 'zod';
import { ATTRIBUTES, type EngineSession, type Metric, type Participant, type RowAttributes } from '../../src/contracts.ts';
import { matchingRows } from '../../src/datasets/groups.ts';
import { exactTopK, nativeAvailable } from '../../src/groundtruth/exact.ts';

const settingsSchema = z.object({}).strict();

class ExactSession implements EngineSession {
  private base: Float32Array;
  private attrs: RowAttributes;
  private n = 0;
  /** ids of rows in insertion order; `live` marks rows not deleted. */
  private ids: Int32Array;
  private deleted = new Set<number>();

  constructor(
    private readonly d: number,
    private readonly metric: Metric,
    capacity: number,
  ) {
    this.base = new Float32Array(capacity * d);
    this.ids = new Int32Array(capacity);
    this.attrs = Object.fromEntries(ATTRIBUTES.map((a) => [a, new Int32Array(capacity)])) as RowAttributes;
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
    for (const a of ATTRIBUTES) {
      const col = new Int32Array(cap);
      col.set(this.attrs[a]);
      this.attrs[a] = col;
    }
  }

  async ingest(batch: Parameters<EngineSession['ingest']>[0]): Promise<void> {
    const m = batch.ids.length;
    this.grow(this.n + m);
    this.base.set(batch.vectors, this.n * this.d);
    this.ids.set(batch.ids, this.n);
    for (const a of ATTRIBUTES) this.attrs[a].set(batch.attrs[a], this.n);
    for (const id of batch.ids) this.deleted.delete(id);
    this.n += m;
  }

  async buildIndex(): Promise<void> {}
  async setKnobs(): Promise<void> {}

  async search(req: Parameters<EngineSession['search']>[0]): Promise<Int32Array> {
    let rows: Int32Array | undefined;
    if (req.filter !== null || this.deleted.size > 0) {
      rows = matchingRows(req.filter, this.attrs, this.n);
      if (this.deleted.size > 0) rows = rows.filter((r) => !this.deleted.has(this.ids[r]));
    }
    const r = exactTopK({ base: this.base.subarray(0, this.n * this.d), n: this.n, d: this.d, queries: req.vector, nq: 1, metric: this.metric, k: req.k, rows });
    return r.ids.subarray(0, r.counts[0]).map((i) => this.ids[i]);
  }

  async insert(batch: Parameters<EngineSession['ingest']>[0]): Promise<void> {
    return this.ingest(batch);
  }

  async delete(ids: Int32Array): Promise<void> {
    for (const id of ids) this.deleted.add(id);
  }

  async diskBytes(): Promise<number> {
    return this.n * this.d * 4;
  }

  async close(): Promise<void> {}
}

const participant: Participant<z.infer<typeof settingsSchema>> = {
  engine: 'vecbench exact search',
  engineVersion: async () => `vecbench exact (${nativeAvailable() ? 'native OpenBLAS' : 'portable JS'})`,
  settingsSchema,
  filters: { fields: ATTRIBUTES, ops: ['eq', 'range', 'and'] },
  filterStrategy: 'exact scan of the rows that pass the filter',
  concurrentSearch: false,
  open: async (ctx) => new ExactSession(ctx.dataset.d, ctx.dataset.metric, ctx.dataset.n),
};
export default participant;
