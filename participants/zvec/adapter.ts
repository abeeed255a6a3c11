// zvec (npm @zvec/zvec, a prebuilt N-API binding of Alibaba's in-process vector database) as a
// vecbench participant. A collection in the run's workDir holds the vectors under an HNSW index
// and the attribute columns as INT32 fields with inverted indexes. Rows written go to a
// segment that is searched by brute force until optimize() builds the HNSW graph over it, so
// buildIndex is optimize(). Filters are zvec's own: the expression is evaluated on the inverted
// indexes and only matching documents may enter the result (prefilter). Searches are synchronous
// native calls (querySync). The collection is zvec's files in workDir (write-ahead logged), so
// reopen opens it again without ingest (cold start, a resumed run).
import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import {
  ZVecCollectionSchema,
  ZVecCreateAndOpen,
  ZVecDataType,
  ZVecIndexType,
  ZVecInitialize,
  ZVecLogLevel,
  ZVecMetricType,
  ZVecOpen,
  ZVecQuantizeType,
  type ZVecCollection,
  type ZVecDocInput,
  type ZVecStatus,
} from '@zvec/zvec';
import * as sdk from '../../src/sdk/index.ts';

const settingsSchema = sdk.settingsObject({
  /** HNSW links per node (zvec's m; its own default is 50). */
  m: sdk.intSetting(2, 256, 16),
  /** HNSW candidate list size while building (zvec's efConstruction; its default is 500). */
  ef_construction: sdk.intSetting(1, 10_000, 200),
  /** Vector storage in the index: full float32, or zvec's FP16 / INT8 quantization. */
  quantize: z.enum(['none', 'fp16', 'int8']).default('none'),
  /** Inverted indexes on the attribute fields (the prefilter evaluates the expression on them;
   * without them zvec scans the forward columns). */
  scalar_indexes: z.boolean().default(true),
});
type ZvecSettings = z.infer<typeof settingsSchema>;

/** The collection's directory inside workDir. */
const COLLECTION_DIR = 'zvec';
/** zvec's schema names must be plain identifiers. */
const COLLECTION_NAME = 'vectors';
const VECTOR_FIELD = 'v';
/** zvec refuses write batches above this size. */
const WRITE_BATCH = 1024;

const QUANTIZE = { none: ZVecQuantizeType.UNDEFINED, fp16: ZVecQuantizeType.FP16, int8: ZVecQuantizeType.INT8 } as const;

let initialized = false;
/** zvec's global configuration is set once per process: warnings and errors only on stderr. */
function initOnce(): void {
  if (initialized) return;
  ZVecInitialize({ logLevel: ZVecLogLevel.WARN });
  initialized = true;
}

