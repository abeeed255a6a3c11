// Two result directories compared cell by cell (docs/compare.md): how an
// engine author shows what a release changed and how anyone checks a run reproduces. Pure: cells
// in, pairs and a summary out; the command reads the directories.
//
// - Cells are matched by (dataset, participant, group, target, view); an exact row is its own
//   participant, "name (exact)". Throughput (QPS): higher is better; latency (p50 ms): lower.
// - ratio = B / A; its interval is [B low / A high, B high / A low], a side without an interval
//   standing at its value on both ends (it holds 1 exactly when the two intervals overlap).
// - The verdict reads that interval against the hosts' measured speed where both runs carry
//   host-speed probes: a host x0.86 as fast in B moves every cell of the same code by x0.86, so
//   the interval is divided by the probes' ratio interval (multiplied, for latency) before it is
//   asked whether it holds 1 (`judged`: host-speed); without probes it is read as it is (raw). A
//   change is significant only when the judged interval excludes 1.
// - Leads (src/report/compare-leads.ts): each row's leads over one reference participant, read in
//   each run (paired within a run where its passes allow), and B's lead / A's lead.
import { bootstrapCI, intervalsOverlap, quantileSorted } from '../metrics/stats.ts';
import type { CellStatus } from '../metrics/frontier.ts';
import { columnName, fmtMaxRecall, fmtPct, fmtQps, groupOrder, halfWidth, type DerivedCell } from './cells.ts';
import { compareLeads, leadSummary, renderLeads, type LeadPair, type LeadSummary, type SeriesOf } from './compare-leads.ts';

/**
 * same / better / worse: both sides have a value (better, worse: the intervals are disjoint).
 * lost: a value in A, none in B; gained: none in A, a value in B.
 * status: neither has a value and the statuses differ; no_value: neither has one, same status.
 * only_a / only_b: the cell exists in one directory only.
 */
type CellChange = 'same' | 'better' | 'worse' | 'lost' | 'gained' | 'status' | 'no_value' | 'only_a' | 'only_b';

/** One side of a pair: what the cell read in that directory. */
interface CellSide {
  status: CellStatus;
  value: number | null;
  ci_low: number | null;
  ci_high: number | null;
  /** (ci_high - ci_low) / 2 / value, or null without a value or interval. */
  half_width: number | null;
  max_recall: number | null;
  reason?: string;
}

export interface CellPair {
  dataset: string;
  participant: string;
  group: string;
  target: number;
  view: DerivedCell['view'];
  a: CellSide | null;
  b: CellSide | null;
  /** B / A, when both have a value. */
  ratio: number | null;
  ratio_ci: [number, number] | null;
  /** The intervals overlap (both have a value), else null. */
  overlap: boolean | null;
  /** The interval the verdict read: ratio_ci against the hosts' speed, or ratio_ci itself. */
  judged_ci: [number, number] | null;
  judged: 'host-speed' | 'raw' | null;
  change: CellChange;
}

/** B's host speed relative to A's on a dataset, from the host-speed probes (>1: B's was faster). */
export interface HostSpeed {
  ratio: number;
  low: number;
  high: number;
}

interface CompareSummary {
  /** Pairs where both sides have a value. */
  both_read: number;
  overlap: number;
  /** overlap / both_read, null when nothing was read on both sides. */
  overlap_share: number | null;
  /** Both-read pairs where a side carries no interval: their verdict compares a bare value. */
  without_interval: number;
  /** Median relative half-width of the QPS interval over both-read pairs that carry one. */
  median_half_width: { a: number | null; b: number | null };
  counts: Record<CellChange, number>;
  /** Both-read pairs with the largest |log ratio|, largest first. */
  worst: CellPair[];
  /** Both-read pairs whose verdict was judged against the hosts' speed. */
  judged_host_speed: number;
  leads: LeadSummary;
}

interface Comparison {
  pairs: CellPair[];
  leads: LeadPair[];
  summary: CompareSummary;
}

export const DEFAULT_WORST = 5;

const keyOf = (c: Pick<DerivedCell, 'dataset' | 'participant' | 'search' | 'group' | 'target' | 'view'>) =>
  [c.dataset, columnName(c), c.group, c.target, c.view].join('\u0000');

