// The derived table (METHOD 4): every cell is read from stored points with the one cell rule
// in src/metrics/frontier.ts. The terminal table, `report --json` and the HTML page all come
// from deriveCells, so they cannot disagree.
//
// Beyond the frontier rule, three rules of this file (docs/contracts.md, "Cells"):
// - Points flagged with a condition in EXCLUDING_FLAGS never set a cell: they are left off the
//   curve the cell is read on, and the cell counts them by flag (`excluded`).
// - With several index builds (--builds), the cell is read on each build's points: its value is
//   the median of the builds' values and its interval spans the builds' intervals.
// - Ties: a cell whose interval overlaps the interval of the best cell of its row (the best:
//   that of any other cell) is a tie: no lead counts, and tables print it as `≈`.
import { intervalsOverlap } from '../metrics/stats.ts';
import { leads, readCell, type Cell, type CellStatus, type CurvePoint } from '../metrics/frontier.ts';
import type { ResultFile, ResultGroup, ResultPoint } from '../results/schema.ts';

export const TARGETS = [0.9, 0.95, 0.99] as const;

/** Flags that keep a point off the frontier (the harness, not the engine, may have set its figure). */
export const EXCLUDING_FLAGS = ['invalid-results', 'client-limited', 'busy-machine', 'harness-overhead'] as const;

export interface BuildReading {
  build: number;
  status: CellStatus;
  value: number | null;
  ci_low: number | null;
  ci_high: number | null;
}

export interface DerivedCell {
  dataset: string;
  participant: string;
  origin: 'measured' | 'imported';
  group: string;
  filter: string;
  k: number;
  target: number;
  /** Which view the cell reads: throughput (QPS, higher is better). */
  view: 'throughput';
  status: CellStatus;
  /** Throughput (QPS) read on the frontier, or null. */
  value: number | null;
  /** 95 % interval of value (from the point(s) it was read on; spanning builds), or null. */
  ci_low: number | null;
  ci_high: number | null;
  /** value / best value in the row (dataset, group, target); null without a value. */
  lead: number | null;
  /** Interval of the lead: [ci_low / best's ci_high, ci_high / best's ci_low]. */
  lead_ci: [number, number] | null;
  /** The interval overlaps the row's best (for the best: another cell's): no lead counts. */
  tie: boolean;
  /** Best recall reached in the group, or null. */
  max_recall: number | null;
  /** Recall of the point(s) the value was read on. */
  read_recall: number[];
  /** How the participant was driven in this view ("32 in flight", "2 threads", "1 at a time"). */
  driven: string | null;
  /** Points of the group's curve left off the frontier, by flag. */
  excluded: Record<string, number>;
  /** Per build (only with more than one build). */
  builds?: BuildReading[];
  /** Why a cell has no value when the group itself has a reason (not asked, unsupported, failed). */
  reason?: string;
  /** Why a cell is read above its target, too wide or not reached (calibration's account). */
  why?: string;
}

const ALL_FLAGGED = 'every point is flagged';

export const isExcluded = (flags: readonly string[]) => flags.some((f) => (EXCLUDING_FLAGS as readonly string[]).includes(f));

function curvePoint(p: ResultPoint): CurvePoint {
  return {
    recall: p.recall,
    value: p.qps,
    knobs: p.knobs,
    ladderIndex: p.ladder_index,
    calibratedFor: p.calibrated_for,
    low: p.ci?.qps[0],
    high: p.ci?.qps[1],
  };
}

/** The throughput curve of a group: the points measured in the throughput view that no flag
 * excludes (build: only that build's points). */
export function throughputCurve(g: ResultGroup, build?: number): CurvePoint[] {
  return g.points.filter((p) => p.view === 'throughput' && !isExcluded(p.flags) && (build === undefined || (p.build ?? 0) === build)).map(curvePoint);
}

