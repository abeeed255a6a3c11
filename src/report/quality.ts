// The answer-quality rows of the report (docs/method.md §8): one row per participant x dataset x arm
// x measured point, read from each result file's `extra.quality`. `vecbench report --json`
// prints them as `quality`; the terminal gets a table per dataset.
import { readQualitySection } from '../hybrid/schema.ts';
import type { ResultFile } from '../results/schema.ts';

interface QualityRow {
  dataset: string;
  participant: string;
  arm: 'dense' | 'keyword' | 'hybrid';
  ladder_index: number | null;
  knobs: Record<string, number | string> | null;
  ndcg10: number;
  ndcg10_ci_low: number;
  ndcg10_ci_high: number;
  mrr10: number;
  hit10: number;
  recall100: number | null;
  /** Oracle nDCG@10 minus this point's (null for the keyword arm). */
  delta_ndcg10: number | null;
  oracle_ndcg10: number | null;
  /** Hybrid rows: paired lift over the dense arm at the same point and over the keyword arm. */
  lift_over_dense: number | null;
  lift_over_dense_ci_low: number | null;
  lift_over_dense_ci_high: number | null;
  lift_over_keyword: number | null;
  lift_over_keyword_ci_low: number | null;
  lift_over_keyword_ci_high: number | null;
  /** Where the keyword arm / the fusion ran: native (the engine) or client-side. */
  where: 'engine' | 'native' | 'client-side';
  scoring: string | null;
  round_trips: number;
  queries: number;
  k: number;
  /** From the one-at-a-time (latency) pass. */
  qps: number;
  latency_p50_ms: number;
  latency_p99_ms: number;
  /** From the concurrent pass where the engine can overlap searches, else null. */
  throughput_qps: number | null;
}

export function deriveQuality(results: ResultFile[]): QualityRow[] {
  const rows: QualityRow[] = [];
  for (const r of results) {
    const q = readQualitySection(r.extra, `result ${r.dataset.name}/${r.participant}`);
    if (q?.status !== 'measured') continue;
    for (const pt of q.points) {
      const lat = pt.views.find((v) => v.view === 'latency') ?? pt.views[0];
      const thr = pt.views.find((v) => v.view === 'throughput') ?? null;
      const oracle = pt.arm === 'dense' ? (q.oracle?.dense.ndcg10 ?? null) : pt.arm === 'hybrid' ? (q.oracle?.hybrid?.ndcg10 ?? null) : null;
      rows.push({
        dataset: r.dataset.name,
        participant: r.participant,
        arm: pt.arm,
        ladder_index: pt.ladder_index,
        knobs: pt.knobs,
        ndcg10: pt.metrics.ndcg10,
        ndcg10_ci_low: pt.metrics.ndcg10_ci[0],
        ndcg10_ci_high: pt.metrics.ndcg10_ci[1],
        mrr10: pt.metrics.mrr10,
        hit10: pt.metrics.hit10,
        recall100: pt.metrics.recall100,
        delta_ndcg10: pt.delta_ndcg10,
        oracle_ndcg10: oracle,
        lift_over_dense: pt.lift_ndcg10?.over_dense.estimate ?? null,
        lift_over_dense_ci_low: pt.lift_ndcg10?.over_dense.low ?? null,
        lift_over_dense_ci_high: pt.lift_ndcg10?.over_dense.high ?? null,
        lift_over_keyword: pt.lift_ndcg10?.over_keyword.estimate ?? null,
        lift_over_keyword_ci_low: pt.lift_ndcg10?.over_keyword.low ?? null,
        lift_over_keyword_ci_high: pt.lift_ndcg10?.over_keyword.high ?? null,
        where: pt.arm === 'dense' ? 'engine' : pt.arm === 'keyword' ? (q.keyword?.where ?? 'client-side') : (q.fusion?.where ?? 'client-side'),
        scoring: pt.arm === 'keyword' ? (q.keyword?.scoring ?? null) : pt.arm === 'hybrid' ? (q.fusion?.method ?? null) : null,
        round_trips: pt.round_trips,
        queries: pt.queries,
        k: q.k,
        qps: lat.qps,
        latency_p50_ms: lat.latency_ms.p50,
        latency_p99_ms: lat.latency_ms.p99,
        throughput_qps: thr ? thr.qps : null,
      });
    }
  }
  const armOrder = { keyword: 0, dense: 1, hybrid: 2 } as const;
  return rows.sort(
    (a, b) =>
      a.dataset.localeCompare(b.dataset) ||
      a.participant.localeCompare(b.participant) ||
      (a.ladder_index ?? -1) - (b.ladder_index ?? -1) ||
      armOrder[a.arm] - armOrder[b.arm],
  );
}

