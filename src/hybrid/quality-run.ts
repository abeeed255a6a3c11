// The quality run (docs/method.md §8), runner side: on a dataset with relevance labels, after the
// query groups, every labelled query is asked of the dense arm at each point of the
// participant's ladder for none/k, of the keyword arm once, and of the fused arm at each
// dense point. The harness scores the returned ids against the labels (never the engine),
// computes the oracle (the same arms over exact kNN, from the ground truth), the Delta
// bridge and the paired lifts. Unlike the query groups, every point asks every labelled
// query (the measures need all of them), so a result cache could flatter these QPS figures,
// never the quality figures.
import type { Knobs } from '../contracts.ts';
import type { Dataset } from '../datasets/layout.ts';
import { KS } from '../datasets/groups.ts';
import { groundTruthFor } from '../groundtruth/cache.ts';
import { meanWithCI, pairedLift, rrfFuse, scoreRanking, type QueryQuality } from '../metrics/quality.ts';
import { mean } from '../metrics/stats.ts';
import type { HostClient } from '../runner/client.ts';
import { ladderFor, type LoadedParticipant } from '../runner/participants.ts';
import type { PointReply } from '../runner/point-reply.ts';
import { latencySummary } from '../metrics/latency.ts';
import { Progress, log } from '../util/progress.ts';
import type { Arm } from './protocol.ts';
import { QUALITY_FORMAT, type QualityMetrics, type QualityPoint, type QualitySection } from './schema.ts';

export const DEFAULT_QUALITY_K = 100;

/** Queries of an arm failed: the point is left out with the reason, never scored as misses. */
class ArmFailed extends Error {}

interface QualityOptions {
  clients: number;
  pointTimeoutS: number;
  /** Results asked of each arm (default 100: recall@100 and fusion of two top-100 lists). */
  qualityK?: number;
}

/** Per-query ranked row lists (duplicates and unknown ids dropped, counted). */
interface Answers {
  lists: number[][];
  duplicates: number;
  unknown: number;
  short: number;
  errors: number;
}

function answersOf(reply: PointReply, n: number, k: number): Answers {
  const out: Answers = { lists: [], duplicates: 0, unknown: 0, short: 0, errors: reply.errors.filter((e) => e !== null).length };
  for (let i = 0; i < reply.offsets.length - 1; i++) {
    const seen = new Set<number>();
    const list: number[] = [];
    for (let j = reply.offsets[i]; j < reply.offsets[i + 1] && list.length < k; j++) {
      const id = reply.ids[j];
      if (!(id >= 0 && id < n)) out.unknown++;
      else if (seen.has(id)) out.duplicates++;
      else {
        seen.add(id);
        list.push(id);
      }
    }
    if (list.length < Math.min(k, n)) out.short++;
    out.lists.push(list);
  }
  return out;
}

/** Scores ranked row lists against the labels of each query. */
function scoreLists(ds: Dataset, queries: number[], lists: number[][]): QueryQuality[] {
  const labels = ds.labels!;
  return queries.map((q, i) =>
    scoreRanking(
      lists[i].map((row) => labels.docIds[row]),
      labels.qrels.get(q) ?? new Map(),
    ),
  );
}

function summarizeScores(scores: QueryQuality[], k: number): QualityMetrics {
  const ndcg = scores.map((s) => s.ndcg10);
  const ci = meanWithCI(ndcg);
  return {
    ndcg10: mean(ndcg),
    mrr10: mean(scores.map((s) => s.mrr10)),
    hit10: mean(scores.map((s) => s.hit10)),
    recall100: k >= 100 ? mean(scores.map((s) => s.recall100)) : null,
    ndcg10_ci: [ci.low, ci.high],
  };
}

