// Orama (@orama/orama) as a vecbench participant: a search engine written in TypeScript that
// runs in the participant host's own JavaScript thread. Its vector search is exact: every
// candidate row's cosine similarity to the query is computed and sorted (no graph, no
// quantisation), so the participant has no search knob and one ladder point per group.
// Filters are Orama `where` clauses over its AVL trees of the attribute properties; the ids
// they select are the only rows scored (a pre-filter). Rows with text are also indexed for
// Orama's BM25 full-text search, which serves keywordSearch, and its hybrid mode serves
// hybridSearch in one call.
//
// Persistence: buildIndex saves the database (Orama's own save(): documents, attribute trees,
// full-text index) into one file in workDir, with the vectors as a binary column beside that
// JSON rather than as JSON numbers; reopen loads it into a new database without ingest.
import { join } from 'node:path';
import { z } from 'zod';
import { count, create, getByID, insert, load, remove, save, search, type AnyOrama, type AnySchema, type RawData } from '@orama/orama';
import * as sdk from '../../src/sdk/index.ts';

export const settingsSchema = sdk.settingsObject({
  /** The lowest cosine similarity a vector hit may have. Orama's default, 0.8, drops most
   * neighbours of most datasets (k results are then rarely k); -1 keeps every row, so the
   * top k are the exact top k. */
  similarity: z.number().min(-1).max(1).default(-1),
  /** English stemming in the full-text index (datasets with text). */
  stemming: z.boolean().default(true),
  /** Hybrid mode's weights of the normalised BM25 and vector scores (Orama's default 0.5 / 0.5). */
  text_weight: z.number().gt(0).lt(1).default(0.5),
});
export type OramaSettings = z.infer<typeof settingsSchema>;

/** The vector property of every document. */
const VECTOR = 'embedding';
/** The saved database: Orama's save() as JSON (vectors left out) plus the vectors as columns. */
const SAVED_FILE = 'orama.db.bin';

/** The part of Orama's index store that holds the vectors (not in its published types). */
interface VectorStore {
  vectorIndexes: Record<string, { node: { size: number; vectors: Map<number, [number, Float32Array]>; add(internalId: number, v: Float32Array): void } }>;
}

function schemaFor(d: number, withText: boolean): AnySchema {
  const schema: AnySchema = { [VECTOR]: `vector[${d}]` };
  for (const a of sdk.ATTRIBUTES) schema[a] = 'number';
  if (withText) schema.text = 'string';
  return schema;
}

function newDatabase(d: number, withText: boolean, s: OramaSettings): AnyOrama {
  return create({
    schema: schemaFor(d, withText),
    // Sorting by a property is never asked; Orama would otherwise keep a sorted copy of each
    // number property, updated at every insert.
    sort: { enabled: false },
    components: { tokenizer: { stemming: s.stemming } },
  }) as AnyOrama;
}

/** FilterExpr -> Orama where clause. An `and` of one field twice (a range and an eq on num)
 * cannot share one object, so every `and` is Orama's own `and` list. */
export function toWhere(f: sdk.FilterExpr): Record<string, unknown> {
  return sdk.foldFilter<Record<string, unknown>>(f, {
    eq: (field, value) => ({ [field]: { eq: value } }),
    // gte <= v < lt on integer attributes is between [gte, lt - 1] (inclusive at both ends).
    range: (field, gte, lt) => ({ [field]: { between: [gte, lt - 1] } }),
    and: (parts) => ({ and: parts }),
  });
}

/** Orama ranks by cosine: for metric ip that is the same ranking only on unit vectors. */
function checkUnitLength(batch: sdk.RowBatch, d: number): void {
  const off = sdk.firstNonUnitRow(batch, d);
  if (off)
    throw new sdk.UserError(
      `orama: row ${off.id} has norm ${off.norm.toFixed(4)}; Orama ranks by cosine, the same as ip only for unit vectors: leave orama out of --participants for this dataset`,
    );
}

function metricProblem(dataset: { name: string; metric: sdk.Metric }): string | null {
  return dataset.metric === 'l2'
    ? `Orama ranks vectors by cosine similarity only and ${dataset.name} is an l2 dataset: leave orama out of --participants for it`
    : null;
}

class OramaSession implements sdk.EngineSession {
  /** The files in workDir lag behind the database in memory. */
  private dirty = true;
  keywordSearch?: sdk.EngineSession['keywordSearch'];
  hybridSearch?: sdk.EngineSession['hybridSearch'];

