// LanceDB (embedded, @lancedb/lancedb) as a vecbench participant. The table lives in the run's
// workDir; rows carry an explicit Arrow schema so the attribute columns are Int32 (JS numbers
// would otherwise become Float64 and a Bitmap index on them fails). The vector index and the
// scalar indexes on the attribute columns are built after ingest; searches are async native
// calls (tokio threads), so several can overlap. The table and its indexes are LanceDB's own
// files in workDir: reopen opens that table again (cold start, a resumed run).
import { readdir, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { z } from 'zod';
import * as lancedb from '@lancedb/lancedb';
import * as sdk from '../../src/sdk/index.ts';

const require = createRequire(import.meta.url);
// LanceDB's own code loads apache-arrow through require(); the ESM build of apache-arrow is a
// different module instance whose Table fails LanceDB's `instanceof` checks, so this adapter
// uses the CommonJS instance too.
const arrow = require('apache-arrow') as typeof import('apache-arrow');

const INDEX_TYPES = ['IVF_HNSW_SQ', 'IVF_HNSW_PQ', 'IVF_FLAT', 'IVF_PQ', 'IVF_RQ', 'NONE'] as const;
const positiveInt = z.number().int().positive();

export const settingsSchema = sdk.settingsObject({
  /** Vector index type. IVF_HNSW_* build one HNSW graph per IVF partition; NONE = flat scan. */
  index_type: z.enum(INDEX_TYPES).default('IVF_FLAT'),
  /** IVF partitions; absent: 1 for IVF_HNSW_* (one graph), round(sqrt(n)) (LanceDB's default) for the IVF_* types. */
  num_partitions: positiveInt.optional(),
  /** IVF_* types: partitions = round(n / rows_per_partition) instead (ignored when
   * num_partitions is given). Scales the partition count with the table. */
  rows_per_partition: positiveInt.optional(),
  /** IVF_* types with rows_per_partition: at least this many partitions (a small table gets a
   * fine partitioning, so one more probe moves recall by little), but never fewer than
   * MIN_ROWS_PER_PARTITION rows a partition on average. */
  min_partitions: positiveInt.optional(),
  /** HNSW: neighbours per node. */
  m: positiveInt.default(20),
  /** HNSW: candidate list size while building. */
  ef_construction: positiveInt.default(300),
  /** PQ: sub-vectors (absent: LanceDB's default, d/16 or d/8). */
  num_sub_vectors: positiveInt.optional(),
  /** PQ / RQ: bits per code (absent: LanceDB's default, 8 for PQ, 1 for RQ). */
  num_bits: positiveInt.optional(),
  /** IVF k-means: training vectors per partition. */
  sample_rate: positiveInt.default(256),
  /** IVF k-means: iterations. */
  max_iterations: positiveInt.default(50),
  /** Distance type the engine uses for metric ip / cosine (vectors are unit length, so dot,
   * cosine and l2 rank alike). auto: cosine for the SQ index types (LanceDB 0.31's SQ dot
   * distance drops the quantizer's offset and ranks wrongly), dot otherwise. */
  ip_distance: z.enum(['auto', 'dot', 'cosine', 'l2']).default('auto'),
  /** Scalar indexes on the attribute columns (BITMAP for categories, BTREE for num and id). */
  scalar_indexes: z.boolean().default(true),
  /** Compact the ingest batches' fragments into one before the index is built. */
  compact_before_index: z.boolean().default(true),
});
export type LanceSettings = z.infer<typeof settingsSchema>;

/** Columns indexed with BITMAP (low cardinality) and BTREE (many distinct values). */
const BITMAP_COLUMNS: readonly sdk.AttrName[] = ['cat10', 'cat100', 'cat1000', 'cluster', 'lang', 'region', 'tenant', 'label'];
const BTREE_COLUMNS: readonly string[] = ['num', 'measure', 'id'];
const TABLE = 'vectors';
const KNOBS = {
  nprobes: sdk.intKnob(1),
  max_nprobes: sdk.intKnob(0, Number.POSITIVE_INFINITY, '0: no maximum'),
  refine_factor: sdk.intKnob(0, Number.POSITIVE_INFINITY, '0: no refine'),
  ef: sdk.intKnob(1),
};
type LanceKnobs = Record<keyof typeof KNOBS, number | null>;
const NO_KNOBS: LanceKnobs = { nprobes: null, max_nprobes: null, refine_factor: null, ef: null };

type Distance = 'dot' | 'cosine' | 'l2';

function distanceFor(metric: sdk.Metric, s: LanceSettings): Distance {
  if (metric === 'l2') return 'l2';
  // ip / cosine: vectors are unit length after prepare, so inner product is the ranking.
  if (s.ip_distance !== 'auto') return s.ip_distance;
  return s.index_type === 'IVF_HNSW_SQ' ? 'cosine' : 'dot';
}

/** For ip with a distance other than dot the ranking is only the same on unit vectors. */
function checkUnitLength(batch: sdk.RowBatch, d: number): void {
  const off = sdk.firstNonUnitRow(batch, d);
  if (off)
    throw new sdk.UserError(
      `lancedb: row ${off.id} has norm ${off.norm.toFixed(4)}; metric ip is served with a non-dot distance only for unit vectors: set index.ip_distance to "dot"`,
    );
}

function makeSchema(d: number, withText = false) {
  const int = (name: string) => new arrow.Field(name, new arrow.Int32(), false);
  return new arrow.Schema([
    int('id'),
    new arrow.Field('vector', new arrow.FixedSizeList(d, new arrow.Field('item', new arrow.Float32(), true)), false),
    ...sdk.ATTRIBUTES.map(int),
    // Datasets with text get a text column and a full-text index (the keyword arm, docs/method.md §8).
    ...(withText ? [new arrow.Field('text', new arrow.Utf8(), false)] : []),
  ]);
}

/** LanceDB's full-text index (its own inverted index, BM25-ranked): English stemming and stop
 * words, like the client-side BM25 arm, so the two keyword arms tokenize alike. */
const FTS_OPTIONS = { baseTokenizer: 'simple', language: 'English', lowercase: true, stem: true, removeStopWords: true } as const;

function toArrowTable(schema: ReturnType<typeof makeSchema>, d: number, batch: sdk.RowBatch) {
  const m = batch.ids.length;
  if (batch.vectors.length !== m * d) throw new Error(`lancedb: batch has ${batch.vectors.length} floats for ${m} rows of d=${d}`);
  const int = (data: Int32Array) => arrow.makeData({ type: new arrow.Int32(), length: m, data, nullCount: 0 });
  const floats = arrow.makeData({ type: new arrow.Float32(), length: m * d, data: batch.vectors, nullCount: 0 });
  const vectors = arrow.makeData({ type: schema.fields[1].type, length: m, child: floats, nullCount: 0 });
  const children = [int(batch.ids), vectors, ...sdk.ATTRIBUTES.map((a) => int(batch.attrs[a]))];
  if (schema.fields.some((f) => f.name === 'text')) {
    // Write batches without text (e.g. churn rows) index as empty text rather than fail.
    children.push(arrow.vectorFromArray(batch.text ?? new Array<string>(m).fill(''), new arrow.Utf8()).data[0]);
  }
  const struct = arrow.makeData({ type: new arrow.Struct(schema.fields), length: m, children, nullCount: 0 });
  return new arrow.Table(schema, [new arrow.RecordBatch(schema, struct)]);
}

/** The fewest rows a partition gets on average from min_partitions: k-means needs points to
 * place its centroids. */
const MIN_ROWS_PER_PARTITION = 20;

function ivfPartitions(s: LanceSettings, n: number): number {
  if (s.num_partitions !== undefined) return s.num_partitions;
  if (s.index_type.startsWith('IVF_HNSW')) return 1;
  if (s.rows_per_partition === undefined) return Math.max(1, Math.round(Math.sqrt(n)));
  const scaled = Math.round(n / s.rows_per_partition);
  const floor = Math.min(s.min_partitions ?? 0, Math.floor(n / MIN_ROWS_PER_PARTITION));
  return Math.max(1, scaled, floor);
}

function vectorIndexConfig(s: LanceSettings, n: number, distanceType: Distance): lancedb.Index | null {
  const ivf = {
    distanceType,
    numPartitions: ivfPartitions(s, n),
    sampleRate: s.sample_rate,
    maxIterations: s.max_iterations,
  };
  const hnsw = { ...ivf, m: s.m, efConstruction: s.ef_construction };
  const pq = { ...(s.num_sub_vectors !== undefined ? { numSubVectors: s.num_sub_vectors } : {}), ...(s.num_bits !== undefined ? { numBits: s.num_bits } : {}) };
  switch (s.index_type) {
    case 'IVF_HNSW_SQ':
      return lancedb.Index.hnswSq(hnsw);
    case 'IVF_HNSW_PQ':
      return lancedb.Index.hnswPq({ ...hnsw, ...(s.num_sub_vectors !== undefined ? { numSubVectors: s.num_sub_vectors } : {}) });
    case 'IVF_FLAT':
      return lancedb.Index.ivfFlat(ivf);
    case 'IVF_PQ':
      return lancedb.Index.ivfPq({ ...ivf, ...pq });
    case 'IVF_RQ':
      return lancedb.Index.ivfRq({ ...ivf, ...(s.num_bits !== undefined ? { numBits: s.num_bits } : {}) });
    case 'NONE':
      return null;
  }
}

async function treeBytes(path: string): Promise<number> {
  let total = 0;
  let entries;
  try {
    entries = await readdir(path, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const e of entries) {
    const p = join(path, e.name);
    if (e.isDirectory()) total += await treeBytes(p);
    else if (e.isFile()) total += (await stat(p)).size;
  }
  return total;
}

/** A session on the table in ctx.workDir: a new, empty one (open), or with `existing` the
 * table and indexes a closed session left there (reopen: no ingest, no index build). */
async function connectSession(ctx: sdk.OpenContext<LanceSettings>, existing: boolean): Promise<sdk.EngineSession> {
  const s = ctx.settings;
  const { d, metric } = ctx.dataset;
  const distanceType = distanceFor(metric, s);
  const mustBeUnit = metric === 'ip' && distanceType !== 'dot';
  const withText = ctx.dataset.hasText;
  const schema = makeSchema(d, withText);
  const db = await lancedb.connect(ctx.workDir);
  let table: lancedb.Table | null = null;
  let vectorIndexed = false;
  let knobs: LanceKnobs = { ...NO_KNOBS };
  if (existing) {
    if (!(await db.tableNames()).includes(TABLE)) {
      db.close();
      throw new Error(`lancedb: no table ${TABLE} in ${ctx.workDir}; nothing to reopen`);
    }
    table = await db.openTable(TABLE);
    vectorIndexed = (await table.listIndices()).some((i) => i.columns.includes('vector'));
  }

  const need = (): lancedb.Table => {
    if (!table) throw new Error('lancedb: no rows ingested yet');
    return table;
  };

  const write = async (batch: sdk.RowBatch): Promise<void> => {
    if (batch.ids.length === 0) return;
    if (mustBeUnit) checkUnitLength(batch, d);
    const data = toArrowTable(schema, d, batch);
    if (!table) table = await db.createTable(TABLE, data, { mode: 'create', schema });
    else await table.add(data);
  };

  const query = (req: sdk.SearchRequest) => {
    let q = need().query().nearestTo(req.vector).distanceType(distanceType).limit(req.k);
    // nprobes sets both LanceDB's minimum and maximum; max_nprobes then raises the maximum
    // (0 = none), letting LanceDB probe further partitions when it judges the first ones
    // did not yield enough (see the README: not used by the default ladders).
    if (knobs.nprobes !== null) q = q.nprobes(knobs.nprobes);
    if (knobs.max_nprobes !== null) q = q.maximumNprobes(knobs.max_nprobes);
    if (knobs.refine_factor !== null && knobs.refine_factor > 0) q = q.refineFactor(knobs.refine_factor);
    // LanceDB's HNSW refuses ef < k, where k is limit x refine_factor when refining; a ladder
    // value below that is raised to it (LanceDB's own default ef is 1.5 x that k).
    const refine = knobs.refine_factor !== null && knobs.refine_factor > 0 ? knobs.refine_factor : 1;
    if (knobs.ef !== null) q = q.ef(Math.max(knobs.ef, req.k * refine));
    if (req.filter) q = q.where(sdk.filterLiteral(req.filter)); // prefilter is the default
    // Selecting _distance explicitly avoids a warning per query on stderr.
    return q.select(['id', '_distance']);
  };

  const session: sdk.EngineSession = {
    async ingest(batch) {
      await write(batch);
    },

    async buildIndex() {
      const t = need();
      // One fragment instead of one per ingest batch; the pre-compaction files are pruned so
      // diskBytes counts the live table only.
      if (s.compact_before_index) await t.optimize({ cleanupOlderThan: new Date() });
      const n = await t.countRows();
      const config = vectorIndexConfig(s, n, distanceType);
      if (config) {
        ctx.log(`vector index ${s.index_type}, ${ivfPartitions(s, n)} partition(s), distance ${distanceType}, ${n} rows`);
        await t.createIndex('vector', { config, replace: true });
        vectorIndexed = true;
      }
      if (s.scalar_indexes) {
        for (const c of BITMAP_COLUMNS) await t.createIndex(c, { config: lancedb.Index.bitmap(), replace: true });
        for (const c of BTREE_COLUMNS) await t.createIndex(c, { config: lancedb.Index.btree(), replace: true });
      }
      if (withText) await t.createIndex('text', { config: lancedb.Index.fts(FTS_OPTIONS), replace: true });
      const pending = (await t.listIndices()).filter((i) => (i.numUnindexedRows ?? 0) > 0).map((i) => i.name);
      if (pending.length > 0) ctx.log(`indexes with unindexed rows after build: ${pending.join(', ')}`);
    },

    async setKnobs(k: sdk.Knobs) {
      const next: LanceKnobs = { ...NO_KNOBS };
      for (const [name, value] of Object.entries(k)) next[name as keyof LanceKnobs] = value as number;
      knobs = next;
    },

    async search(req) {
      const result = await query(req).toArrow();
      const ids = result.getChild('id');
      if (!ids) return new Int32Array(0);
      const out = ids.toArray() as Int32Array;
      return out.length > req.k ? out.subarray(0, req.k) : out;
    },

    async explain(req) {
      return query(req).explainPlan(true);
    },

    checkPlan(plan, req) {
      // LanceDB silently falls back to a flat KNN scan when the query cannot use the vector
      // index (e.g. a distance type other than the index's).
      if (vectorIndexed && !/ANNIvfPartition|ANNSubIndex/.test(plan)) {
        throw new Error('lancedb: the plan does not use the vector index (flat KNN scan)');
      }
      if (req.filter && s.scalar_indexes && !/ScalarIndexQuery/.test(plan)) {
        throw new Error('lancedb: the filtered plan does not evaluate the predicate with a scalar index');
      }
    },

    strategy(req, plan) {
      if (plan === null) return sdk.declaredStrategy(req, 'IVF probe', 'pre-filter + IVF probe');
      const ann = /ANNIvfPartition|ANNSubIndex/.test(plan);
      const scalar = /ScalarIndexQuery/.test(plan);
      const label = !ann
        ? req.filter
          ? 'exact scan of matches'
          : 'exact scan'
        : req.filter
          ? scalar
            ? 'pre-filter (scalar index) + IVF probe'
            : 'pre-filter + IVF probe'
          : 'IVF probe';
      return { label, observed: true };
    },

    async diskBytes() {
      return treeBytes(join(ctx.workDir, `${TABLE}.lance`));
    },

    async insert(batch) {
      await write(batch);
    },

    async upsert(batch) {
      if (batch.ids.length === 0) return;
      if (!table) return write(batch);
      if (mustBeUnit) checkUnitLength(batch, d);
      await table
        .mergeInsert('id')
        .whenMatchedUpdateAll()
        .whenNotMatchedInsertAll()
        .execute(toArrowTable(schema, d, batch));
    },

    async delete(ids) {
      const t = need();
      // One delete per chunk keeps the SQL short; every chunk is a new table version.
      const chunk = 5000;
      for (let from = 0; from < ids.length; from += chunk) {
        const list = Array.from(ids.subarray(from, Math.min(ids.length, from + chunk))).join(',');
        await t.delete(`id IN (${list})`);
      }
    },

    async compact() {
      // optimize() = compaction of small fragments + removal of deleted rows + adding the new
      // rows to the existing indexes (as delta segments); old versions are pruned now.
      await need().optimize({ cleanupOlderThan: new Date() });
    },

    async close() {
      table?.close();
      table = null;
      db.close();
    },
  };
  if (withText) {
    // The keyword arm: LanceDB's full-text search (prefiltered like the vector search).
    session.keywordSearch = async (text, k, filter) => {
      let q = need().query().fullTextSearch(text).limit(k);
      if (filter) q = q.where(sdk.filterLiteral(filter));
      // Selecting _score explicitly avoids a warning per query on stderr.
      const ids = (await q.select(['id', '_score']).toArrow()).getChild('id');
      return ids ? (ids.toArray() as Int32Array) : new Int32Array(0);
    };
    // LanceDB's own hybrid query (query(req).fullTextSearch(text).rerank(RRFReranker)) works,
    // but in 0.31 it accepts no column selection except ['id'], which logs two deprecation
    // warnings per query on stderr (the `_distance` / `_score` auto-projection); so the
    // harness fuses the two arms itself (client-side RRF, two calls) until that is fixed.
  }
  return session;
}

const participant: sdk.Participant<LanceSettings> = {
  engine: 'LanceDB',
  engineVersion: async () => sdk.packageVersion('@lancedb/lancedb'),
  settingsSchema,
  knobs: KNOBS,
  filters: sdk.EVERY_FILTER,
  filterStrategy: 'prefilter: the SQL predicate is evaluated first (scalar BITMAP/BTREE indexes), its row set masks the ANN search',
  concurrentSearch: true,
  keywordScoring: "BM25 over LanceDB's own full-text index (simple tokenizer, English stems, stop words out)",
  open: (ctx) => connectSession(ctx, false),
  reopen: (ctx) => connectSession(ctx, true),
  checkDataset(s, dataset) {
    // LanceDB's PQ splits each vector into equal sub-vectors: it refuses num_sub_vectors that do
    // not divide the dimension, but only at index build, after the whole ingest.
    const m = s.num_sub_vectors;
    if (m === undefined || !s.index_type.includes('PQ') || dataset.d % m === 0) return null;
    const divisors = Array.from({ length: dataset.d }, (_, i) => i + 1).filter((x) => dataset.d % x === 0 && x > 1);
    return `settings index.num_sub_vectors = ${m} does not divide the ${dataset.d} dimensions of dataset ${dataset.name} (${s.index_type} splits each vector into equal sub-vectors); use a divisor of ${dataset.d} (${divisors.slice(-6).join(', ')}) or leave num_sub_vectors out`;
  },
};

export default participant;
