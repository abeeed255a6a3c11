// The derived table (docs/method.md §4): every cell is read from stored points with the one cell rule
// in src/metrics/frontier.ts. The terminal table, `report --json` and the HTML page all come
// from deriveCells, so they cannot disagree.
//
// Beyond the frontier rule, these rules of this file (docs/contracts.md, "Cells"):
// - Each view has its own cells: throughput (QPS, higher is better) and latency (p50 ms, lower
//   is better), read on that view's points only.
// - Exact-search points (an exact scan a participant also measures, or an imported harness's
//   exact run) are a curve of their own: the ANN cell never reads them, an exact-search cell does.
// - Points flagged with a condition in EXCLUDING_FLAGS never set a cell: they are left off the
//   curve the cell is read on, and the cell counts them by flag (`excluded`).
// - With several index builds (--builds), the cell is read on each build's points: its value is
//   the median of the builds' values and its interval spans the builds' intervals.
// - A group where any point returned a row of another tenant than its query was confined to
//   reads `leak` in every cell (a security finding, named in `reason`), whatever its curve.
// - Each cell carries the shares of short answers and of queries under recall 0.5 where it was
//   read (src/metrics/frontier.ts); a cell under recall 0.5 at every point is `collapsed`.
// - Ties: a cell whose interval overlaps the interval of the best cell of its row (the best:
//   that of any other cell) is a tie: no lead counts, and tables print it as `≈`.
import { intervalsOverlap } from '../metrics/stats.ts';
import { leads, readCell, type Cell, type CellStatus, type CurvePoint } from '../metrics/frontier.ts';
import { leakText } from '../metrics/recall.ts';
import type { ResultFile, ResultGroup, ResultPoint } from '../results/schema.ts';
import { EXACT, exactSearchTest, type Search } from './exact-search.ts';

export type View = 'throughput' | 'latency';
export const VIEWS: readonly View[] = ['throughput', 'latency'];
/** Which way a view's value is better: more QPS, less latency. */
const BETTER: Record<View, 'higher' | 'lower'> = { throughput: 'higher', latency: 'lower' };

export const TARGETS = [0.9, 0.95, 0.99] as const;

/** Flags that keep a point off the frontier (the harness, not the engine, may have set its figure). */
const EXCLUDING_FLAGS = ['invalid-results', 'client-limited', 'busy-machine', 'harness-overhead'] as const;

interface BuildReading {
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
  /** Which view the cell reads: throughput (QPS, higher is better) or latency (p50 ms, one
   * request at a time, lower is better). */
  view: View;
  /** Which points the cell reads: the ANN search, or the participant's exact-search points. */
  search: Search;
  status: CellStatus;
  /** Throughput (QPS) or p50 latency (ms) read on the frontier, or null. */
  value: number | null;
  /** 95 % interval of value (from the point(s) it was read on; spanning builds), or null. */
  ci_low: number | null;
  ci_high: number | null;
  /** value / best value in the row (dataset, group, target, view); null without a value. For
   * latency the best is the lowest, so leads are 1 or more. */
  lead: number | null;
  /** Interval of the lead: [ci_low / best's ci_high, ci_high / best's ci_low]. */
  lead_ci: [number, number] | null;
  /** The interval overlaps the row's best (for the best: another cell's): no lead counts. */
  tie: boolean;
  /** Best recall reached in the group, or null. */
  max_recall: number | null;
  /** Recall of the point(s) the value was read on. */
  read_recall: number[];
  /** Where the cell was read (its point(s); without a value, the highest-recall point): the
   * share of queries that returned fewer than min(k, matching rows) ids, and the share whose
   * recall is below 0.5. Null without points. */
  short_share: number | null;
  low_recall_share: number | null;
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
  /** How the engine answered at the point(s) the cell was read on (docs/contracts.md, "Plans"):
   * the strategy label, `(declared)` when the adapter states it rather than a plan showing it;
   * null where the points carry none. */
  strategy?: string | null;
}

