// Answer quality against relevance labels (docs/method.md §8). Pure, no I/O.
//
// The measures follow trec_eval 10 (usnistgov/trec_eval) so that figures agree with users'
// own tools:
// - ndcg_cut_10: gain = the judged relevance value (only values > 0 add), the document at
//   rank r (1-based) is discounted by log2(r + 1); the ideal DCG comes from ALL judged
//   documents of the query, sorted by relevance descending, cut at the same depth. No
//   relevant document judged: the value is 0.
// - recip_rank cut at 10 (MRR@10): 1 / rank of the first document with relevance >= 1 in
//   the top 10, else 0. Hit@10 (trec_eval's success_10): 1 when there is one, else 0.
// - recall_100: relevant (>= 1) documents in the top 100 / all relevant judged; 0 when the
//   query has none.
// - Unjudged documents and negative judgements count as not relevant; negative judgements
//   are also left out of the ideal ranking.
// - A TREC run is ranked by score descending, ties broken by docno descending (byte order,
//   as trec_eval's strcmp); the rank column is ignored.
//
// Fusion is reciprocal rank fusion: score(d) = sum over lists of 1 / (k + rank(d)), rank
// 1-based, k = 60; documents absent from a list add nothing; ties go to the smaller id.
import { bootstrapCI, mean } from './stats.ts';

const RRF_K = 60;
/** The relevance value from which a document counts as relevant (trec_eval's -l, default 1). */
const RELEVANCE_LEVEL = 1;

export interface QueryQuality {
  ndcg10: number;
  mrr10: number;
  hit10: number;
  recall100: number;
}

export const QUALITY_MEASURES = ['ndcg10', 'mrr10', 'hit10', 'recall100'] as const;
/** nDCG at `cutoff` of a ranking given as the relevance of each returned document in rank
 * order (unjudged = 0), against all judged relevance values of the query. */
export function ndcgAt(rankedRels: ArrayLike<number>, judgedRels: ArrayLike<number>, cutoff: number): number {
  let dcg = 0;
  for (let i = 0; i < Math.min(cutoff, rankedRels.length); i++) {
    const gain = rankedRels[i];
    if (gain > 0) dcg += gain / Math.log2(i + 2);
  }
  const ideal = Array.from(judgedRels)
    .filter((r) => r > 0)
    .sort((a, b) => b - a);
  let idcg = 0;
  for (let i = 0; i < Math.min(cutoff, ideal.length); i++) idcg += ideal[i] / Math.log2(i + 2);
  return idcg > 0 ? dcg / idcg : dcg;
}

/** The four measures of one query. `ranked` are document keys best first (duplicates must
 * have been refused before); `judgments` maps every judged document to its relevance. */
export function scoreRanking<K>(ranked: ArrayLike<K>, judgments: ReadonlyMap<K, number>): QueryQuality {
  const rels = new Array<number>(ranked.length);
  for (let i = 0; i < ranked.length; i++) rels[i] = judgments.get(ranked[i]) ?? 0;
  const judged = Array.from(judgments.values()).filter((r) => r >= 0);
  let firstRelevant = -1;
  for (let i = 0; i < Math.min(10, rels.length); i++) {
    if (rels[i] >= RELEVANCE_LEVEL) {
      firstRelevant = i;
      break;
    }
  }
  const numRel = judged.filter((r) => r >= RELEVANCE_LEVEL).length;
  let relIn100 = 0;
  for (let i = 0; i < Math.min(100, rels.length); i++) if (rels[i] >= RELEVANCE_LEVEL) relIn100++;
  return {
    ndcg10: ndcgAt(rels, judged, 10),
    mrr10: firstRelevant < 0 ? 0 : 1 / (firstRelevant + 1),
    hit10: firstRelevant < 0 ? 0 : 1,
    recall100: numRel === 0 ? 0 : relIn100 / numRel,
  };
}

/** Byte-wise comparison of two strings' UTF-8 forms, like C's strcmp. */
function compareBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

export interface ScoredDoc {
  docno: string;
  score: number;
}

/** trec_eval's ranking of one query's run lines: score descending, ties by docno descending. */
export function trecOrder(docs: readonly ScoredDoc[]): string[] {
  return [...docs].sort((a, b) => (a.score > b.score ? -1 : a.score < b.score ? 1 : compareBytes(b.docno, a.docno))).map((d) => d.docno);
}

interface RunEvaluation {
  /** Per evaluated query, in qrels order. */
  perQuery: { qid: string; scores: QueryQuality }[];
  /** Means over the evaluated queries. */
  mean: QueryQuality;
}

/** Scores a run against qrels as trec_eval does: the queries of the qrels that the run
 * answers (or, with `complete`, every qrels query, a missing one scoring 0, like -c). */
export function evaluateRun(
  qrels: ReadonlyMap<string, ReadonlyMap<string, number>>,
  run: ReadonlyMap<string, readonly ScoredDoc[]>,
  opts: { complete?: boolean } = {},
): RunEvaluation {
  const perQuery: RunEvaluation['perQuery'] = [];
  for (const [qid, judgments] of qrels) {
    const docs = run.get(qid);
    if (!docs && !opts.complete) continue;
    perQuery.push({ qid, scores: scoreRanking(trecOrder(docs ?? []), judgments) });
  }
  return { perQuery, mean: meanQuality(perQuery.map((p) => p.scores)) };
}

function meanQuality(rows: readonly QueryQuality[]): QueryQuality {
  const out = {} as QueryQuality;
  for (const m of QUALITY_MEASURES) out[m] = mean(rows.map((r) => r[m]));
  return out;
}

/** Reciprocal rank fusion of ranked id lists (best first), cut to `depth`. */
export function rrfFuse(lists: readonly ArrayLike<number>[], depth: number, k = RRF_K): number[] {
  const score = new Map<number, number>();
  for (const list of lists) {
    const seen = new Set<number>();
    for (let i = 0; i < list.length; i++) {
      const id = list[i];
      // A list that repeats an id is credited once, at its best rank.
      if (seen.has(id)) continue;
      seen.add(id);
      score.set(id, (score.get(id) ?? 0) + 1 / (k + i + 1));
    }
  }
  return Array.from(score.entries())
    .sort((a, b) => b[1] - a[1] || a[0] - b[0])
    .slice(0, depth)
    .map((e) => e[0]);
}

interface Interval {
  estimate: number;
  low: number;
  high: number;
}

/** Mean with a percentile-bootstrap 95 % CI over queries (1,000 resamples, seeded). */
export function meanWithCI(perQuery: readonly number[], resamples = 1000): Interval {
  return bootstrapCI([...perQuery], mean, { resamples });
}

/** Paired lift of a over b (mean of per-query a - b) with a bootstrap 95 % CI that
 * resamples queries, so both arms are always compared on the same queries. */
export function pairedLift(a: readonly number[], b: readonly number[], resamples = 1000): Interval {
  if (a.length !== b.length) throw new RangeError(`pairedLift: ${a.length} against ${b.length} queries; both arms must score the same queries`);
  return bootstrapCI(
    a.map((x, i) => x - b[i]),
    mean,
    { resamples },
  );
}
