/// <reference lib="dom" />
// The results page's script, bundled by esbuild into one IIFE at report time (html.ts) and
// inlined in the page, so the page needs no network when it is viewed. It draws the
// recall-vs-QPS curves with Observable Plot and applies the dataset / k / filter selectors.
// The frontier it draws comes from src/metrics/frontier.ts, the same code the table's
// cells were read with, over the same points (flagged points left off, one curve per index
// build, as src/report/cells.ts reads them); the table itself is static HTML written from
// deriveCells and is only shown or hidden here, never recomputed.
import * as Plot from '@observablehq/plot';
import { paretoFrontier, type CurvePoint } from '../../metrics/frontier.ts';
import { isExcluded } from '../cells.ts';
import { EXACT } from '../exact-search.ts';
import type { PageData, PagePoint, PageSeries } from './types.ts';
import { READINGS, type Reading, type ReadingName } from '../../results/readings.ts';
import { curveSpec, recallAxis, type Curve, type RecallAxis } from './axes.ts';
import { drawChurnCharts } from './churn-app.ts';

interface Datum extends PagePoint {
  participant: string;
  origin: 'measured' | 'imported';
  /** Position on the recall axis (recall itself, or its nines). */
  x: number;
  y: number;
  knobText: string;
  /** A flag keeps the point off the frontier. */
  excluded: boolean;
  /** Set when the participant's points come from several index builds. */
  buildText?: string;
}

const PALETTE = ['#4e79a7', '#f28e2c', '#e15759', '#76b7b2', '#59a14f', '#edc949', '#af7aa1', '#ff9da7', '#9c755f', '#7f7f7f', '#1f3b73', '#b35806'];
/** Flagged points: drawn as rings of this colour, whoever measured them. */
const EXCLUDED_COLOR = '#d62728';
const TARGET_RECALLS = [0.9, 0.95, 0.99];

const data: PageData = JSON.parse(document.getElementById('vb-data')!.textContent ?? '{}') as PageData;

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T | null;
const selTier = $<HTMLSelectElement>('sel-tier');
const selDataset = $<HTMLSelectElement>('sel-dataset');
const selK = $<HTMLSelectElement>('sel-k');
const selFilter = $<HTMLSelectElement>('sel-filter');
const selCurve = $<HTMLSelectElement>('sel-curve');
const selAxis = $<HTMLSelectElement>('sel-xaxis');
const chartsEl = $<HTMLDivElement>('charts');

function state() {
  return {
    dataset: selDataset?.value ?? data.datasets[0],
    k: selK?.value ?? 'all',
    filter: selFilter?.value ?? 'all',
    curve: (selCurve?.value ?? 'qps') as Curve,
    axis: (selAxis?.value ?? 'linear') as RecallAxis,
  };
}

function knobText(knobs: Record<string, number | string>): string {
  const entries = Object.entries(knobs);
  return entries.length === 0 ? '(none)' : entries.map(([k, v]) => `${k}=${v}`).join(', ');
}

/** The readings shown in a point's tip (src/results/readings.ts), in their declared order. */
const TIP_READINGS = (Object.entries(READINGS) as [ReadingName, Reading][]).filter(([, r]) => r.tip);
const readingText = (r: Reading, v: number) => (r.kind === 'count' ? String(v) : r.kind === 'share' ? `${(v * 100).toFixed(1)} %` : v.toFixed(4));
const fmt = (v: number, digits = 3) => (Number.isFinite(v) ? (Math.abs(v) >= 1000 ? Math.round(v).toLocaleString('en-US') : v.toPrecision(digits)) : 'n/a');
const fmtRange = (r: readonly [number, number] | undefined, digits = 3) => (r ? `${fmt(r[0], digits)} – ${fmt(r[1], digits)}` : undefined);