export async function measureQuality(host: () => Promise<HostClient>, p: LoadedParticipant, ds: Dataset, opts: QualityOptions): Promise<QualitySection> {
  const k = Math.min(opts.qualityK ?? DEFAULT_QUALITY_K, ds.n);
  const labels = ds.labels;
  const section: QualitySection = {
    format: QUALITY_FORMAT,
    status: 'measured',
    k,
    queries: 0,
    labels: String(ds.source.labels ?? ds.source.generator ?? 'qrels'),
    keyword: null,
    fusion: null,
    oracle: null,
    points: [],
    unsupported: [],
  };
  if (!labels || !ds.text) {
    section.status = 'failed';
    section.reason = `dataset ${ds.name} has no relevance labels or no text`;
    return section;
  }
  const queries = [...labels.qrels.keys()].sort((a, b) => a - b);
  section.queries = queries.length;
  const setup = await (await host()).request<'quality-setup'>(
    { type: 'quality-setup', keywordScoring: p.adapter.keywordScoring ?? null, fusionMethod: p.adapter.fusionMethod ?? null },
    opts.pointTimeoutS,
  );
  section.keyword = setup.keyword;
  section.fusion = setup.fusion;

  // The oracle: exact top-k from the ground truth of the unfiltered group.
  const gt = groundTruthFor(ds, 'none');
  const oracleLists = queries.map((q) => Array.from(gt.ids.subarray(q * gt.depth, q * gt.depth + Math.min(k, gt.depth))).filter((id) => id >= 0));
  const oracleDense = scoreLists(ds, queries, oracleLists);

  // The ladder of the smallest group k that covers the depth asked (k is clamped to n, but
  // the ladder follows the nominal depth), else the none/10 ladder.
  const nominal = opts.qualityK ?? DEFAULT_QUALITY_K;
  const groupK = KS.find((x) => x >= nominal && ladderFor(p.settings, 'none', x).length > 0) ?? 10;
  const ladder = ladderFor(p.settings, 'none', groupK);
  if (ladder.length === 0) section.unsupported.push({ arm: 'dense', reason: `settings.json has no ladder rule for none/${nominal} or none/10` });
  const views = p.adapter.concurrentSearch ? (['latency', 'throughput'] as const) : (['latency'] as const);
  const progress = new Progress(`${p.name}: answer quality`, 1 + ladder.length * 2);
  let done = 0;

  const measure = async (arm: Arm, knobs: Knobs | null, li: number | null) => {
    const timings: QualityPoint['views'] = [];
    let answers: Answers | null = null;
    let roundTrips = 1;
    for (const view of views) {
      const clients = view === 'latency' ? 1 : opts.clients;
      const r = await (await host()).request<'quality-arm'>({ type: 'quality-arm', arm, knobs, k, queries, clients }, opts.pointTimeoutS);
      const failed = r.reply.errors.filter((e) => e !== null);
      if (failed.length > 0) {
        progress.update(++done);
        throw new ArmFailed(`${arm}${knobs ? ` ${JSON.stringify(knobs)}` : ''}: ${failed.length} of ${queries.length} queries failed: ${failed[0]}`);
      }
      roundTrips = r.roundTrips;
      timings.push({ view, clients, qps: queries.length / r.reply.wallS, duration_s: r.reply.wallS, latency_ms: latencySummary(r.reply.latenciesMs) });
      // The quality figures come from the one-at-a-time pass.
      answers ??= answersOf(r.reply, ds.n, k);
    }
    progress.update(++done, `${arm}${knobs ? ` ${JSON.stringify(knobs)}` : ''}`);
    return { timings, answers: answers!, roundTrips, li, knobs };
  };
  const point = (arm: Arm, m: Awaited<ReturnType<typeof measure>>, scores: QueryQuality[]): QualityPoint => ({
    arm,
    ladder_index: m.li,
    knobs: m.knobs,
    round_trips: m.roundTrips,
    queries: queries.length,
    views: m.timings,
    metrics: summarizeScores(scores, k),
    delta_ndcg10: null,
    delta_ndcg10_ci: null,
    lift_ndcg10: null,
    short_results: m.answers.short,
    duplicate_ids: m.answers.duplicates,
    unknown_ids: m.answers.unknown,
    errors: m.answers.errors,
  });
  const ndcgs = (s: QueryQuality[]) => s.map((x) => x.ndcg10);

  let keywordLists: number[][] | null = null;
  let keywordScores: QueryQuality[] | null = null;
  /** Runs an arm; a failed one is listed in `unsupported` and yields null. */
  const attempt = async (arm: Arm, knobs: Knobs | null, li: number | null) => {
    try {
      return await measure(arm, knobs, li);
    } catch (e) {
      if (!(e instanceof ArmFailed)) throw e;
      section.unsupported.push({ arm, reason: e.message });
      log(`${p.name}: answer quality, ${e.message}`);
      return null;
    }
  };
  const kw = setup.keyword ? await attempt('keyword', null, null) : null;
  if (kw) {
    keywordLists = kw.answers.lists;
    keywordScores = scoreLists(ds, queries, keywordLists);
    section.points.push(point('keyword', kw, keywordScores));
  } else if (setup.keyword) {
    section.unsupported.push({ arm: 'hybrid', reason: 'fusion needs the keyword arm, which failed' });
  } else {
    section.unsupported.push({ arm: 'keyword', reason: setup.reason ?? 'no keyword arm' });
    section.unsupported.push({ arm: 'hybrid', reason: 'fusion needs the keyword arm' });
  }
  const oracleHybrid = keywordLists
    ? scoreLists(
        ds,
        queries,
        oracleLists.map((l, i) => rrfFuse([l, keywordLists![i]], k)),
      )
    : null;
  section.oracle = { dense: summarizeScores(oracleDense, k), hybrid: oracleHybrid ? summarizeScores(oracleHybrid, k) : null };

  for (let li = 0; li < ladder.length; li++) {
    const dm = await attempt('dense', ladder[li], li);
    if (!dm) continue;
    const denseScores = scoreLists(ds, queries, dm.answers.lists);
    const dense = point('dense', dm, denseScores);
    const dDelta = pairedLift(ndcgs(oracleDense), ndcgs(denseScores));
    dense.delta_ndcg10 = dDelta.estimate;
    dense.delta_ndcg10_ci = [dDelta.low, dDelta.high];
    section.points.push(dense);
    if (!keywordScores || !oracleHybrid) continue;
    const hm = await attempt('hybrid', ladder[li], li);
    if (!hm) continue;
    const hybridScores = scoreLists(ds, queries, hm.answers.lists);
    const hybrid = point('hybrid', hm, hybridScores);
    const hDelta = pairedLift(ndcgs(oracleHybrid), ndcgs(hybridScores));
    hybrid.delta_ndcg10 = hDelta.estimate;
    hybrid.delta_ndcg10_ci = [hDelta.low, hDelta.high];
    hybrid.lift_ndcg10 = {
      over_dense: pairedLift(ndcgs(hybridScores), ndcgs(denseScores)),
      over_keyword: pairedLift(ndcgs(hybridScores), ndcgs(keywordScores)),
    };
    section.points.push(hybrid);
  }
  progress.done();
  const best = (arm: Arm) => {
    const xs = section.points.filter((x) => x.arm === arm).map((x) => x.metrics.ndcg10);
    return xs.length > 0 ? Math.max(...xs).toFixed(3) : '-';
  };
  log(
    `${p.name}: nDCG@10 on ${queries.length} labelled queries: dense ${best('dense')} (oracle ${section.oracle.dense.ndcg10.toFixed(3)}), keyword ${best('keyword')}, hybrid ${best('hybrid')}`,
  );
  return section;
}