function sideOf(c: DerivedCell): CellSide {
  const hw = halfWidth(c);
  return {
    status: c.status,
    value: c.value,
    ci_low: c.ci_low,
    ci_high: c.ci_high,
    half_width: Number.isFinite(hw) ? hw : null,
    max_recall: c.max_recall,
    ...(c.reason !== undefined ? { reason: c.reason } : {}),
  };
}

/** The side's interval; a side without one is the degenerate [value, value]. */
const boundsOf = (s: CellSide) => ({ low: s.ci_low ?? s.value!, high: s.ci_high ?? s.value! });

function changeOf(a: CellSide | null, b: CellSide | null, judged: [number, number] | null, view: DerivedCell['view']): CellChange {
  if (!a) return 'only_b';
  if (!b) return 'only_a';
  if (a.value !== null && b.value !== null) {
    if (judged![0] <= 1 && 1 <= judged![1]) return 'same';
    return judged![0] > 1 === (view === 'throughput') ? 'better' : 'worse';
  }
  if (a.value !== null) return 'lost';
  if (b.value !== null) return 'gained';
  return a.status === b.status ? 'no_value' : 'status';
}

function pairOf(a: DerivedCell | undefined, b: DerivedCell | undefined, host: HostSpeed | undefined): CellPair {
  const id = (a ?? b)!;
  const sa = a ? sideOf(a) : null;
  const sb = b ? sideOf(b) : null;
  let ratio: number | null = null;
  let ratio_ci: [number, number] | null = null;
  let overlap: boolean | null = null;
  let judged_ci: [number, number] | null = null;
  if (sa?.value != null && sb?.value != null) {
    const ia = boundsOf(sa);
    const ib = boundsOf(sb);
    ratio = sb.value / sa.value;
    ratio_ci = [ib.low / ia.high, ib.high / ia.low];
    overlap = intervalsOverlap(ia, ib);
    // The same code on a host s times as fast reads s times the QPS and 1/s the latency.
    if (host) judged_ci = id.view === 'throughput' ? [ratio_ci[0] / host.high, ratio_ci[1] / host.low] : [ratio_ci[0] * host.low, ratio_ci[1] * host.high];
    else judged_ci = ratio_ci;
  }
  return {
    dataset: id.dataset,
    participant: columnName(id),
    group: id.group,
    target: id.target,
    view: id.view,
    a: sa,
    b: sb,
    ratio,
    ratio_ci,
    overlap,
    judged_ci,
    judged: ratio === null ? null : host ? 'host-speed' : 'raw',
    change: changeOf(sa, sb, judged_ci, id.view),
  };
}

function median(xs: number[]): number | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((x, y) => x - y);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** The order of the report's tables: dataset, group (k, then filter), target, participant. */
function pairOrder(x: CellPair, y: CellPair): number {
  const gx = groupOrder(x.group);
  const gy = groupOrder(y.group);
  return (
    x.dataset.localeCompare(y.dataset) ||
    gx[0] - gy[0] ||
    gx[1] - gy[1] ||
    x.group.localeCompare(y.group) ||
    x.target - y.target ||
    x.participant.localeCompare(y.participant)
  );
}

interface CompareOptions {
  worst?: number;
  /** Per dataset: B's host speed relative to A's (hostSpeedRatio). */
  hostSpeed?: Map<string, HostSpeed>;
  /** The passes behind a cell, for leads paired within each run (cells.ts' seriesOf). */
  seriesOf?: SeriesOf;
}

export function compareCells(a: DerivedCell[], b: DerivedCell[], opts: CompareOptions = {}): Comparison {
  const worstN = opts.worst ?? DEFAULT_WORST;
  const inA = new Map(a.map((c) => [keyOf(c), c]));
  const inB = new Map(b.map((c) => [keyOf(c), c]));
  const keys = [...new Set([...inA.keys(), ...inB.keys()])];
  const pairs = keys.map((k) => pairOf(inA.get(k), inB.get(k), opts.hostSpeed?.get((inA.get(k) ?? inB.get(k))!.dataset))).sort(pairOrder);

  const counts = Object.fromEntries(
    (['same', 'better', 'worse', 'lost', 'gained', 'status', 'no_value', 'only_a', 'only_b'] as const).map((c) => [c, 0]),
  ) as Record<CellChange, number>;
  for (const p of pairs) counts[p.change]++;
  const read = pairs.filter((p) => p.ratio !== null);
  const overlap = read.filter((p) => p.overlap).length;
  const widths = (side: 'a' | 'b') => read.map((p) => p[side]!.half_width).filter((w): w is number => w !== null);
  const absLog = (p: CellPair) => Math.abs(Math.log(p.ratio!));
  // Sorting a copy keeps the table order stable for equal |log ratio| (Array.sort is stable).
  const worst = [...read].sort((x, y) => absLog(y) - absLog(x)).slice(0, worstN);
  const leads = compareLeads(a, b, opts.seriesOf ?? (() => null));
  return {
    pairs,
    leads,
    summary: {
      both_read: read.length,
      overlap,
      overlap_share: read.length > 0 ? overlap / read.length : null,
      without_interval: read.filter((p) => p.a!.half_width === null || p.b!.half_width === null).length,
      median_half_width: { a: median(widths('a')), b: median(widths('b')) },
      counts,
      worst,
      judged_host_speed: read.filter((p) => p.judged === 'host-speed').length,
      leads: leadSummary(leads),
    },
  };
}