  constructor(
    private db: AnyOrama,
    private readonly d: number,
    private readonly metric: sdk.Metric,
    private readonly withText: boolean,
    private readonly s: OramaSettings,
    private readonly workDir: string,
  ) {
    if (withText) {
      this.keywordSearch = (text, k, filter) => this.keyword(text, k, filter);
      this.hybridSearch = (request, text) => this.hybrid(request, text);
    }
  }

  static reopen(ctx: sdk.OpenContext<OramaSettings>): OramaSession {
    const { d, metric, hasText } = ctx.dataset;
    const path = join(ctx.workDir, SAVED_FILE);
    const { meta, columns } = sdk.readColumns(path);
    if (meta.d !== d || meta.withText !== hasText) {
      throw new Error(`orama: ${path} holds a d=${String(meta.d)} database (text: ${String(meta.withText)}), the dataset is d=${d} (text: ${hasText})`);
    }
    const db = newDatabase(d, hasText, ctx.settings);
    load(db, meta.raw as RawData);
    // The vectors go back into Orama's vector index by its own add() (which computes each
    // magnitude again), one Float32Array per row, as an insert leaves them.
    const ids = columns.ids as Int32Array;
    const vectors = columns.vectors as Float32Array;
    const node = (db.data.index as unknown as VectorStore).vectorIndexes[VECTOR].node;
    for (let i = 0; i < ids.length; i++) node.add(ids[i], vectors.slice(i * d, (i + 1) * d));
    const session = new OramaSession(db, d, metric, hasText, ctx.settings, ctx.workDir);
    session.dirty = false;
    return session;
  }

  /** Saves the database to workDir: Orama's save() without the vectors, as the JSON header of
   * one columns file whose columns are the internal ids and the vectors (row-major float32). */
  private persist(): void {
    const node = (this.db.data.index as unknown as VectorStore).vectorIndexes[VECTOR].node;
    const m = node.vectors.size;
    const ids = new Int32Array(m);
    const vectors = new Float32Array(m * this.d);
    let i = 0;
    for (const [id, [, v]] of node.vectors) {
      ids[i] = id;
      vectors.set(v, i * this.d);
      i++;
    }
    const raw = save(this.db) as RawData & { index: { vectorIndexes: Record<string, { size: number; vectors: unknown[] }> } };
    // save() has copied every vector into a JSON array; the columns hold them instead.
    raw.index.vectorIndexes[VECTOR] = { size: this.d, vectors: [] };
    sdk.writeColumns(join(this.workDir, SAVED_FILE), { d: this.d, withText: this.withText, raw }, { ids, vectors });
    this.dirty = false;
  }

  private check(batch: sdk.RowBatch): void {
    if (batch.vectors.length !== batch.ids.length * this.d) {
      throw new Error(`orama: batch has ${batch.vectors.length} floats for ${batch.ids.length} rows of d=${this.d}`);
    }
    if (this.metric === 'ip') checkUnitLength(batch, this.d);
  }

  /** Inserts the batch's rows; a row whose id is present is removed first (Orama refuses an
   * insert of an id it holds), so insert and upsert both replace. */
  private put(batch: sdk.RowBatch, replace: boolean): void {
    this.check(batch);
    const d = this.d;
    for (let i = 0; i < batch.ids.length; i++) {
      const id = String(batch.ids[i]);
      if (replace && getByID(this.db, id) !== undefined) remove(this.db, id);
      // Orama's schema check wants a plain array; its vector index keeps a Float32Array copy.
      const doc: Record<string, unknown> = { id, [VECTOR]: Array.from(batch.vectors.subarray(i * d, (i + 1) * d)) };
      for (const a of sdk.ATTRIBUTES) doc[a] = batch.attrs[a][i];
      if (this.withText) doc.text = batch.text?.[i] ?? '';
      insert(this.db, doc);
      // The document store would keep the plain array too (8 bytes a dimension): drop it, as
      // Orama's own vector search does to every document it returns.
      doc[VECTOR] = null;
    }
    this.dirty = true;
  }

  async ingest(batch: sdk.RowBatch): Promise<void> {
    this.put(batch, false);
  }

  async buildIndex(): Promise<void> {
    // Orama indexes every document as it is inserted: nothing is left to build but the saved
    // copy that reopen reads (its write is part of the build time).
    this.persist();
  }