const f3 = (x: number | null) => (x === null ? '-' : x.toFixed(3));
const signed = (x: number | null) => (x === null ? '-' : `${x >= 0 ? '+' : ''}${x.toFixed(3)}`);
const knobText = (k: Record<string, number | string> | null) =>
  k === null
    ? '-'
    : Object.keys(k).length === 0
      ? '(exact)'
      : Object.entries(k)
          .map(([a, b]) => `${a}=${b}`)
          .join(' ');

/** Arms that were not measured, and failed quality runs, with the reason: one line each. */
function qualityGaps(results: ResultFile[]): { dataset: string; line: string }[] {
  const out: { dataset: string; line: string }[] = [];
  for (const r of results) {
    const q = readQualitySection(r.extra, `result ${r.dataset.name}/${r.participant}`);
    if (!q) continue;
    if (q.status === 'failed') out.push({ dataset: r.dataset.name, line: `${r.participant}: answer quality failed: ${q.reason ?? 'no reason recorded'}` });
    for (const u of q.unsupported) out.push({ dataset: r.dataset.name, line: `${r.participant} ${u.arm}: not measured: ${u.reason}` });
  }
  return out;
}

/** Terminal tables, one per dataset (with the gaps of `results` under each, when given). */
export function renderQuality(rows: QualityRow[], results: ResultFile[] = []): string {
  const gaps = qualityGaps(results);
  if (rows.length === 0 && gaps.length === 0) return '';
  const out: string[] = [];
  const header = [
    'participant',
    'arm',
    'knobs',
    'nDCG@10 [95% CI]',
    'MRR@10',
    'Hit@10',
    'R@100',
    'Δ oracle',
    'lift vs dense [CI]',
    'lift vs keyword [CI]',
    'QPS',
    'p50 ms',
    'trips',
    'where',
  ];
  for (const dataset of [...new Set([...rows.map((r) => r.dataset), ...gaps.map((g) => g.dataset)])]) {
    const rs = rows.filter((r) => r.dataset === dataset);
    const gapLines = gaps.filter((g) => g.dataset === dataset).map((g) => g.line);
    if (rs.length === 0) {
      out.push(`answer quality on ${dataset}`, ...gapLines, '');
      continue;
    }
    out.push(`answer quality on ${dataset} (${rs[0].queries} labelled queries, top ${rs[0].k} per arm; Δ oracle = exact-kNN nDCG@10 minus the point's)`);
    const table = rs.map((r) => [
      r.participant,
      r.arm,
      knobText(r.knobs),
      `${f3(r.ndcg10)} [${f3(r.ndcg10_ci_low)}, ${f3(r.ndcg10_ci_high)}]`,
      f3(r.mrr10),
      f3(r.hit10),
      f3(r.recall100),
      signed(r.delta_ndcg10),
      r.lift_over_dense === null ? '-' : `${signed(r.lift_over_dense)} [${signed(r.lift_over_dense_ci_low)}, ${signed(r.lift_over_dense_ci_high)}]`,
      r.lift_over_keyword === null ? '-' : `${signed(r.lift_over_keyword)} [${signed(r.lift_over_keyword_ci_low)}, ${signed(r.lift_over_keyword_ci_high)}]`,
      r.qps.toFixed(0),
      r.latency_p50_ms.toFixed(2),
      String(r.round_trips),
      r.where,
    ]);
    const widths = header.map((h, i) => Math.max(h.length, ...table.map((row) => row[i].length)));
    const line = (cols: string[]) =>
      cols
        .map((c, i) => c.padEnd(widths[i]))
        .join('  ')
        .trimEnd();
    out.push(line(header), ...table.map(line));
    const notes = new Set(rs.filter((r) => r.scoring).map((r) => `${r.participant} ${r.arm} (${r.where}): ${r.scoring}`));
    out.push(...notes, ...gapLines, '');
  }
  return out.join('\n');
}