/** The pairs a reader needs to see: both read, or something changed (not "no value" twice). */
export const isShown = (p: CellPair) => p.change !== 'no_value';

const VERDICT: Record<CellChange, string> = {
  same: 'same',
  better: 'better',
  worse: 'WORSE',
  lost: 'value only in A',
  gained: 'value only in B',
  status: 'status changed',
  no_value: 'no value',
  only_a: 'only in A',
  only_b: 'only in B',
};

const verdictText = (p: CellPair) => VERDICT[p.change];

/** One side as the table prints it: `6,000 ±2.0%`, `max 0.93`, `too wide`, or `-` when absent. */
function sideText(s: CellSide | null, view: DerivedCell['view']): string {
  if (!s) return '-';
  if (s.value !== null)
    return `${view === 'throughput' ? fmtQps(s.value) : `${s.value.toPrecision(3)} ms`}${s.status === 'above' ? '^' : ''}${s.half_width !== null ? ` ±${fmtPct(s.half_width)}` : ''}`;
  switch (s.status) {
    case 'not_reached':
      return s.max_recall !== null ? fmtMaxRecall(s.max_recall) : 'not reached';
    case 'bracket_too_wide':
      return 'too wide';
    case 'none':
      return s.reason ? 'failed' : 'none';
    case 'not_asked':
      return 'not asked';
    case 'leak':
      return 'LEAK';
    default:
      return s.status;
  }
}

function ratioText(p: CellPair): string {
  if (p.ratio === null || p.ratio_ci === null) return '-';
  return `x${p.ratio.toFixed(2)} [${p.ratio_ci[0].toFixed(2)}, ${p.ratio_ci[1].toFixed(2)}]`;
}