const ALL_FLAGGED = 'every point is flagged';

export const isExcluded = (flags: readonly string[]) => flags.some((f) => (EXCLUDING_FLAGS as readonly string[]).includes(f));

function curvePoint(p: ResultPoint, view: View): CurvePoint {
  const ci = view === 'throughput' ? p.ci?.qps : p.ci?.latency_ms.p50;
  return {
    recall: p.recall,
    value: view === 'throughput' ? p.qps : p.latency_ms.p50,
    knobs: p.knobs,
    ladderIndex: p.ladder_index,
    calibratedFor: p.calibrated_for,
    low: ci?.[0],
    high: ci?.[1],
    shortShare: p.short_results / p.queries,
    lowRecallShare: p.low_recall_share,
  };
}

/** Points of one view that no flag excludes (build: only that build's points). */
function viewPoints(g: ResultGroup, view: View, build?: number): ResultPoint[] {
  return g.points.filter((p) => p.view === view && !isExcluded(p.flags) && (build === undefined || (p.build ?? 0) === build));
}

/** The throughput curve of a group: the points measured in the throughput view that no flag
 * excludes (build: only that build's points). */
export function throughputCurve(g: ResultGroup, build?: number): CurvePoint[] {
  return viewPoints(g, 'throughput', build).map((p) => curvePoint(p, 'throughput'));
}