  async setKnobs(_knobs: sdk.Knobs): Promise<void> {}

  private static ids(hits: { id: string }[]): Int32Array {
    const out = new Int32Array(hits.length);
    for (let i = 0; i < hits.length; i++) out[i] = Number(hits[i].id);
    return out;
  }

  async search(request: sdk.SearchRequest): Promise<ArrayLike<number>> {
    if (count(this.db) === 0) return new Int32Array(0);
    const res = await search(this.db, {
      mode: 'vector',
      vector: { value: request.vector, property: VECTOR },
      similarity: this.s.similarity,
      limit: request.k,
      ...(request.filter ? { where: toWhere(request.filter) } : {}),
    } as never);
    return OramaSession.ids(res.hits);
  }

  private async keyword(text: string, k: number, filter: sdk.FilterExpr | null): Promise<ArrayLike<number>> {
    // An empty term with `properties` would return every document holding the property.
    if (!/[\p{L}\p{N}]/u.test(text)) return new Int32Array(0);
    const res = await search(this.db, { term: text, properties: ['text'], limit: k, ...(filter ? { where: toWhere(filter) } : {}) } as never);
    return OramaSession.ids(res.hits);
  }

  private async hybrid(request: sdk.SearchRequest, text: string): Promise<ArrayLike<number>> {
    const res = await search(this.db, {
      mode: 'hybrid',
      term: text,
      properties: ['text'],
      vector: { value: request.vector, property: VECTOR },
      similarity: this.s.similarity,
      hybridWeights: { text: this.s.text_weight, vector: 1 - this.s.text_weight },
      limit: request.k,
      ...(request.filter ? { where: toWhere(request.filter) } : {}),
    } as never);
    return OramaSession.ids(res.hits);
  }

  async explain(request: sdk.SearchRequest): Promise<string> {
    const f = request.filter === null ? 'every row' : `the rows of where ${JSON.stringify(toWhere(request.filter))} (AVL trees)`;
    return `exact scan: cosine similarity of ${f}, sorted, top ${request.k} (similarity >= ${this.s.similarity})`;
  }

  strategy(request: sdk.SearchRequest): sdk.Strategy {
    return sdk.declaredStrategy(request, 'exact scan', 'pre-filter + exact scan');
  }

  async diskBytes(): Promise<number> {
    // In-memory engine: the size of what it saves, saved again first when writes changed it.
    if (this.dirty) this.persist();
    return sdk.fileBytes(join(this.workDir, SAVED_FILE));
  }

  async insert(batch: sdk.RowBatch): Promise<void> {
    this.put(batch, true);
  }

  async upsert(batch: sdk.RowBatch): Promise<void> {
    this.put(batch, true);
  }

  async delete(ids: Int32Array): Promise<void> {
    for (const id of ids) if (remove(this.db, String(id))) this.dirty = true;
  }

  async close(): Promise<void> {
    // What a later reopen finds is what this session held.
    if (this.dirty && count(this.db) > 0) this.persist();
  }
}

const participant: sdk.Participant<OramaSettings> = {
  engine: 'Orama',
  engineVersion: async () => sdk.packageVersion('@orama/orama'),
  settingsSchema,
  // Orama's vector search is exact: no search knob.
  knobs: {},
  filters: sdk.EVERY_FILTER,
  filterStrategy: 'pre-filter: the where clause selects ids from AVL trees of the attributes, then an exact scan scores only those rows',
  concurrentSearch: false,
  // reopen reads the file buildIndex saved into memory; searches never write it.
  reopenInThreads: true,
  keywordScoring: "BM25 (Orama's own, k1 1.2, b 0.75, delta 0.5; English stems, no stop-word list)",
  fusionMethod: "Orama's hybrid mode: each arm's scores divided by its maximum, then w x text + (1 - w) x vector, w = index.text_weight (0.5 by default)",
  checkDataset: (_settings, dataset) => metricProblem(dataset),
  async open(ctx) {
    const problem = metricProblem(ctx.dataset);
    if (problem) throw new sdk.UserError(problem);
    const { d, metric, hasText } = ctx.dataset;
    return new OramaSession(newDatabase(d, hasText, ctx.settings), d, metric, hasText, ctx.settings, ctx.workDir);
  },
  async reopen(ctx) {
    return OramaSession.reopen(ctx);
  },
};

export default participant;