function table(rows: string[][], rightAligned: number[]): string[] {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  const line = (r: string[]) =>
    r
      .map((x, i) => (rightAligned.includes(i) ? x.padStart(widths[i]) : x.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(rows[0]), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.slice(1).map(line)];
}

interface RenderOptions {
  /** How the two directories are named in the heading (their paths). */
  a: string;
  b: string;
  /** Lines printed under a dataset's heading (e.g. engine versions that differ). */
  notes?: Map<string, string[]>;
}

/** The terminal text: a block per dataset, then the summary and the worst pairs. */
export function renderCompare(cmp: Comparison, opts: RenderOptions): string {
  const out: string[] = [`A = ${opts.a}`, `B = ${opts.b}`, ''];
  const datasets = [...new Set(cmp.pairs.map((p) => p.dataset))];
  for (const ds of datasets) {
    for (const n of opts.notes?.get(ds) ?? []) out.push(n);
    for (const view of ['throughput', 'latency'] as const) {
      const dp = cmp.pairs.filter((p) => p.dataset === ds && p.view === view);
      if (dp.length === 0) continue;
      const what = view === 'throughput' ? 'throughput (QPS)' : 'latency (p50 ms, one request at a time)';
      const judged = dp.some((p) => p.judged === 'host-speed') ? " judged against the hosts' speed (the probes' ratio above)" : '';
      out.push(`${ds}: ${what} at target recall, A and B with their 95 % half-widths; B/A with its interval; same = B/A's interval${judged} holds 1`);
      // A participant present in one directory only is one line, not a row per cell.
      const onlyIn = new Map<string, 'A' | 'B'>();
      for (const name of new Set(dp.map((p) => p.participant))) {
        const mine = dp.filter((p) => p.participant === name);
        if (mine.every((p) => p.change === 'only_a')) onlyIn.set(name, 'A');
        else if (mine.every((p) => p.change === 'only_b')) onlyIn.set(name, 'B');
      }
      const rows = dp
        .filter((p) => isShown(p) && !onlyIn.has(p.participant))
        .map((p) => [p.group, p.target.toFixed(2), p.participant, sideText(p.a, view), sideText(p.b, view), ratioText(p), verdictText(p)]);
      if (rows.length > 0) out.push(...table([['group', 'recall', 'participant', 'A', 'B', 'B/A', 'verdict'], ...rows], [3, 4, 5]));
      else out.push('(no cell read in either directory)');
      for (const [name, side] of onlyIn) out.push(`${name}: only in ${side}`);
      out.push('');
    }
    out.push(...renderLeads(cmp.leads.filter((l) => l.dataset === ds)));
  }
  const s = cmp.summary;
  const share = s.overlap_share === null ? '-' : fmtPct(s.overlap_share);
  const hw = (x: number | null) => (x === null ? '-' : fmtPct(x));
  out.push(
    `${s.both_read} cells both read; ${s.overlap} (${share}) intervals overlap; median CI half-width A ${hw(s.median_half_width.a)}, B ${hw(s.median_half_width.b)}`,
  );
  if (s.without_interval > 0) out.push(`${s.without_interval} of them lack an interval on a side: their verdict compares a bare value`);
  if (s.judged_host_speed > 0) out.push(`${s.judged_host_speed} of them judged against the hosts' measured speed, the others as measured`);
  const l = s.leads;
  if (l.compared > 0)
    out.push(
      `leads: ${l.compared} compared (${l.paired_both} paired in both runs); ${l.held} held, ${l.grew} grew, ${l.shrank} shrank; ${l.reference_changed} rows changed their best`,
    );
  const c = s.counts;
  out.push(
    `better ${c.better}, worse ${c.worse}; value only in A ${c.lost}, only in B ${c.gained}; status changed ${c.status}; cells only in A ${c.only_a}, only in B ${c.only_b}`,
  );
  if (s.worst.length > 0) {
    out.push('', `largest changes (|log B/A|), ${s.worst.length}:`);
    out.push(
      ...table(
        [
          ['dataset', 'group', 'recall', 'participant', 'B/A', 'verdict'],
          ...s.worst.map((p) => [p.dataset, p.group, p.target.toFixed(2), p.participant, ratioText(p), verdictText(p)]),
        ],
        [4],
      ),
    );
  }
  return `${out.join('\n')}\n`;
}

/** B's host speed relative to A's from the host-speed probes of two runs on one machine (a
 * fixed workload timed between rounds, src/runner/host-speed.ts): the ratio of the probes'
 * medians, A's over B's, with the bound of their bootstrap intervals. A run whose host was slower
 * reads lower in every cell, which the cells' own intervals cannot show. Null when a side has no
 * probes. */
export function hostSpeedRatio(aMs: number[], bMs: number[]): (HostSpeed & { aMedian: number; bMedian: number }) | null {
  if (aMs.length === 0 || bMs.length === 0) return null;
  const med = (xs: number[]) =>
    quantileSorted(
      [...xs].sort((x, y) => x - y),
      0.5,
    );
  const ia = bootstrapCI(aMs, med, { seed: 1 });
  const ib = bootstrapCI(bMs, med, { seed: 2 });
  // Probe time A / B is B's speed relative to A's; the interval pairs the extremes (conservative).
  return { ratio: med(aMs) / med(bMs), low: ia.low / ib.high, high: ia.high / ib.low, aMedian: med(aMs), bMedian: med(bMs) };
}

/** The line saying B's host speed relative to A's, or null without probes on a side. */
export function hostSpeedNote(aMs: number[], bMs: number[]): string | null {
  const h = hostSpeedRatio(aMs, bMs);
  if (!h) return null;
  const same = h.low <= 1 && 1 <= h.high;
  const f = (x: number) => x.toFixed(2);
  return `host-speed probe: median ${h.aMedian.toFixed(1)} ms in A (${aMs.length} probes), ${h.bMedian.toFixed(1)} ms in B (${bMs.length}): B's host ran x${f(h.ratio)} [${f(h.low)}, ${f(h.high)}] of A's speed${same ? ' (no difference)' : ''}; the verdicts judge each cell against it`;
}
