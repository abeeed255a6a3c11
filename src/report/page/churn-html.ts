// The live-churn section of the results page (docs/method.md §7): per dataset, a table of the churn rows
// `vecbench report --json` prints (src/report/churn.ts deriveChurn, the one derivation), the
// recall, read-latency and write-rate curves of the reads-under-writes step over time (drawn
// in the browser by churn-app.ts), the listed tombstone leaks and who could not take part.
// Every figure cell carries its exact value in data attributes, so the browser test can hold
// it against `report --json`. Runs in node (html.ts); the browser half is churn-app.ts.
import { deriveChurn, type ChurnRow } from '../churn.ts';
import { readChurnSection } from '../../churn/schema.ts';
import type { ResultFile } from '../../results/schema.ts';
import { fmtBytes } from './html-text.ts';
import type { ChurnCurve } from './types.ts';

const ESC: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const esc = (v: unknown) => String(v).replace(/[&<>"']/g, (c) => ESC[c]);
const nm = '<span class="nm">not measured</span>';

const fmtMs = (x: number) => (x < 10 ? x.toFixed(2) : x < 100 ? x.toFixed(1) : x.toFixed(0));

type Field = keyof ChurnRow;

/** One column of the churn table: the row field it shows (the value in data-value) and how. */
interface Column {
  field: Field;
  head: string;
  title: string;
  show: (r: ChurnRow) => string | null;
}

const COLUMNS: Column[] = [
  {
    field: 'freshness_p50_ms',
    head: 'fresh p50',
    title: 'write acknowledged -> the row is among the top 10 of a search for its own vector, median (ms)',
    show: (r) => (r.freshness_p50_ms === null ? null : `${fmtMs(r.freshness_p50_ms)} ms`),
  },
  {
    field: 'freshness_p95_ms',
    head: 'p95',
    title: 'freshness, 95th percentile (ms)',
    show: (r) => (r.freshness_p95_ms === null ? null : `${fmtMs(r.freshness_p95_ms)} ms`),
  },
  {
    field: 'freshness_max_ms',
    head: 'max',
    title: 'freshness, slowest write (ms)',
    show: (r) => (r.freshness_max_ms === null ? null : `${fmtMs(r.freshness_max_ms)} ms`),
  },
  {
    field: 'never_visible',
    head: 'never visible',
    title: 'writes acknowledged but not visible within the timeout, of the writes issued',
    show: (r) => (r.never_visible === null ? null : `${r.never_visible} / ${r.freshness_writes}`),
  },
  {
    field: 'mixed_write_rate',
    head: 'writes/s (target)',
    title: 'writes acknowledged per second while the readers ran, and the target rate',
    show: (r) => (r.mixed_write_rate === null ? null : `${r.mixed_write_rate.toFixed(1)} (${r.mixed_target_rate})`),
  },
  {
    field: 'mixed_read_qps',
    head: 'read QPS',
    title: 'reads completed per second under writes',
    show: (r) => (r.mixed_read_qps === null ? null : `${r.mixed_read_qps.toFixed(0)} (${r.mixed_readers} reader${r.mixed_readers === 1 ? '' : 's'})`),
  },
  {
    field: 'mixed_min_recall',
    head: 'min recall',
    title: 'the lowest window recall under writes, each read judged against the rows live when it started',
    show: (r) => (r.mixed_min_recall === null ? null : r.mixed_min_recall.toFixed(3)),
  },
  {
    field: 'mixed_recall',
    head: 'mean recall',
    title: 'mean recall of the sampled reads under writes',
    show: (r) => (r.mixed_recall === null ? null : r.mixed_recall.toFixed(3)),
  },
  {
    field: 'mixed_latency_p95_ms',
    head: 'read p95',
    title: 'read latency under writes, 95th percentile (ms)',
    show: (r) => (r.mixed_latency_p95_ms === null ? null : `${fmtMs(r.mixed_latency_p95_ms)} ms`),
  },
  {
    field: 'tombstone_leak',
    head: 'leaks',
    title: 'deleted ids any read returned after the delete was acknowledged (must be 0)',
    show: (r) => String(r.tombstone_leak),
  },
  {
    field: 'recall_after_cycle',
    head: 'recall after cycle',
    title: 'the first search after deleting 20 % and inserting 20 % new rows',
    show: (r) => (r.recall_after_cycle === null ? null : r.recall_after_cycle.toFixed(3)),
  },
  {
    field: 'recall_after_compaction',
    head: 'after compaction',
    title: "the first search after the engine's compaction",
    show: (r) => (r.recall_after_compaction === null ? null : r.recall_after_compaction.toFixed(3)),
  },
  {
    field: 'compaction_s',
    head: 'compaction',
    title: "the engine's flush / compaction / optimize / vacuum, timed",
    show: (r) =>
      r.compaction_s === null ? 'none' : r.compaction_s < 1 ? `${(r.compaction_s * 1000).toPrecision(3)} ms` : `${r.compaction_s.toPrecision(3)} s`,
  },
  {
    field: 'disk_before_bytes',
    head: 'engine bytes before',
    title: "the engine's own diskBytes() before the first write (in-memory engines report memory)",
    show: (r) => (r.disk_before_bytes === null ? null : fmtBytes(r.disk_before_bytes)),
  },
  {
    field: 'disk_after_bytes',
    head: 'after',
    title: "the engine's own diskBytes() after the cycle",
    show: (r) => (r.disk_after_bytes === null ? null : fmtBytes(r.disk_after_bytes)),
  },
  {
    field: 'dir_before_bytes',
    head: 'data dir before',
    title: "bytes allocated by the engine's data directories before the first write, measured by the harness",
    show: (r) => (r.dir_before_bytes === null ? null : fmtBytes(r.dir_before_bytes)),
  },
  {
    field: 'dir_after_bytes',
    head: 'after',
    title: "bytes allocated by the engine's data directories after the cycle, measured by the harness",
    show: (r) => (r.dir_after_bytes === null ? null : fmtBytes(r.dir_after_bytes)),
  },
];

function cell(r: ChurnRow, c: Column): string {
  const v = r[c.field];
  const value = typeof v === 'number' ? String(v) : '';
  const text = c.show(r);
  const warn = c.field === 'tombstone_leak' && r.tombstone_leak > 0 ? ' class="bad"' : '';
  return `<td${warn} data-churn-field="${esc(c.field)}" data-value="${esc(value)}">${text === null ? nm : esc(text)}</td>`;
}

/** Leaks listed in the result files (id, the step that returned it, the step that deleted it). */
function leakItems(results: ResultFile[], dataset: string): string[] {
  const out: string[] = [];
  for (const r of results) {
    if (r.dataset.name !== dataset) continue;
    const section = readChurnSection(r.extra, `result ${r.dataset.name}/${r.participant}`);
    if (!section) continue;
    for (const rb of Object.values(section.runbooks)) {
      if (rb.leaks.total === 0) continue;
      const shown = rb.leaks.listed
        .slice(0, 20)
        .map(
          (l) => `id ${l.id} (returned by step ${l.step} ${l.op}${l.query !== undefined ? `, query ${l.query}` : ''}; deleted in step ${l.deleted_in_step})`,
        );
      out.push(
        `<li data-leaks="${esc(r.participant)}">${esc(`${r.participant} / ${rb.runbook}: ${rb.leaks.total} leak(s): ${shown.join(', ')}${rb.leaks.total > shown.length ? ', ...' : ''}`)}</li>`,
      );
    }
  }
  return out;
}

const CURVES: { key: ChurnCurve['metric']; label: string; of: (r: ChurnRow) => (number | null)[] | null }[] = [
  {
    key: 'recall',
    label: 'recall under writes (each window: mean of sampled reads, against the rows live when each started)',
    of: (r) => r.mixed_recall_over_time,
  },
  { key: 'latency_p95_ms', label: 'read latency p95 under writes (ms)', of: (r) => r.mixed_latency_p95_over_time },
  { key: 'write_rate', label: 'writes acknowledged per second', of: (r) => r.mixed_write_rate_over_time },
];

/** The section's HTML; the curves it refers to are appended to `curves` for the page data. */
export function churnSection(results: ResultFile[], datasets: string[], curves: ChurnCurve[], rows: ChurnRow[] = deriveChurn(results)): string {
  if (rows.length === 0) return '';
  const out: string[] = [`<section class="part" id="churn"><h2>Live churn</h2>`];
  out.push(
    `<p class="note"><b>Freshness</b>: single-row inserts, each followed by searches for its own vector until it is among the top 10 (write acknowledged to visible). <b>Reads under writes</b>: one writer at the target rate (the built-in runbook: half inserts of new rows, half deletes) and several readers; every read is scored against the exact top-k of the rows live when it started, so a degrading index shows as a falling recall curve. <b>Delete + reinsert</b>: 20 % of the rows deleted and 20 % new ones inserted; a deleted id returned by any read is a tombstone leak (must be 0). Each participant's README states when a write becomes visible. See docs/method.md §7.</p>`,
  );
  for (const ds of datasets) {
    const rs = rows.filter((r) => r.dataset === ds);
    if (rs.length === 0) continue;
    const shown = rs.filter((r) => r.status !== 'unsupported');
    out.push(`<div class="ds-block" data-ds="${esc(ds)}">`);
    if (shown.length > 0) {
      out.push(
        `<div class="scroll"><table class="churn" data-dataset="${esc(ds)}"><thead><tr><th>participant</th>${COLUMNS.map((c) => `<th title="${esc(c.title)}">${esc(c.head)}</th>`).join('')}</tr></thead><tbody>`,
      );
      for (const r of shown)
        out.push(
          `<tr data-churn-participant="${esc(r.participant)}" data-status="${esc(r.status)}"><td>${esc(r.participant)}</td>${COLUMNS.map((c) => cell(r, c)).join('')}</tr>`,
        );
      out.push(`</tbody></table></div>`);
      const withCurves = shown.filter((r) => r.mixed_recall_over_time !== null);
      if (withCurves.length > 0) {
        const w = withCurves[0].mixed_window_s;
        out.push(
          `<p class="note">Over the reads-under-writes step, per ${esc(w ?? '?')} s window; hover a point for its value.</p><div class="churn-legend" data-churn-legend="${esc(ds)}"></div><div class="chart-grid">`,
        );
        for (const c of CURVES) {
          const id = `churn-${curves.length}`;
          curves.push({
            id,
            dataset: ds,
            metric: c.key,
            label: c.label,
            series: withCurves.map((r) => {
              const ys = c.of(r) ?? [];
              const width = r.mixed_window_s ?? 1;
              // Each window's value sits at its middle.
              return { participant: r.participant, points: ys.flatMap((y, i) => (y === null || !Number.isFinite(y) ? [] : [{ t: (i + 0.5) * width, y }])) };
            }),
          });
          out.push(
            `<figure class="chart-card"><figcaption>${esc(c.label)}</figcaption><div class="churn-chart" data-churn-chart="${id}" data-metric="${c.key}"></div></figure>`,
          );
        }
        out.push(`</div>`);
      }
    }
    const leaks = leakItems(results, ds);
    out.push(
      leaks.length > 0
        ? `<h3>Tombstone leaks</h3><ul class="leaks">${leaks.join('')}</ul>`
        : `<p class="note" data-no-leaks="1">No tombstone leak: no read returned a deleted id.</p>`,
    );
    const notes = rs.filter((r) => r.reason !== null);
    if (notes.length > 0) {
      out.push(`<h3>Not measured, unsupported or failed</h3><ul class="churn-notes">`);
      for (const r of notes)
        out.push(
          `<li data-churn-note="${esc(r.participant)}">${esc(`${r.participant}: ${r.status === 'unsupported' ? 'unsupported: ' : ''}${r.reason}`)}</li>`,
        );
      out.push(`</ul>`);
    }
    out.push(`</div>`);
  }
  out.push(`</section>`);
  return out.join('\n');
}
