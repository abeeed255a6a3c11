import { curvePoint, EXCLUDING_FLAGS, TARGETS, viewPoints } from '../metrics/curve.ts';
import { grainsOf, readCell, type Cell, type CurvePoint } from '../metrics/frontier.ts';
import { curveSpread, withSpread } from '../metrics/curve-spread.ts';
import { leakText } from '../metrics/recall.ts';
import type { ResultFile, ResultGroup, ResultPoint } from '../results/schema.ts';
import type { BuildReading, CellShares, DerivedCell, View } from './cell-types.ts';
import { CELL_SHARES } from '../results/readings.ts';
import { buildSamples, rememberPoint, rememberSeries, seriesOf } from './cell-series.ts';
import { ALL_FLAGGED, markLeads } from './cell-text.ts';
// The cells' types and text live beside this file; their users take them from here.
export type { DerivedCell, View } from './cell-types.ts';
export { cellText, columnName, fmtMaxRecall, fmtPct, fmtQps, fmtShare, halfWidth, leadText, markLeads, readText, sharesText } from './cell-text.ts';
import { EXACT, exactSearchTest, type Search } from './exact-search.ts';

/** The views in the order the report shows them: throughput first (the table's cells). */
export const REPORT_VIEWS: readonly View[] = ['throughput', 'latency'];
/** Which way a view's value is better: more QPS, less latency. */
const BETTER: Record<View, 'higher' | 'lower'> = { throughput: 'higher', latency: 'lower' };

export { TARGETS, isExcluded } from '../metrics/curve.ts';

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
    'label',
    'otherlabel',
    'measure10',
    'label+measure10',
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
      return 'a point at a higher recall beats the calibrated one beyond the intervals, or the calibrated point is off the frontier or flagged';
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
  const grains = grainsOf(r.settings.calibration);
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
      lead_method: null,
      tie: false,
      driven,
      excluded,
    };
    const unread = {
      value: null,
      ci_low: null,
      ci_high: null,
      max_recall: null,
      read_recall: [],
      ...cellShares({}),
      read_bytes_per_query: null,
    };
    if (g.status === 'not_asked' || g.status === 'unsupported') {
      out.push({ ...base, ...unread, status: g.status, reason: g.reason });
      continue;
    }
    const cell = readCell(curveOf(view, search, builds.length > 1 ? builds[0] : undefined), target, better, grains);
    if (leak) {
      out.push({ ...base, ...unread, status: 'leak', max_recall: cell.maxRecall, reason: leak });
      continue;
    }
    const cellOut: DerivedCell = {
      ...base,
      ...cellShares(cell.shares),
      read_bytes_per_query: cell.readBytes,
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
    if (builds.length <= 1 && cell.value !== null) rememberSeries(cellOut, [buildSamples(cell.from, target, view)]);
    if (builds.length > 1) {
      const perCell = builds.map((b) => readCell(curveOf(view, search, b), target, better, grains));
      const per: BuildReading[] = perCell.map((c, i) => ({ build: builds[i], status: c.status, value: c.value, ci_low: c.low, ci_high: c.high }));
      if (perCell.every((c) => c.value !== null))
        rememberSeries(
          cellOut,
          perCell.map((c) => buildSamples(c.from, target, view)),
        );
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
/** Every share a cell carries (src/results/readings.ts), null where the points lack it. */
function cellShares(shares: Record<string, number>): CellShares {
  return Object.fromEntries(CELL_SHARES.map((c) => [c.name, shares[c.name] ?? null])) as CellShares;
}

/** A cold group's spread (src/metrics/curve-spread.ts) over both views' ANN points. */
function coldSpread(g: ResultGroup, isExact: (p: ResultPoint) => boolean): number | null {
  const curve = (view: View) =>
    viewPoints(g, view)
      .filter((p) => !isExact(p))
      .map((p) => curvePoint(p, view));
  const sd = curveSpread([curve('throughput'), curve('latency')]);
  return sd !== null && sd > 0 ? sd : null;
}

export function deriveCells(results: ResultFile[], views: readonly View[] = ['throughput']): DerivedCell[] {
  const cells: DerivedCell[] = [];
  for (const r of results) {
    const isExact = exactSearchTest(r);
    // A participant measured in the latency view gets latency cells in every group, so a group
    // not asked or unsupported says so in both views.
    const measuredViews = views.filter((v) => v === 'throughput' || r.groups.some((g) => g.points.some((p) => p.view === v)));
    for (const g of r.groups) {
      const spread = r.run.protocol === 'cold' ? coldSpread(g, isExact) : null;
      const curveOf: CurveOf = (view, search, build) =>
        viewPoints(g, view, build)
          .filter((p) => isExact(p) === (search === EXACT))
          .map((p) => rememberPoint(spread ? withSpread(curvePoint(p, view), spread) : curvePoint(p, view), p));
      for (const view of measuredViews) {
        const inView = g.points.filter((p) => p.view === view);
        const read = [...readGroup(r, g, view, 'ann', curveOf), ...(inView.some(isExact) ? readGroup(r, g, view, EXACT, curveOf) : [])];
        if (spread) for (const c of read) if (c.value !== null) c.spread = spread;
        cells.push(...read);
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
  for (const row of rows.values()) markLeads(row, BETTER[row[0].view], seriesOf);
  return cells.sort(
    (a, b) =>
      a.dataset.localeCompare(b.dataset) ||
      REPORT_VIEWS.indexOf(a.view) - REPORT_VIEWS.indexOf(b.view) ||
      groupOrder(a.group)[0] - groupOrder(b.group)[0] ||
      groupOrder(a.group)[1] - groupOrder(b.group)[1] ||
      a.target - b.target ||
      a.participant.localeCompare(b.participant) ||
      (a.search === b.search ? 0 : a.search === 'ann' ? -1 : 1),
  );
}

/** The name of a cell's column: the participant, or "participant (exact)" for its exact row. */
