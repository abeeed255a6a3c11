// The page's filters view (node side): for each dataset with grid groups (sel*-scattered,
// sel*-clustered) and each participant that has them, recall and QPS against selectivity, the
// scattered and the clustered series side by side, at one target. Every mark is read from
// deriveCells (the table's cells), never from the points' frontier again; only a cell without
// a value looks up its highest-recall point, for that point's strategy. Drawn here as static
// SVG, so the view needs no script; marks carry data-sel, data-corr, data-strategy and a title.
import { fmtMaxRecall, fmtQps } from '../cell-text.ts';
import type { DerivedCell } from '../cell-types.ts';
import type { ResultFile } from '../../results/schema.ts';
import { esc } from './html-text.ts';
import { participantOrder } from './tables-html.ts';

/** The cell target the view reads (the middle of the table's targets). */
const TARGET = 0.95;
const CORRS = ['scattered', 'clustered'] as const;
type Corr = (typeof CORRS)[number];
const COLOR: Record<Corr, string> = { scattered: '#4e79a7', clustered: '#e15759' };
const GRID = /^sel(\d+)-(scattered|clustered)$/;

const W = 280;
const H = 170;
const M = { left: 46, right: 10, top: 20, bottom: 30 };

interface Mark {
  sel: number;
  corr: Corr;
  cell: DerivedCell;
  /** Recall drawn: that of the point(s) the cell was read on, or the max recall without a value. */
  recall: number | null;
  strategy: string;
  fallback: boolean;
}

const pctText = (sel: number) => `${sel} %`;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** The strategy of the participant's highest-recall point in a group: a cell without a value
 * was read at no point, so the mark it shows (the max recall) is that point's. */
function maxRecallStrategy(r: ResultFile | undefined, c: DerivedCell): string | null {
  const g = r?.groups.find((x) => x.key === c.group);
  const p = g?.points.find((x) => x.view === c.view && x.recall === c.max_recall && x.strategy);
  if (!p?.strategy) return null;
  return p.strategy.observed ? p.strategy.label : `${p.strategy.label} (declared)`;
}

function marksOf(cells: DerivedCell[], r: ResultFile | undefined): { marks: Mark[]; missing: string[] } {
  const marks: Mark[] = [];
  const missing: string[] = [];
  for (const c of cells) {
    const m = GRID.exec(c.filter)!;
    const base = { sel: Number(m[1]), corr: m[2] as Corr, cell: c };
    if (c.value !== null) {
      marks.push({ ...base, recall: c.read_recall.length > 0 ? mean(c.read_recall) : null, strategy: c.strategy ?? 'none recorded', fallback: false });
    } else if (c.max_recall !== null && c.status !== 'leak') {
      marks.push({ ...base, recall: c.max_recall, strategy: maxRecallStrategy(r, c) ?? 'none recorded', fallback: true });
      missing.push(`${c.filter}: ${c.status.replace(/_/g, ' ')} at ${TARGET}, ${fmtMaxRecall(c.max_recall)} drawn hollow, no QPS`);
    } else {
      missing.push(`${c.filter}: ${c.status.replace(/_/g, ' ')}${c.reason ? ` (${c.reason})` : ''}`);
    }
  }
  return { marks, missing };
}

interface Axis {
  at: (v: number) => number;
  ticks: number[];
  label: (v: number) => string;
}

function xAxis(sels: number[]): Axis {
  const lo = Math.log10(Math.min(...sels) / 1.5);
  const hi = Math.log10(Math.max(...sels) * 1.5);
  return { at: (v) => M.left + ((Math.log10(v) - lo) / (hi - lo)) * (W - M.left - M.right), ticks: sels, label: pctText };
}

function yLinear(lo: number, hi: number, ticks: number[], label: (v: number) => string): Axis {
  return { at: (v) => H - M.bottom - ((v - lo) / (hi - lo || 1)) * (H - M.top - M.bottom), ticks, label };
}

function recallAxis(values: number[]): Axis {
  const lo = Math.max(0, Math.floor(Math.min(TARGET, ...values) * 10) / 10 - 0.05);
  const ticks = [lo, TARGET, 1].filter((t, i, a) => a.indexOf(t) === i);
  return yLinear(lo, 1, ticks, (v) => v.toFixed(2));
}

function qpsAxis(values: number[]): Axis {
  if (values.length === 0) return yLinear(0, 1, [], String);
  const lo = Math.log10(Math.min(...values) / 1.6);
  const hi = Math.log10(Math.max(...values) * 1.6);
  const log = yLinear(lo, hi, [], fmtQps);
  return { at: (v) => log.at(Math.log10(v)), ticks: [Math.min(...values), Math.max(...values)].filter((t, i, a) => a.indexOf(t) === i), label: fmtQps };
}

function markTitle(m: Mark, metric: 'recall' | 'qps'): string {
  const c = m.cell;
  const at = m.fallback
    ? `${c.status.replace(/_/g, ' ')} at recall ${TARGET}: ${fmtMaxRecall(m.recall!)} shown instead`
    : metric === 'qps'
      ? `QPS ${fmtQps(c.value!)} at recall ${c.read_recall.map((x) => x.toFixed(3)).join(', ')}`
      : `recall ${c.read_recall.map((x) => x.toFixed(3)).join(', ')} where QPS ${fmtQps(c.value!)} was read`;
  return `${c.participant}, ${c.group}: ${at}; strategy: ${m.strategy}`;
}

