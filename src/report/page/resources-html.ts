// The memory, disk and cold-start tables of the results page (docs/method.md §6, docs/runs.md
// "Resources"): a row per participant, columns under grouped headers, figures with their units.
// Participants are rows so the tables stay as wide as their columns, however many take part;
// a reason for a missing figure is a numbered note under its table instead of a long cell.
// Runs in node (html.ts). Reads each result's top-level `resources` loosely: a field that is
// absent counts as not measured, as in results written before the field existed.
import type { ResultFile } from '../../results/schema.ts';

const ESC: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const esc = (v: unknown) => String(v).replace(/[&<>"']/g, (c) => ESC[c]);

export interface ResourceFormat {
  bytes: (b: number) => string;
  seconds: (s: number) => string;
  number: (v: number) => string;
}

type Fields = Record<string, unknown>;

/** One figure of a table: its header under a group, the field it reads (for its `unmeasured`
 * reason) and its text, or null when not measured. */
interface Column {
  group: string;
  label: string;
  /** Field names whose `unmeasured` reason explains a missing figure (first found wins). */
  why: string[];
  text: (res: Fields, f: ResourceFormat) => string | null;
  /** Detail shown on hover (e.g. how the page cache was evicted). */
  title?: (res: Fields) => string | null;
}

const isRecord = (v: unknown): v is Fields => typeof v === 'object' && v !== null && !Array.isArray(v);
const num = (res: Fields, key: string): number | null => (typeof res[key] === 'number' && Number.isFinite(res[key]) ? (res[key] as number) : null);
const sub = (res: Fields, key: string): Fields | null => (isRecord(res[key]) ? res[key] : null);

const bytesOf = (key: string) => (res: Fields, f: ResourceFormat) => {
  const v = num(res, key);
  return v === null ? null : f.bytes(v);
};
const secondsOf = (key: string) => (res: Fields, f: ResourceFormat) => {
  const v = num(res, key);
  return v === null ? null : f.seconds(v);
};

function samplesText(res: Fields, phase: 'build' | 'serving', f: ResourceFormat): string | null {
  const n = sub(res, 'mem_samples')?.[phase];
  const every = sub(res, 'mem_sample_interval_ms')?.[phase];
  if (typeof n !== 'number' || typeof every !== 'number') return null;
  // The interval stretches for an engine whose memory is slow to read: the longest is recorded.
  return `${f.number(n)}, ≤ ${f.number(every)} ms apart`;
}

function evictionText(res: Fields, f: ResourceFormat): string | null {
  const e = sub(res, 'cold_eviction');
  if (!e) return null;
  const before = typeof e.resident_before_bytes === 'number' ? f.bytes(e.resident_before_bytes) : '?';
  const after = typeof e.resident_after_bytes === 'number' ? f.bytes(e.resident_after_bytes) : '?';
  return `${before} → ${after}`;
}

function evictionTitle(res: Fields): string | null {
  const e = sub(res, 'cold_eviction');
  if (!e) return null;
  return `resident in the page cache before → after the eviction, by ${typeof e.method === 'string' ? e.method : 'an unrecorded method'}${e.drop_caches === true ? '; caches dropped' : ''}`;
}

function probeField(res: Fields, key: string): unknown {
  return sub(res, 'probe')?.[key];
}

const MEMORY: Column[] = [
  { group: 'Before any row', label: 'anon', why: ['mem_baseline_anon_bytes'], text: bytesOf('mem_baseline_anon_bytes') },
  { group: 'Before any row', label: 'file', why: ['mem_baseline_file_bytes'], text: bytesOf('mem_baseline_file_bytes') },
  { group: 'Ingest and index build, highest', label: 'anon + file', why: ['mem_build_peak_bytes'], text: bytesOf('mem_build_peak_bytes') },
  { group: 'Ingest and index build, highest', label: 'anon', why: ['mem_build_peak_anon_bytes'], text: bytesOf('mem_build_peak_anon_bytes') },
  { group: 'Ingest and index build, highest', label: 'file', why: ['mem_build_peak_file_bytes'], text: bytesOf('mem_build_peak_file_bytes') },
  { group: 'While serving, median', label: 'anon', why: ['mem_serving_anon_bytes'], text: bytesOf('mem_serving_anon_bytes') },
  { group: 'While serving, median', label: 'of it shared', why: ['mem_serving_shmem_bytes'], text: bytesOf('mem_serving_shmem_bytes') },
  { group: 'While serving, median', label: 'file', why: ['mem_serving_file_bytes'], text: bytesOf('mem_serving_file_bytes') },
  { group: 'While serving, median', label: 'highest', why: ['mem_serving_peak_bytes'], text: bytesOf('mem_serving_peak_bytes') },
  { group: 'Samples', label: 'build', why: ['mem_samples'], text: (r, f) => samplesText(r, 'build', f) },
  { group: 'Samples', label: 'serving', why: ['mem_samples'], text: (r, f) => samplesText(r, 'serving', f) },
];

const DISK_COLD_PROBE: Column[] = [
  { group: 'Disk', label: 'after load', why: ['disk_bytes'], text: bytesOf('disk_bytes') },
  { group: 'Disk', label: 'after a clean stop', why: ['disk_stopped_bytes', 'cold_accept_s'], text: bytesOf('disk_stopped_bytes') },
  { group: 'Cold start', label: 'accepting', why: ['cold_accept_s'], text: secondsOf('cold_accept_s') },
  { group: 'Cold start', label: 'first query', why: ['cold_first_query_s', 'cold_accept_s'], text: secondsOf('cold_first_query_s') },
  { group: 'Cold start', label: 'page cache resident', why: ['cold_eviction', 'cold_accept_s'], text: evictionText, title: evictionTitle },
  {
    group: 'Probe before the index build',
    label: 'answered',
    why: ['probe'],
    text: (r) => {
      const answered = probeField(r, 'answered');
      if (typeof answered !== 'boolean') return null;
      const error = probeField(r, 'error');
      return answered ? 'yes' : `no${typeof error === 'string' && error ? `: ${error}` : ''}`;
    },
  },
  {
    group: 'Probe before the index build',
    label: 'recall',
    why: ['probe'],
    text: (r) => (typeof probeField(r, 'recall') === 'number' ? (probeField(r, 'recall') as number).toFixed(3) : null),
  },
  {
    group: 'Probe before the index build',
    label: 'p50',
    why: ['probe'],
    text: (r, f) => (typeof probeField(r, 'latency_ms_p50') === 'number' ? `${f.number(probeField(r, 'latency_ms_p50') as number)} ms` : null),
  },
  {
    group: 'Probe before the index build',
    label: 'knobs',
    why: ['probe'],
    text: (r) => {
      const knobs = probeField(r, 'knobs');
      if (!isRecord(knobs)) return null;
      const parts = Object.entries(knobs).map(([k, v]) => `${k} ${String(v)}`);
      return parts.length ? parts.join(', ') : 'defaults';
    },
  },
];

/** Reasons for missing figures, numbered in the order met; the table's notes list them. */
class Notes {
  private readonly order: string[] = [];
  mark(reason: string): string {
    let i = this.order.indexOf(reason);
    if (i < 0) i = this.order.push(reason) - 1;
    return `<span class="nm" title="${esc(reason)}">not measured<sup>${i + 1}</sup></span>`;
  }
  html(): string {
    if (this.order.length === 0) return '';
    return `<ol class="notes">${this.order.map((r) => `<li>${esc(r)}</li>`).join('')}</ol>`;
  }
}

export interface ResourceRow {
  participant: string;
  origin: 'measured' | 'imported';
  /** The result's top-level resources, or null where none were recorded. */
  resources: Fields | null;
}

function processText(res: Fields): string {
  if (res.measured_process === 'server') return 'server process';
  if (res.measured_process === 'host') return 'host process (engine + dataset copy)';
  return '';
}

function table(caption: string, cls: string, rows: ResourceRow[], columns: Column[], f: ResourceFormat): string {
  const notes = new Notes();
  const groups: { label: string; span: number }[] = [];
  for (const c of columns) {
    const last = groups[groups.length - 1];
    if (last && last.label === c.group) last.span++;
    else groups.push({ label: c.group, span: 1 });
  }
  const out: string[] = [`<div class="scroll"><table class="resources ${cls}"><caption>${esc(caption)}</caption><thead>`];
  out.push(
    `<tr><th rowspan="2" scope="col">participant</th>${groups.map((g) => `<th colspan="${g.span}" scope="colgroup" class="grp-head">${esc(g.label)}</th>`).join('')}</tr>`,
  );
  out.push(`<tr>${columns.map((c) => `<th scope="col">${esc(c.label)}</th>`).join('')}</tr></thead><tbody>`);
  for (const row of rows) {
    const badge = row.origin === 'imported' ? '<span class="badge imported">imported</span>' : '';
    const res = row.resources;
    const head = `<th scope="row" class="who">${esc(row.participant)}${badge}${res && processText(res) ? `<span class="driven">${esc(processText(res))}</span>` : ''}</th>`;
    if (!res) {
      const why = row.origin === 'imported' ? 'imported: the source records no resources' : 'measured before resources were recorded';
      out.push(`<tr data-participant="${esc(row.participant)}">${head}<td colspan="${columns.length}" class="none">${notes.mark(why)}</td></tr>`);
      continue;
    }
    const unmeasured = isRecord(res.unmeasured) ? res.unmeasured : {};
    const cells = columns.map((c) => {
      const text = c.text(res, f);
      const title = c.title?.(res);
      if (text !== null) return title ? `<td title="${esc(title)}">${esc(text)}</td>` : `<td>${esc(text)}</td>`;
      const reason = c.why.map((k) => unmeasured[k]).find((v) => typeof v === 'string');
      return `<td>${typeof reason === 'string' ? notes.mark(reason) : '<span class="nm">not measured</span>'}</td>`;
    });
    out.push(`<tr data-participant="${esc(row.participant)}">${head}${cells.join('')}</tr>`);
  }
  out.push(`</tbody></table></div>${notes.html()}`);
  return out.join('');
}

/** The section's tables for one dataset: memory; disk, cold start and the probe; and, under
 * --cold, the eviction before each group. */
export function resourcesTables(rows: ResourceRow[], f: ResourceFormat): string {
  const out = [
    table('Memory: PSS of the measured process tree (anon includes shared anonymous memory)', 'memory', rows, MEMORY, f),
    table('Disk, cold start (stop, evict the data files from the page cache, start) and the probe', 'cold', rows, DISK_COLD_PROBE, f),
  ];
  const evictions = rows.flatMap((r) => {
    const list = r.resources?.group_evictions;
    return Array.isArray(list) ? list.filter(isRecord).map((e) => ({ participant: r.participant, e })) : [];
  });
  if (evictions.length > 0) {
    out.push(
      `<details><summary>page cache evicted before each group (--cold): ${evictions.length} evictions</summary><div class="scroll"><table class="resources"><thead><tr><th scope="col">participant</th><th scope="col">group</th><th scope="col">resident before</th><th scope="col">resident after</th><th scope="col">caches dropped</th></tr></thead><tbody>`,
    );
    for (const { participant, e } of evictions) {
      const b = (v: unknown) => (typeof v === 'number' ? esc(f.bytes(v)) : '<span class="nm">not measured</span>');
      out.push(
        `<tr><th scope="row" class="who">${esc(participant)}</th><td>${esc(String(e.group ?? ''))}</td><td>${b(e.resident_before_bytes)}</td><td>${b(e.resident_after_bytes)}</td><td>${e.drop_caches === true ? 'yes' : 'no'}</td></tr>`,
      );
    }
    out.push(`</tbody></table></div></details>`);
  }
  return out.join('\n');
}

/** A result's top-level resources section, if it has one. */
export function resourcesOf(r: ResultFile): Fields | null {
  const v = (r as unknown as { resources?: unknown }).resources;
  return isRecord(v) ? v : null;
}