function treeBytes(path: string): number {
  let total = 0;
  let entries;
  try {
    entries = readdirSync(path, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const e of entries) {
    const p = join(path, e.name);
    if (e.isDirectory()) total += treeBytes(p);
    else if (e.isFile()) total += statSync(p).size;
  }
  return total;
}

/** Throws on the first failed status of a write (a missing id on delete is not a failure). */
function checkStatuses(what: string, statuses: ZVecStatus[], ignore: readonly string[] = []): void {
  const bad = statuses.find((s) => !s.ok && !ignore.includes(s.code));
  if (bad) throw new Error(`zvec: ${what} failed: ${bad.code} ${bad.message}`);
}

class ZvecSession implements sdk.EngineSession {
  private ef = 300;
  /** Rows written since the last optimize (searched by brute force until then). */
  private unindexed = 0;
  private closed = false;

  constructor(
    private readonly collection: ZVecCollection,
    private readonly d: number,
  ) {}

  private docs(batch: sdk.RowBatch, from: number, to: number): ZVecDocInput[] {
    const out: ZVecDocInput[] = [];
    const d = this.d;
    for (let i = from; i < to; i++) {
      const fields: Record<string, number> = {};
      for (const a of sdk.ATTRIBUTES) fields[a] = batch.attrs[a][i];
      // The binding copies the vector out of the view while it converts the batch.
      out.push({ id: String(batch.ids[i]), vectors: { [VECTOR_FIELD]: batch.vectors.subarray(i * d, (i + 1) * d) }, fields });
    }
    return out;
  }

  /** Upserts the rows in batches zvec accepts. */
  private write(batch: sdk.RowBatch): void {
    const m = batch.ids.length;
    if (batch.vectors.length !== m * this.d) {
      throw new Error(`zvec: batch has ${batch.vectors.length} floats for ${m} rows of d=${this.d}`);
    }
    for (let from = 0; from < m; from += WRITE_BATCH) {
      const to = Math.min(m, from + WRITE_BATCH);
      checkStatuses('upsert', this.collection.upsertSync(this.docs(batch, from, to)));
    }
    this.unindexed += m;
  }

  async ingest(batch: sdk.RowBatch): Promise<void> {
    this.write(batch);
  }

  async buildIndex(): Promise<void> {
    // The rows sit in write segments searched by brute force; optimize builds the HNSW graph
    // (and merges segments), so it is the index build.
    this.collection.optimizeSync();
    this.unindexed = 0;
  }

  async setKnobs(knobs: sdk.Knobs): Promise<void> {
    if (knobs.ef !== undefined) this.ef = knobs.ef as number;
  }

  async search(request: sdk.SearchRequest): Promise<ArrayLike<number>> {
    const docs = this.collection.querySync({
      fieldName: VECTOR_FIELD,
      vector: request.vector,
      topk: request.k,
      // No scalar fields and no vectors back: only the ids are needed.
      outputFields: [],
      ...(request.filter ? { filter: sdk.filterLiteral(request.filter) } : {}),
      params: { indexType: ZVecIndexType.HNSW, ef: this.ef },
    });
    const out = new Int32Array(docs.length);
    for (let i = 0; i < docs.length; i++) out[i] = Number(docs[i].id);
    return out;
  }

  async explain(request: sdk.SearchRequest): Promise<string> {
    const f =
      request.filter === null ? 'no filter' : `prefilter "${sdk.filterLiteral(request.filter)}" evaluated by zvec (inverted indexes on the attribute fields)`;
    const pending = this.unindexed > 0 ? `; ${this.unindexed} rows written since the last optimize are searched by brute force` : '';
    return `HNSW search, ef=${this.ef}, topk=${request.k}; ${f}${pending}`;
  }

  strategy(request: sdk.SearchRequest): sdk.Strategy {
    return sdk.declaredStrategy(request, 'graph walk', 'pre-filter + graph walk');
  }

  async diskBytes(): Promise<number> {
    return treeBytes(this.collection.path);
  }

  async insert(batch: sdk.RowBatch): Promise<void> {
    this.write(batch);
  }

  async upsert(batch: sdk.RowBatch): Promise<void> {
    this.write(batch);
  }

  async delete(ids: Int32Array): Promise<void> {
    const list = Array.from(ids, (id) => String(id));
    for (let from = 0; from < list.length; from += WRITE_BATCH) {
      checkStatuses('delete', this.collection.deleteSync(list.slice(from, from + WRITE_BATCH)), ['ZVEC_NOT_FOUND']);
    }
  }

  async compact(): Promise<void> {
    // optimize: merges segments, drops deleted documents and builds the HNSW graph over the
    // rows written since the last one.
    this.collection.optimizeSync();
    this.unindexed = 0;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.collection.closeSync();
  }
}

function metricType(metric: sdk.Metric) {
  // cosine: vectors are unit length after prepare, so the index ranks by inner product.
  return metric === 'l2' ? ZVecMetricType.L2 : ZVecMetricType.IP;
}

function openSession(ctx: sdk.OpenContext<ZvecSettings>, existing: boolean): ZvecSession {
  initOnce();
  const s = ctx.settings;
  const { d } = ctx.dataset;
  const path = join(ctx.workDir, COLLECTION_DIR);
  if (existing) {
    if (!existsSync(path)) throw new Error(`zvec: no collection in ${path}; nothing to reopen`);
    const collection = ZVecOpen(path);
    const v = collection.schema.vector(VECTOR_FIELD);
    if (v.dimension !== d) {
      collection.closeSync();
      throw new Error(`zvec: the collection in ${path} holds d=${String(v.dimension)} vectors, the dataset is d=${d}`);
    }
    return new ZvecSession(collection, d);
  }
  // A reload after a crash gets the same workDir: start from an empty collection.
  rmSync(path, { recursive: true, force: true });
  const inverted = s.scalar_indexes ? { indexParams: { indexType: ZVecIndexType.INVERT, enableRangeOptimization: true } as const } : {};
  const schema = new ZVecCollectionSchema({
    name: COLLECTION_NAME,
    vectors: {
      name: VECTOR_FIELD,
      dataType: ZVecDataType.VECTOR_FP32,
      dimension: d,
      indexParams: {
        indexType: ZVecIndexType.HNSW,
        metricType: metricType(ctx.dataset.metric),
        m: s.m,
        efConstruction: s.ef_construction,
        quantizeType: QUANTIZE[s.quantize],
      },
    },
    fields: sdk.ATTRIBUTES.map((a) => ({ name: a, dataType: ZVecDataType.INT32, ...inverted })),
  });
  return new ZvecSession(ZVecCreateAndOpen(path, schema), d);
}

const participant: sdk.Participant<ZvecSettings> = {
  engine: 'zvec',
  engineVersion: async () => sdk.packageVersion('@zvec/zvec'),
  settingsSchema,
  knobs: { ef: sdk.intKnob(1) },
  filters: sdk.EVERY_FILTER,
  filterStrategy: "prefilter: zvec evaluates the expression on the attribute fields' inverted indexes, and only matching documents may enter the HNSW result",
  concurrentSearch: false,
  // zvec locks an open collection against a second open, read-only too: each search thread
  // reopens its own copy of the work directory.
  reopenInThreads: 'copy',
  open: async (ctx) => openSession(ctx, false),
  reopen: async (ctx) => openSession(ctx, true),
};

export default participant;