function chart(marks: Mark[], sels: number[], metric: 'recall' | 'qps'): string {
  const shown = marks.filter((m) => (metric === 'recall' ? m.recall !== null : !m.fallback));
  const value = (m: Mark) => (metric === 'recall' ? m.recall! : m.cell.value!);
  const x = xAxis(sels);
  const y = metric === 'recall' ? recallAxis(shown.map(value)) : qpsAxis(shown.map(value));
  const out: string[] = [
    `<svg class="vb-filters ${metric}" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${metric} against selectivity">`,
  ];
  const bottom = H - M.bottom;
  out.push(`<line class="axis" x1="${M.left}" x2="${W - M.right}" y1="${bottom}" y2="${bottom}"/>`);
  for (const t of x.ticks) out.push(`<text class="tick" x="${x.at(t).toFixed(1)}" y="${bottom + 13}" text-anchor="middle">${esc(x.label(t))}</text>`);
  out.push(`<text class="label" x="${(W + M.left) / 2}" y="${H - 3}" text-anchor="middle">rows kept (log) →</text>`);
  for (const t of y.ticks) {
    const ty = y.at(t).toFixed(1);
    out.push(
      `<line class="grid" x1="${M.left}" x2="${W - M.right}" y1="${ty}" y2="${ty}"/><text class="tick" x="${M.left - 4}" y="${ty}" dy="0.32em" text-anchor="end">${esc(y.label(t))}</text>`,
    );
  }
  out.push(`<text class="label" x="4" y="2" dy="0.8em">${metric === 'recall' ? '↑ recall' : '↑ QPS (log)'}</text>`);
  for (const corr of CORRS) {
    const series = shown.filter((m) => m.corr === corr).sort((a, b) => a.sel - b.sel);
    out.push(`<g class="vb-series" data-corr="${corr}" stroke="${COLOR[corr]}" fill="${COLOR[corr]}">`);
    if (series.length > 1)
      out.push(`<polyline fill="none" points="${series.map((m) => `${x.at(m.sel).toFixed(1)},${y.at(value(m)).toFixed(1)}`).join(' ')}"/>`);
    for (const m of series) {
      const attrs = `data-sel="${m.sel}" data-corr="${corr}" data-strategy="${esc(m.strategy)}" data-status="${esc(m.cell.status)}"${m.fallback ? ' data-fallback="max-recall"' : ''}`;
      const fill = m.fallback ? ' fill="#fff"' : '';
      out.push(
        `<circle class="vb-mark" cx="${x.at(m.sel).toFixed(1)}" cy="${y.at(value(m)).toFixed(1)}" r="4"${fill} ${attrs}><title>${esc(markTitle(m, metric))}</title></circle>`,
      );
    }
    out.push('</g>');
  }
  out.push('</svg>');
  return out.join('');
}

/** The filters section, or '' when no dataset has grid groups. cells: deriveCells' throughput cells. */
export function filtersSection(results: ResultFile[], cells: DerivedCell[], datasets: string[]): string {
  const grid = cells.filter((c) => c.view === 'throughput' && c.search === 'ann' && c.target === TARGET && GRID.test(c.filter));
  if (grid.length === 0) return '';
  const out: string[] = [
    `<section class="part" id="filters"><h2>Filters: recall and QPS against selectivity</h2>`,
    `<p class="note">The selectivity x correlation grid: per participant, the table's cell at recall ${TARGET} for each share of rows kept, with the filter scattered (rows by a hash of their id, blind to the vector) or clustered (the regions around the query, agreeing with it). QPS is the cell's value; recall that of the point it was read on. Where a cell has no value (not reached, collapsed) the recall chart shows the participant's max recall as a hollow mark and the QPS chart has none. Hover a mark for the strategy the engine answered with, observed in its plan or declared by the adapter. The k selector shows k = 10, 100 or both.</p>`,
    `<p class="filters-legend">${CORRS.map((c) => `<span class="legend-item"><span class="swatch" style="border-color:${COLOR[c]};background:${COLOR[c]}"></span>${c}</span>`).join('')}<span class="legend-item"><span class="swatch" style="border-color:#888"></span>max recall (no value at ${TARGET})</span></p>`,
  ];
  for (const ds of datasets) {
    const inDs = grid.filter((c) => c.dataset === ds);
    if (inDs.length === 0) continue;
    const sels = [...new Set(inDs.map((c) => Number(GRID.exec(c.filter)![1])))].sort((a, b) => a - b);
    out.push(`<div class="ds-block" data-ds="${esc(ds)}">`);
    for (const k of [...new Set(inDs.map((c) => c.k))].sort((a, b) => a - b)) {
      out.push(`<div class="filters-row" data-k="${k}"><h3>${esc(ds)}, k = ${k}</h3><div class="chart-grid filters-grid">`);
      for (const p of participantOrder(results, ds)) {
        const own = inDs.filter((c) => c.k === k && c.participant === p.name);
        if (own.length === 0) continue;
        const r = results.find((x) => x.dataset.name === ds && x.participant === p.name);
        const { marks, missing } = marksOf(own, r);
        out.push(`<figure class="chart-card filters-card" data-participant="${esc(p.name)}"><figcaption>${esc(p.name)}</figcaption>`);
        out.push(`<div class="filters-pair">${chart(marks, sels, 'recall')}${chart(marks, sels, 'qps')}</div>`);
        if (missing.length > 0) out.push(`<ul class="filters-missing">${missing.map((m) => `<li>${esc(m)}</li>`).join('')}</ul>`);
        out.push('</figure>');
      }
      out.push('</div></div>');
    }
    out.push('</div>');
  }
  out.push('</section>');
  return out.join('\n');
}