function el(tag: string, cls?: string, text?: string): HTMLElement {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function colorOf(dataset: string): (p: string) => string {
  const names = (data.participants[dataset] ?? []).map((p) => p.name);
  return (p) => PALETTE[Math.max(0, names.indexOf(p)) % PALETTE.length];
}

/** Shows or hides every element tagged with data-ds / data-k / data-filter. */
function applyVisibility(s: ReturnType<typeof state>): void {
  for (const node of Array.from(document.querySelectorAll<HTMLElement>('[data-ds],[data-k],[data-filter]'))) {
    const ds = node.dataset.ds;
    const k = node.dataset.k;
    const f = node.dataset.filter;
    const show =
      (ds === undefined || ds === s.dataset) && (k === undefined || s.k === 'all' || k === s.k) && (f === undefined || s.filter === 'all' || f === s.filter);
    node.hidden = !show;
  }
}

/** Tooltip text of a point's kind: calibrated, and why it is off the frontier. */
function kindText(d: Datum): string | undefined {
  const parts: string[] = [];
  if (d.exact) parts.push('exact search (its own row in the table)');
  if (d.calibrated_for !== undefined) parts.push(`calibrated for ${d.calibrated_for}`);
  if (d.excluded) parts.push(`left off the frontier: ${d.flags.filter((f) => isExcluded([f])).join(', ')}`);
  return parts.length ? parts.join('; ') : undefined;
}

function drawGroup(ds: string, group: string, series: PageSeries[], curve: Curve, axis: RecallAxis, width: number): HTMLElement {
  const latencyDriven =
    [...new Set(series.flatMap((s) => s.points.filter((p) => p.view === 'latency' && p.driven).map((p) => p.driven!)))].join(' / ') || '1 client';
  const spec = curveSpec(curve, latencyDriven);
  const color = colorOf(ds);
  const all: Datum[] = [];
  for (const s of series) {
    const pts = s.points.filter((p) => p.view === spec.view);
    const builds = [...new Set(pts.map((p) => p.build ?? 0))].sort((a, b) => a - b);
    for (const p of pts) {
      const y = spec.value(p);
      if (!(Number.isFinite(y) && y > 0 && Number.isFinite(p.recall))) continue;
      const buildText = builds.length > 1 ? `${p.build ?? 0} (of ${builds.length})` : undefined;
      all.push({ ...p, participant: s.participant, origin: s.origin, x: p.recall, y, knobText: knobText(p.knobs), excluded: isExcluded(p.flags), buildText });
    }
  }
  if (all.length === 0) {
    const why = series.map((s) => `${s.participant}: ${s.status === 'measured' ? 'no usable points in this view' : s.status.replace('_', ' ')}`).join('; ');
    return el('p', 'empty', `No measured points${why ? ` (${why})` : ''}.`);
  }
  const { at, scale } = recallAxis(
    axis,
    all.flatMap((d) => (d.ci ? [d.recall, d.ci.recall[0], d.ci.recall[1]] : [d.recall])),
  );
  for (const d of all) d.x = at(d.recall);

  // One frontier per participant, build and search (the index's, or an exact scan's), over the
  // points the table reads (no flagged one).
  const frontiers: Datum[][] = [];
  const curves = new Map<string, Datum[]>();
  for (const d of all) {
    if (d.excluded) continue;
    const key = `${d.participant}\u0000${d.build ?? 0}\u0000${d.exact ? EXACT : 'ann'}`;
    curves.set(key, [...(curves.get(key) ?? []), d]);
  }
  for (const pts of curves.values()) {
    const curvePts: (CurvePoint & { d: Datum })[] = pts.map((d) => ({ recall: d.recall, value: d.y, knobs: d.knobs, ladderIndex: d.ladder_index, d }));
    const front = paretoFrontier(curvePts, spec.better) as (CurvePoint & { d: Datum })[];
    if (front.length > 0) frontiers.push(front.map((f) => f.d));
  }

  const barColor = (d: Datum) => (d.excluded ? EXCLUDED_COLOR : color(d.participant));
  const yBars = all.flatMap((d) => {
    const ci = spec.interval(d);
    return ci && ci[0] > 0 && ci[1] > 0 ? [{ x: d.x, y1: ci[0], y2: ci[1], stroke: barColor(d) }] : [];
  });
  const xBars = all.flatMap((d) => (d.ci ? [{ y: d.y, x1: at(d.ci.recall[0]), x2: at(d.ci.recall[1]), stroke: barColor(d) }] : []));
  const readings =
    curve === 'qps'
      ? // Readings at the target itself; an 'above' cell is the value of a point at a higher
        // recall, which its own dot already shows.
        data.cells
          .filter(
            (c) =>
              c.dataset === ds && c.group === group && c.value !== null && (c.status === 'point' || c.status === 'interpolated' || c.status === 'calibrated'),
          )
          .map((c) => ({ x: at(c.target), y: c.value as number }))
      : [];
  const fillOf = (d: Datum) => (d.origin === 'imported' ? '#ffffff' : color(d.participant));
  const marks: Plot.Markish[] = [
    Plot.ruleX(TARGET_RECALLS.map(at), { stroke: '#c9ced6', strokeDasharray: '3,3' }),
    Plot.ruleX(yBars, { x: 'x', y1: 'y1', y2: 'y2', stroke: 'stroke', strokeWidth: 1.2, strokeOpacity: 0.65, className: 'vb-ci-y' }),
    Plot.ruleY(xBars, { y: 'y', x1: 'x1', x2: 'x2', stroke: 'stroke', strokeWidth: 1.2, strokeOpacity: 0.65, className: 'vb-ci-x' }),
    ...frontiers.map((f) =>
      Plot.line(f, {
        x: 'x',
        y: 'y',
        stroke: color(f[0].participant),
        strokeWidth: 2,
        strokeDasharray: f[0].origin === 'imported' ? '5,4' : undefined,
        curve: 'linear',
      }),
    ),
    Plot.dot(readings, { x: 'x', y: 'y', symbol: 'times', r: 5, stroke: '#222', strokeWidth: 1.5 }),
    Plot.dot(
      all.filter((d) => !d.excluded && d.calibrated_for === undefined),
      { x: 'x', y: 'y', r: 3.5, stroke: (d: Datum) => color(d.participant), fill: fillOf, strokeWidth: 1.5, className: 'vb-point' },
    ),
    Plot.dot(
      all.filter((d) => !d.excluded && d.calibrated_for !== undefined),
      { x: 'x', y: 'y', r: 5.5, symbol: 'diamond', stroke: '#1d2433', fill: fillOf, strokeWidth: 1, className: 'vb-calibrated' },
    ),
    Plot.dot(
      all.filter((d) => d.excluded),
      { x: 'x', y: 'y', r: 4.5, stroke: EXCLUDED_COLOR, fill: 'none', strokeWidth: 1.8, className: 'vb-excluded' },
    ),
    // One tip over every kind of point, so two tips never show at once.
    Plot.tip(
      all,
      Plot.pointer({
        x: 'x',
        y: 'y',
        channels: {
          participant: (d: Datum) => d.participant + (d.origin === 'imported' ? ' (imported)' : ''),
          'index build': (d: Datum) => d.buildText,
          point: (d: Datum) => kindText(d),
          knobs: (d: Datum) => d.knobText,
          'recall (tie-aware)': (d: Datum) => d.recall.toFixed(4) + (d.ci ? `  (95 %: ${fmtRange(d.ci.recall, 4)})` : ''),
          // The readings the registry marks for the tip, each as its kind reads.
          ...Object.fromEntries(
            TIP_READINGS.map(([name, r]) => [
              r.label,
              (d: Datum) => (d[name] === undefined || notRecorded(ds, d.participant, name) ? 'not recorded' : readingText(r, d[name])),
            ]),
          ),
          QPS: (d: Datum) => fmt(d.qps) + (d.ci ? `  (95 %: ${fmtRange(d.ci.qps)})` : ''),
          'latency p50/p95/p99 ms': (d: Datum) => `${fmt(d.latency_ms.p50)} / ${fmt(d.latency_ms.p95)} / ${fmt(d.latency_ms.p99)}`,
          [`${curve} 95 % interval, ms`]: (d: Datum) => (curve === 'qps' ? undefined : fmtRange(spec.interval(d))),
          driven: (d: Datum) => d.driven ?? (d.view === 'latency' ? `${d.clients} client` : `${d.clients} clients`),
          passes: (d: Datum) => (d.passes === undefined ? undefined : String(d.passes)),
          queries: (d: Datum) => String(d.queries),
          flags: (d: Datum) => (d.flags.length ? d.flags.join(', ') : 'none'),
        },
        format: { x: false, y: false },
        fontSize: 11,
        lineWidth: 44,
      }),
    ),
  ];
  const svg = Plot.plot({
    width,
    height: Math.max(220, Math.min(320, Math.round(width * 0.62))),
    marginLeft: 56,
    marginRight: 16,
    style: { fontSize: '11px', fontFamily: 'inherit', overflow: 'visible' },
    x: scale,
    y: { type: 'log', label: spec.label, grid: true, nice: true },
    marks,
  });
  const wrap = el('div', 'plot');
  wrap.append(svg);
  return wrap;
}

function notRecorded(ds: string, participant: string, field: string): boolean {
  return (data.notRecorded[`${ds}|${participant}`] ?? []).includes(field);
}

function legend(ds: string): HTMLElement {
  const color = colorOf(ds);
  const box = el('div', 'legend');
  for (const p of data.participants[ds] ?? []) {
    const item = el('span', `legend-item${p.origin === 'imported' ? ' imported' : ''}`);
    const sw = el('span', 'swatch');
    sw.style.borderColor = color(p.name);
    sw.style.background = p.origin === 'imported' ? '#fff' : color(p.name);
    item.append(sw, document.createTextNode(p.name + (p.origin === 'imported' ? ' (imported)' : '')));
    box.append(item);
  }
  const x = el('span', 'legend-item');
  x.append(el('span', 'cross', '×'), document.createTextNode('table reading at the target'));
  box.append(x);
  // Keys for the stable-point marks, where the dataset has such points.
  const points = data.series.filter((s) => s.dataset === ds).flatMap((s) => s.points);
  const key = (glyph: HTMLElement, text: string) => {
    const item = el('span', 'legend-item');
    item.append(glyph, document.createTextNode(text));
    box.append(item);
  };
  if (points.some((p) => p.ci)) key(el('span', 'cross', '┼'), '95 % intervals (QPS or latency; recall)');
  if (points.some((p) => p.calibrated_for !== undefined)) key(el('span', 'cross', '◆'), 'calibrated for a target recall');
  if (points.some((p) => isExcluded(p.flags))) {
    const ring = el('span', 'swatch');
    ring.style.borderColor = EXCLUDED_COLOR;
    ring.style.background = 'transparent';
    key(ring, 'flagged: left off the frontier');
  }
  return box;
}

let lastWidth = 0;
function drawCharts(): void {
  if (!chartsEl) return;
  const s = state();
  chartsEl.replaceChildren();
  chartsEl.append(legend(s.dataset));
  const grid = el('div', 'chart-grid');
  chartsEl.append(grid);
  const groups = (data.groups[s.dataset] ?? []).filter((g) => {
    const [f, k] = g.split('/');
    return (s.k === 'all' || k === s.k) && (s.filter === 'all' || f === s.filter);
  });
  let drawn = 0;
  for (const g of groups) {
    const series = data.series.filter((x) => x.dataset === s.dataset && x.group === g);
    if (series.every((x) => x.status === 'not_asked')) continue;
    const card = el('figure', 'chart-card');
    card.dataset.group = g;
    const cap = el('figcaption', undefined, `${g.replace('/', ' · k=')}`);
    card.append(cap);
    grid.append(card);
    const width = Math.max(260, Math.floor(card.clientWidth || grid.clientWidth || 360) - 2);
    card.append(drawGroup(s.dataset, g, series, s.curve, s.axis, width));
    drawn++;
  }
  if (drawn === 0)
    grid.append(el('p', 'empty', 'No group with measured points matches the selection (groups whose filter keeps fewer than 10 x k rows are not asked).'));
  lastWidth = chartsEl.clientWidth;
  document.body.dataset.charts = String(drawn);
}

/** Charts of curves found in the result files' extra sections (e.g. a concurrency sweep). */
function drawExtraCharts(): void {
  const s = state();
  for (const c of data.extraCurves) {
    const host = document.querySelector<HTMLElement>(`[data-extra-chart="${c.id}"]`);
    if (!host || c.dataset !== s.dataset) continue;
    const color = colorOf(c.dataset);
    const width = Math.max(260, Math.floor(host.clientWidth || 360));
    const marks: Plot.Markish[] = [];
    for (const sr of c.series) {
      const pts = sr.points.filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y)).sort((a, b) => a.x - b.x);
      if (pts.length === 0) continue;
      marks.push(
        Plot.line(pts, { x: 'x', y: 'y', stroke: color(sr.participant), strokeWidth: 2, strokeDasharray: sr.origin === 'imported' ? '5,4' : undefined }),
      );
      marks.push(
        Plot.dot(pts, {
          x: 'x',
          y: 'y',
          r: 3,
          fill: color(sr.participant),
          tip: !c.titled,
          title: (p: { x: number; y: number; flagged?: boolean }) =>
            `${sr.participant}\n${c.x} = ${p.x}\n${c.y} = ${fmt(p.y)}${p.flagged ? '\nclient-limited: the client, not the engine, may have set this figure' : ''}`,
        }),
      );
      // Points whose client neared its own limit (the load generator's client-limited flag).
      const flagged = pts.filter((p) => p.flagged);
      if (flagged.length > 0) marks.push(Plot.dot(flagged, { x: 'x', y: 'y', r: 7, stroke: '#d62728', strokeWidth: 2, fill: 'none' }));
    }
    host.replaceChildren(
      Plot.plot({
        width,
        height: 220,
        marginLeft: 56,
        style: { fontSize: '11px', fontFamily: 'inherit' },
        x: { type: c.logX ? 'log' : 'linear', label: `${c.x} →`, grid: true },
        y: { label: c.y, grid: true },
        marks,
      }),
    );
  }
}