export function groupOrder(key: string): [number, number] {
  const [filter, k] = key.split('/');
  const filters = [
    'none',
    'cat10',
    'cat100',
    'cat1000',
    'num10',
    'num1',
    'cat10+num10',
    'cluster',
    'farcluster',
    'lang',
    'otherlang',
    ...[1, 5, 20, 50].flatMap((pct) => [`sel${pct}-scattered`, `sel${pct}-clustered`]),
    'tenant-large',
    'tenant-median',
    'tenant-tiny',
  ];
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

/** The curve one cell reads: a view's points of one search (ANN or exact), of one build. */
type CurveOf = (view: View, search: Search, build?: number) => CurvePoint[];

function readGroup(r: ResultFile, g: ResultGroup, view: View, search: Search, curveOf: CurveOf): DerivedCell[] {
  const out: DerivedCell[] = [];
  const isExact = exactSearchTest(r);
  const ofSearch = (p: ResultPoint) => isExact(p) === (search === EXACT);
  const excluded: Record<string, number> = {};
  for (const p of g.points) {
    if (p.view !== view || !ofSearch(p)) continue;
    for (const f of p.flags) if ((EXCLUDING_FLAGS as readonly string[]).includes(f)) excluded[f] = (excluded[f] ?? 0) + 1;
  }
  const driven = g.points.find((p) => p.view === view)?.driven ?? null;
  // The builds this view was timed on (later builds time the throughput view alone).
  const builds = [...new Set(g.points.filter((p) => p.view === view).map((p) => p.build ?? 0))].sort((a, b) => a - b);
  const better = BETTER[view];
  // A cross-tenant row anywhere in the group (any view, any build) fails all its cells.
  const leak = groupLeak(g);
  for (const target of TARGETS) {
    const base = {
      dataset: r.dataset.name,
      participant: r.participant,
      origin: r.origin,
      group: g.key,
      filter: g.filter,
      k: g.k,
      target,
      view,
      search,
      lead: null,
      lead_ci: null,
      tie: false,
      driven,
      excluded,
    };
    const unread = { value: null, ci_low: null, ci_high: null, max_recall: null, read_recall: [], short_share: null, low_recall_share: null };
    if (g.status === 'not_asked' || g.status === 'unsupported') {
      out.push({ ...base, ...unread, status: g.status, reason: g.reason });
      continue;
    }
    const cell = readCell(curveOf(view, search, builds.length > 1 ? builds[0] : undefined), target, better);
    if (leak) {
      out.push({ ...base, ...unread, status: 'leak', max_recall: cell.maxRecall, reason: leak });
      continue;
    }
    const cellOut: DerivedCell = {
      ...base,
      short_share: cell.shortShare,
      low_recall_share: cell.lowRecallShare,
      status: cell.status,
      value: cell.value,
      ci_low: cell.low,
      ci_high: cell.high,
      max_recall: cell.maxRecall,
      read_recall: cell.from?.map((p) => p.recall) ?? [],
      reason:
        g.status === 'failed'
          ? g.reason
          : Object.keys(excluded).length > 0 && cell.status === 'none'
            ? `${ALL_FLAGGED} (${Object.keys(excluded).join(', ')})`
            : undefined,
      // Calibration searches the ANN knob: it has no account of an exact scan.
      why: search === 'ann' ? whyOf(g, target, cell) : undefined,
      strategy: strategyOf(g, view, cell.from ?? []),
    };
    if (builds.length > 1) {
      const per: BuildReading[] = builds.map((b) => {
        const c = readCell(curveOf(view, search, b), target, better);
        return { build: b, status: c.status, value: c.value, ci_low: c.low, ci_high: c.high };
      });
      cellOut.builds = per;
      const values = per.filter((b) => b.value !== null);
      if (cellOut.value !== null && values.length > 0) {
        cellOut.value = median(values.map((b) => b.value!));
        const lows = values.map((b) => b.ci_low ?? b.value!);
        const highs = values.map((b) => b.ci_high ?? b.value!);
        cellOut.ci_low = Math.min(...lows);
        cellOut.ci_high = Math.max(...highs);
      }
    }
    out.push(cellOut);
  }
  return out;
}

/** The strategies of the points a cell was read on, distinct, joined by ' / '. */
function strategyOf(g: ResultGroup, view: View, from: { knobs: Record<string, number | string> }[]): string | null {
  const labels = new Set<string>();
  for (const f of from) {
    const key = JSON.stringify(f.knobs);
    const p = g.points.find((x) => x.view === view && x.strategy && JSON.stringify(x.knobs) === key);
    if (p?.strategy) labels.add(p.strategy.observed ? p.strategy.label : `${p.strategy.label} (declared)`);
  }
  return labels.size === 0 ? null : [...labels].join(' / ');
}

/** The security finding of a group where a point returned a row of another tenant than its
 * query was confined to, in one line naming the first leak; null when there is none. */
export function groupLeak(g: ResultGroup): string | null {
  const leaking = g.points.filter((p) => (p.tenant_leaks ?? 0) > 0);
  if (leaking.length === 0) return null;
  const first = leaking.find((p) => p.tenant_leak)?.tenant_leak;
  const rows = leaking.reduce((a, p) => a + (p.tenant_leaks ?? 0), 0);
  return `security: ${rows} cross-tenant row(s) at ${leaking.length} point(s)${first ? `; first: ${leakText(first)}` : ''}`;
}

/** The cells of the given views (default throughput, which the tables print; `report --json`
 * asks for both). */
export function deriveCells(results: ResultFile[], views: readonly View[] = ['throughput']): DerivedCell[] {
  const cells: DerivedCell[] = [];
  for (const r of results) {
    const isExact = exactSearchTest(r);
    // A participant measured in the latency view gets latency cells in every group, so a group
    // not asked or unsupported says so in both views.
    const measuredViews = views.filter((v) => v === 'throughput' || r.groups.some((g) => g.points.some((p) => p.view === v)));
    for (const g of r.groups) {
      const curveOf: CurveOf = (view, search, build) =>
        viewPoints(g, view, build)
          .filter((p) => isExact(p) === (search === EXACT))
          .map((p) => curvePoint(p, view));
      for (const view of measuredViews) {
        const inView = g.points.filter((p) => p.view === view);
        cells.push(...readGroup(r, g, view, 'ann', curveOf));
        if (inView.some(isExact)) cells.push(...readGroup(r, g, view, EXACT, curveOf));
      }
    }
  }
  // Leads and ties per row: the same dataset, group, target and view across participants (an
  // exact row competes like any participant: it is a way to answer the queries).
  const rows = new Map<string, DerivedCell[]>();
  for (const c of cells) {
    const key = `${c.dataset}\u0000${c.group}\u0000${c.target}\u0000${c.view}`;
    const row = rows.get(key);
    if (row) row.push(c);
    else rows.set(key, [c]);
  }
  for (const row of rows.values()) markLeads(row, BETTER[row[0].view]);
  return cells.sort(
    (a, b) =>
      a.dataset.localeCompare(b.dataset) ||
      VIEWS.indexOf(a.view) - VIEWS.indexOf(b.view) ||
      groupOrder(a.group)[0] - groupOrder(b.group)[0] ||
      groupOrder(a.group)[1] - groupOrder(b.group)[1] ||
      a.target - b.target ||
      a.participant.localeCompare(b.participant) ||
      (a.search === b.search ? 0 : a.search === 'ann' ? -1 : 1),
  );
}

/** The name of a cell's column: the participant, or "participant (exact)" for its exact row. */
export function columnName(c: Pick<DerivedCell, 'participant' | 'search'>): string {
  return c.search === EXACT ? `${c.participant} (${EXACT})` : c.participant;
}

const intervalOf = (c: DerivedCell) => ({ low: c.ci_low ?? c.value!, high: c.ci_high ?? c.value! });

/** Sets lead, lead_ci and tie on the cells of one row. */
export function markLeads(row: DerivedCell[], better: 'higher' | 'lower' = 'higher'): void {
  const l = leads(
    row.map((c) => c.value),
    better,
  );
  row.forEach((c, i) => (c.lead = l[i]));
  const valued = row.filter((c) => c.lead !== null);
  const best = valued.find((c) => c.lead === 1);
  if (!best) return;
  const bi = intervalOf(best);
  for (const c of valued) {
    const ci = intervalOf(c);
    // The ratio's bounds: the most and the least it can be given both intervals.
    c.lead_ci = [ci.low / bi.high, ci.high / bi.low];
    c.tie = c === best ? valued.some((o) => o !== best && intervalsOverlap(intervalOf(o), bi)) : intervalsOverlap(ci, bi);
  }
}

/** The lead as tables print it: `x0.52`, or `≈x1.00` for a tie (no lead counts). */
export function leadText(c: DerivedCell): string {
  return c.tie ? '≈x1.00' : `x${c.lead!.toFixed(2)}`;
}

/** The best recall a participant reached, as `max 0.987`: truncated, never rounded up, so a
 * recall short of a target never prints as the target itself (0.987 is not "0.99"). */
export function fmtMaxRecall(recall: number): string {
  return `max ${(Math.floor(recall * 1000) / 1000).toFixed(3)}`;
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
      return fmtMaxRecall(c.max_recall!);
    case 'collapsed':
      return `collapsed, short ${fmtShare(c.short_share)}`;
    case 'leak':
      return 'LEAK';
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

/** A share as a whole percent (`12%`), `<1%` for a small non-zero one, `?` when unknown. */
export function fmtShare(x: number | null): string {
  if (x === null || !Number.isFinite(x)) return '?';
  return x > 0 && x < 0.005 ? '<1%' : `${Math.round(x * 100)}%`;
}

/** The shares beside a cell where any is worth a look (1 % or more), e.g. ` short 4% low 12%`. */
export function sharesText(c: Pick<DerivedCell, 'short_share' | 'low_recall_share' | 'status'>): string {
  if (c.status === 'collapsed') return ` low ${fmtShare(c.low_recall_share)}`;
  const short = c.short_share ?? 0;
  const low = c.low_recall_share ?? 0;
  if (short < 0.005 && low < 0.005) return '';
  return ` short ${fmtShare(short)} low ${fmtShare(low)}`;
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
