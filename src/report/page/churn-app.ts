/// <reference lib="dom" />
// The browser half of the live-churn section (churn-html.ts writes the table and the chart
// hosts): draws each curve over time with Observable Plot, one line per participant in the
// page's participant colours. Bundled into the page script with app.ts.
import * as Plot from '@observablehq/plot';
import type { ChurnCurve } from './types.ts';

const fmt = (v: number) => (Math.abs(v) >= 1000 ? Math.round(v).toLocaleString('en-US') : v.toPrecision(4));

/** Draws the churn curves of the selected dataset into their hosts, and their legend. */
export function drawChurnCharts(curves: ChurnCurve[] | undefined, dataset: string, color: (participant: string) => string): void {
  const legend = document.querySelector<HTMLElement>(`[data-churn-legend="${CSS.escape(dataset)}"]`);
  if (legend) {
    const names = [...new Set((curves ?? []).filter((c) => c.dataset === dataset).flatMap((c) => c.series.map((s) => s.participant)))];
    legend.replaceChildren(
      ...names.map((name) => {
        const item = document.createElement('span');
        item.className = 'legend-item';
        const sw = document.createElement('span');
        sw.className = 'swatch';
        sw.style.borderColor = color(name);
        sw.style.background = color(name);
        item.append(sw, document.createTextNode(name));
        return item;
      }),
    );
  }
  for (const c of curves ?? []) {
    const host = document.querySelector<HTMLElement>(`[data-churn-chart="${c.id}"]`);
    if (!host || c.dataset !== dataset) continue;
    const width = Math.max(260, Math.floor(host.clientWidth || 360));
    const marks: Plot.Markish[] = [];
    if (c.metric === 'recall') marks.push(Plot.ruleY([1], { stroke: '#c9ced6', strokeDasharray: '3,3' }));
    for (const s of c.series) {
      if (s.points.length === 0) continue;
      const stroke = color(s.participant);
      marks.push(Plot.line(s.points, { x: 't', y: 'y', stroke, strokeWidth: 2 }));
      marks.push(
        Plot.dot(s.points, {
          x: 't',
          y: 'y',
          r: 3,
          fill: stroke,
          tip: true,
          title: (p: { t: number; y: number }) => `${s.participant}\nt = ${p.t.toFixed(1)} s\n${c.metric} = ${fmt(p.y)}`,
        }),
      );
    }
    const ys = c.series.flatMap((s) => s.points.map((p) => p.y));
    const y: Plot.ScaleOptions =
      c.metric === 'recall'
        ? // Enough room below the lowest window for a drop to read as one.
          { label: 'recall@k (tie-aware)', domain: [Math.max(0, Math.min(0.9, ...ys) - 0.02), 1.005], grid: true }
        : c.metric === 'latency_p95_ms'
          ? // Engines' read latencies differ by orders of magnitude.
            { type: 'log', label: 'ms (log)', grid: true }
          : { label: 'writes / s', grid: true, zero: true };
    host.replaceChildren(
      Plot.plot({
        width,
        height: 220,
        marginLeft: 52,
        style: { fontSize: '11px', fontFamily: 'inherit' },
        x: { label: 'seconds into the step →', grid: true },
        y,
        marks,
      }),
    );
    host.dataset.drawn = String(c.series.filter((s) => s.points.length > 0).length);
  }
}