function update(): void {
  applyVisibility(state());
  drawCharts();
  drawExtraCharts();
  drawChurnCharts(data.churnCurves, state().dataset, colorOf(state().dataset));
}

for (const box of Array.from(document.querySelectorAll<HTMLInputElement>('input.toggle-not-asked'))) {
  box.addEventListener('change', () => box.closest('.ds-block')?.querySelector('table.cells')?.classList.toggle('show-not-asked', box.checked));
}

for (const sel of [selDataset, selK, selFilter, selCurve]) sel?.addEventListener('change', update);
// A tier offers its own datasets only; the first of them is shown.
selTier?.addEventListener('change', () => {
  if (!selDataset) return;
  const options = Array.from(selDataset.options);
  for (const o of options) o.hidden = o.dataset.tier !== selTier.value;
  const first = options.find((o) => !o.hidden);
  if (first) selDataset.value = first.value;
  update();
});
selTier?.dispatchEvent(new Event('change'));
// The recall axis changes only the curves.
selAxis?.addEventListener('change', drawCharts);
let timer: ReturnType<typeof setTimeout> | undefined;
window.addEventListener('resize', () => {
  clearTimeout(timer);
  timer = setTimeout(() => {
    if (chartsEl && Math.abs(chartsEl.clientWidth - lastWidth) > 8) drawCharts();
  }, 150);
});
if (!selTier) update();
document.body.dataset.ready = '1';