export function groupOrder(key: string): [number, number] {
  const [filter, k] = key.split('/');
  const filters = ['none', 'cat10', 'cat100', 'cat1000', 'num10', 'num1', 'cat10+num10', 'cluster', 'farcluster', 'lang', 'otherlang'];
  const fi = filters.indexOf(filter);
  return [Number(k), fi < 0 ? 99 : fi];
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Calibration's account of a cell it could not read at a calibrated point. */
function whyOf(g: ResultGroup, target: number, cell: Cell): string | undefined {
  if (cell.status === 'calibrated' || cell.status === 'point' || cell.status === 'none') return undefined;
  const c = g.calibration?.find((x) => Math.abs(x.target - target) < 1e-12);
  if (!c) return g.calibration ? 'not calibrated for this target' : undefined;
  switch (c.status) {
    case 'below_range':
      return `the lowest ${c.knob} already reaches ${c.probes[0]?.recall.toFixed(3) ?? 'more'}`;
    case 'not_reached':
      return `the highest ${c.knob} reaches ${Math.max(...c.probes.map((p) => p.recall)).toFixed(3)}`;
    case 'adjacent':
      return `no ${c.knob} value lies between ${c.knobs.map((k) => k[c.knob]).join(' and ')}`;
    case 'failed':
    case 'no_knob':
      return c.reason;
    case 'found':
      return 'the calibrated point is off the frontier or flagged';
  }
}

export function deriveCells(results: ResultFile[]): DerivedCell[] {
  const cells: DerivedCell[] = [];
  for (const r of results) {
    for (const g of r.groups) {
      const excluded: Record<string, number> = {};
      for (const p of g.points) {
        if (p.view !== 'throughput') continue;
        for (const f of p.flags) if ((EXCLUDING_FLAGS as readonly string[]).includes(f)) excluded[f] = (excluded[f] ?? 0) + 1;
      }
      const driven = g.points.find((p) => p.view === 'throughput')?.driven ?? null;
      const builds = [...new Set(g.points.map((p) => p.build ?? 0))].sort((a, b) => a - b);
      for (const target of TARGETS) {
        const base = { dataset: r.dataset.name, participant: r.participant, origin: r.origin, group: g.key, filter: g.filter, k: g.k, target, view: 'throughput' as const, lead: null, lead_ci: null, tie: false, driven, excluded };
        if (g.status === 'not_asked' || g.status === 'unsupported') {
          cells.push({ ...base, status: g.status, value: null, ci_low: null, ci_high: null, max_recall: null, read_recall: [], reason: g.reason });
          continue;
        }
        const cell = readCell(throughputCurve(g, builds.length > 1 ? builds[0] : undefined), target, 'higher');
        const out: DerivedCell = {
          ...base,
          status: cell.status,
          value: cell.value,
          ci_low: cell.low,
          ci_high: cell.high,
          max_recall: cell.maxRecall,
          read_recall: cell.from?.map((p) => p.recall) ?? [],
          reason: g.status === 'failed' ? g.reason : Object.keys(excluded).length > 0 && cell.status === 'none' ? `${ALL_FLAGGED} (${Object.keys(excluded).join(', ')})` : undefined,
          why: whyOf(g, target, cell),
        };
        if (builds.length > 1) {
          const per: BuildReading[] = builds.map((b) => {
            const c = readCell(throughputCurve(g, b), target, 'higher');
            return { build: b, status: c.status, value: c.value, ci_low: c.low, ci_high: c.high };
          });
          out.builds = per;
          const values = per.filter((b) => b.value !== null);
          if (out.value !== null && values.length > 0) {
            out.value = median(values.map((b) => b.value!));
            const lows = values.map((b) => b.ci_low ?? b.value!);
            const highs = values.map((b) => b.ci_high ?? b.value!);
            out.ci_low = Math.min(...lows);
            out.ci_high = Math.max(...highs);
          }
        }
        cells.push(out);
      }
    }
  }
  // Leads and ties per row: the same dataset, group and target across participants.
  const rows = new Map<string, DerivedCell[]>();
  for (const c of cells) {
    const key = `${c.dataset}\u0000${c.group}\u0000${c.target}`;
    const row = rows.get(key);
    if (row) row.push(c);
    else rows.set(key, [c]);
  }
  for (const row of rows.values()) markLeads(row);
  return cells.sort(
    (a, b) =>
      a.dataset.localeCompare(b.dataset) ||
      groupOrder(a.group)[0] - groupOrder(b.group)[0] ||
      groupOrder(a.group)[1] - groupOrder(b.group)[1] ||
      a.target - b.target ||
      a.participant.localeCompare(b.participant),
  );
}

const intervalOf = (c: DerivedCell) => ({ low: c.ci_low ?? c.value!, high: c.ci_high ?? c.value! });

/** Sets lead, lead_ci and tie on the cells of one row (higher is better). */
export function markLeads(row: DerivedCell[]): void {
  const l = leads(row.map((c) => c.value), 'higher');
  row.forEach((c, i) => (c.lead = l[i]));
  const valued = row.filter((c) => c.lead !== null);
  const best = valued.find((c) => c.lead === 1);
  if (!best) return;
  const bi = intervalOf(best);
  for (const c of valued) {
    const ci = intervalOf(c);
    c.lead_ci = [ci.low / bi.high, ci.high / bi.low];
    c.tie = c === best ? valued.some((o) => o !== best && intervalsOverlap(intervalOf(o), bi)) : intervalsOverlap(ci, bi);
  }
}

/** The lead as tables print it: `x0.52`, or `≈x1.00` for a tie (no lead counts). */
export function leadText(c: DerivedCell): string {
  return c.tie ? '≈x1.00' : `x${c.lead!.toFixed(2)}`;
}

/** Short text of a cell for tables. */
export function cellText(c: DerivedCell): string {
  switch (c.status) {
    case 'calibrated':
    case 'point':
    case 'interpolated':
    case 'above':
      return `${fmtQps(c.value!)}${c.status === 'above' ? '^' : ''}${c.ci_low !== null && c.ci_high !== null && c.value ? ` ±${fmtPct(halfWidth(c))}` : ''} ${leadText(c)}`;
    case 'not_reached':
      return `max ${c.max_recall!.toFixed(2)}`;
    case 'bracket_too_wide':
      return 'too wide';
    case 'none':
      // Every point flagged (left off the frontier) is not a failure of the engine.
      if (c.reason?.startsWith(ALL_FLAGGED)) return 'all flagged';
      // A group that failed (a plan check, a crash) has a reason; say so rather than "none".
      return c.reason ? 'failed' : 'none';
    case 'not_asked':
      return 'not asked';
    case 'unsupported':
      return 'unsupported';
  }
}

/** Relative half-width of a cell's interval ((high - low) / 2 / value). */
export function halfWidth(c: { value: number | null; ci_low: number | null; ci_high: number | null }): number {
  if (c.value === null || c.ci_low === null || c.ci_high === null || !(c.value > 0)) return NaN;
  return (c.ci_high - c.ci_low) / 2 / c.value;
}

export function fmtPct(x: number): string {
  if (!Number.isFinite(x)) return '?';
  const pct = x * 100;
  return pct < 10 ? `${pct.toFixed(1)}%` : `${Math.round(pct)}%`;
}

export function fmtQps(v: number): string {
  if (v >= 1000) return Math.round(v).toLocaleString('en-US');
  if (v >= 10) return v.toFixed(0);
  return v.toPrecision(2);
}
