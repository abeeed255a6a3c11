// Turns a labelled text corpus (documents, queries, graded judgements) into a prepared
// dataset: embeds both sides with the chosen provider and derives the filter attributes as
// for every other dataset. Shared by the BEIR reader and the built-in Debian corpus.
import { assignClusters, hashedAttributes, kmeans } from '../datasets/attributes.ts';
import { buildRegionTree, regionsOf } from '../datasets/regions.ts';
import { noRealQueries, noRealRows, type RealAttributeInfo, realQueryAttributes } from '../datasets/real-attributes.ts';
import type { Labels, PreparedData } from '../datasets/layout.ts';
import type { TextEmbedder } from '../embed/embedder.ts';
import { UserError } from '../util/errors.ts';
import { log } from '../util/progress.ts';

export interface LabelledCorpus {
  /** For messages: where the corpus came from. */
  origin: string;
  /** label / measure: the document's real attributes, when the corpus has them (`real`). */
  docs: { id: string; title: string; text: string; label?: number; measure?: number }[];
  /** label / measure: those of the document the query is about (its known item). */
  queries: { id: string; text: string; label?: number; measure?: number }[];
  /** What the documents' real label and measure are (src/datasets/real-attributes.ts). */
  real?: RealAttributeInfo;
  /** query id -> (document id -> graded relevance). */
  qrels: Map<string, Map<string, number>>;
  source: Record<string, unknown>;
}

const LABELLED_CLUSTERS = 50;

/** The text an engine indexes and the embedder reads: the title, then the body. */
function documentText(doc: { title: string; text: string }): string {
  const title = doc.title.trim();
  const text = doc.text.trim();
  return title && text ? `${title}\n${text}` : title || text;
}

export async function assembleLabelled(corpus: LabelledCorpus, embedder: TextEmbedder): Promise<PreparedData> {
  const { docs } = corpus;
  if (docs.length < 3) throw new UserError(`${corpus.origin}: ${docs.length} documents; a labelled corpus needs at least 3`);
  // Only judged queries are kept: the others could not be scored.
  const queries = corpus.queries.filter((q) => corpus.qrels.has(q.id));
  if (queries.length === 0) throw new UserError(`${corpus.origin}: no query has judgements; check that the qrels use the query ids of the queries file`);
  const docIndex = new Set(docs.map((d) => d.id));
  let missing = 0;
  for (const q of queries) for (const doc of corpus.qrels.get(q.id)!.keys()) if (!docIndex.has(doc)) missing++;
  if (missing > 0) log(`${corpus.origin}: ${missing} judgements name documents the corpus lacks; they still count in nDCG's ideal ranking, as in trec_eval`);

  const text = docs.map(documentText);
  const base = await embedder.embed({ ids: docs.map((d) => d.id), texts: text }, 'corpus');
  const q = await embedder.embed({ ids: queries.map((x) => x.id), texts: queries.map((x) => x.text) }, 'queries');
  if (base.d !== q.d)
    throw new UserError(`${corpus.origin}: document vectors have ${base.d} dimensions, query vectors ${q.d}; both must come from the same model`);
  const n = docs.length;
  const nq = queries.length;
  const d = base.d;
  const clusters = Math.min(LABELLED_CLUSTERS, n);
  const cent = kmeans(base.vectors, n, d, clusters, 'cosine', 4242);
  const rowsC = assignClusters(base.vectors, n, d, cent, clusters, 'cosine');
  const qC = assignClusters(q.vectors, nq, d, cent, clusters, 'cosine');
  const regions = buildRegionTree(base.vectors, n, d);
  const qrels = new Map<number, Map<string, number>>();
  queries.forEach((x, i) => qrels.set(i, new Map(corpus.qrels.get(x.id))));
  const real = corpus.real ? realValues(corpus, corpus.real, queries) : null;
  const labels: Labels = { docIds: docs.map((x) => x.id), queryIds: queries.map((x) => x.id), queryText: queries.map((x) => x.text), qrels };
  return {
    n,
    d,
    nq,
    metric: 'cosine',
    base: base.vectors,
    queries: q.vectors,
    // One language: `lang` keeps every row, and `other_lang` is -1, a language no row has, so
    // the otherlang group keeps nothing and is not asked.
    attrs: {
      ...hashedAttributes(n),
      cluster: rowsC.nearest,
      lang: new Int32Array(n),
      region: regionsOf(regions, base.vectors, n),
      ...(real ? real.rows : noRealRows(n)),
    },
    queryAttrs: {
      cluster: qC.nearest,
      far_cluster: qC.farthest,
      lang: new Int32Array(nq),
      other_lang: new Int32Array(nq).fill(-1),
      region: regionsOf(regions, q.vectors, nq),
      ...(real ? realQueryAttributes(real) : noRealQueries(nq)),
    },
    text,
    labels,
    ...(corpus.real ? { real: corpus.real } : {}),
    clusters,
    langs: ['en'],
    source: { ...corpus.source, embedding: embedder.describe },
  };
}

/** The corpus' real attributes as columns; a document or query without one is refused, since a
 * missing value would silently join the filter of value 0. */
function realValues(corpus: LabelledCorpus, info: RealAttributeInfo, queries: LabelledCorpus['queries']) {
  const column = (xs: { id: string; label?: number; measure?: number }[], field: 'label' | 'measure', what: string) =>
    Int32Array.from(xs, (x) => {
      const v = x[field];
      const ok = v !== undefined && Number.isInteger(v) && v >= 0 && v <= 0x7fffffff && (field === 'measure' || v < info.labels.length);
      if (!ok)
        throw new UserError(`${corpus.origin}: ${what} ${x.id} has no valid ${field} (${v}); give every ${what} one, or drop the corpus' real attributes`);
      return v;
    });
  return {
    info,
    rows: { label: column(corpus.docs, 'label', 'document'), measure: column(corpus.docs, 'measure', 'document') },
    queries: { label: column(queries, 'label', 'query'), measure: column(queries, 'measure', 'query') },
  };
}
