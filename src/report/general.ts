// The report's general section (docs/method.md §6): per participant x dataset, load time, size, memory
// and cold start, read from each result's `load` and `resources`; under a memory budget
// (--memory-limit) also the budget, its peak, limit hits and OOM kills, and the bytes read from
// storage per query. Nothing is derived beyond a sum or a median: a figure that was not measured
// stays null, with the result's reason where it has one.
import type { ResultFile } from '../results/schema.ts';

interface GeneralRow {
  participant: string;
  dataset: string;
  engine: string;
  engine_version: string;
  origin: string;
  /** Which process tree the memory figures are of: the server, or the host process. */
  measured_process: 'server' | 'host' | null;
  rows: number | null;
  ingest_s: number | null;
  index_s: number | null;
  /** Bytes of the engine's data directory after load (harness-measured). */
  disk_bytes: number | null;
  /** Bytes of that directory after a clean stop (the cold start's): what the engine keeps. */
  disk_stopped_bytes: number | null;
  /** The engine's own count (e.g. pg_total_relation_size, an in-memory index's size). */
  engine_reported_bytes: number | null;
  mem_baseline_anon_bytes: number | null;
  mem_build_peak_bytes: number | null;
  mem_build_peak_anon_bytes: number | null;
  mem_build_peak_file_bytes: number | null;
  mem_serving_anon_bytes: number | null;
  mem_serving_file_bytes: number | null;
  cold_accept_s: number | null;
  cold_first_query_s: number | null;
  /** Between ingest and index build: answered (with recall), or not (with the reason). */
  probe_answered: boolean | null;
  probe_recall: number | null;
  probe_latency_ms_p50: number | null;
  /** Probe answers with fewer than k ids, of probe_queries. */
  probe_short_results: number | null;
  probe_queries: number | null;
  /** The engine's memory budget (--memory-limit): its cgroup's limit, peak use (page cache
   * included), limit hits and OOM kills; null without a budget. */
  memory_limit_bytes: number | null;
  memory_peak_bytes: number | null;
  memory_limit_hits: number | null;
  memory_oom_kills: number | null;
  /** Median over the throughput points of the bytes the engine read from storage per query. */
  read_bytes_per_query: number | null;
  /** Why null figures are null, by field. */
  unmeasured: Record<string, string>;
  /** Why the run stopped this participant (e.g. it does not fit its memory budget), or null. */
  stopped: string | null;
}

/** The median of the throughput points' read bytes per query, or null when none has one. */
function medianReadPerQuery(r: ResultFile): number | null {
  const xs = r.groups
    .flatMap((g) => g.points.filter((p) => p.view === 'throughput' && p.io !== undefined).map((p) => p.io!.read_bytes_per_query))
    .sort((a, b) => a - b);
  if (xs.length === 0) return null;
  const mid = xs.length >> 1;
  return xs.length % 2 === 1 ? xs[mid] : (xs[mid - 1] + xs[mid]) / 2;
}

export function deriveGeneral(results: ResultFile[]): GeneralRow[] {
  const rows = results.map((r): GeneralRow => {
    const res = r.resources ?? null;
    const budget = res?.memory_budget ?? null;
    return {
      participant: r.participant,
      dataset: r.dataset.name,
      engine: r.engine,
      engine_version: r.engine_version,
      origin: r.origin,
      measured_process: res?.measured_process ?? null,
      rows: r.load?.rows ?? null,
      ingest_s: r.load?.ingest_s ?? null,
      index_s: r.load?.index_s ?? null,
      disk_bytes: res?.disk_bytes ?? null,
      disk_stopped_bytes: res?.disk_stopped_bytes ?? null,
      engine_reported_bytes: r.load?.disk_bytes ?? null,
      mem_baseline_anon_bytes: res?.mem_baseline_anon_bytes ?? null,
      mem_build_peak_bytes: res?.mem_build_peak_bytes ?? null,
      mem_build_peak_anon_bytes: res?.mem_build_peak_anon_bytes ?? null,
      mem_build_peak_file_bytes: res?.mem_build_peak_file_bytes ?? null,
      mem_serving_anon_bytes: res?.mem_serving_anon_bytes ?? null,
      mem_serving_file_bytes: res?.mem_serving_file_bytes ?? null,
      cold_accept_s: res?.cold_accept_s ?? null,
      cold_first_query_s: res?.cold_first_query_s ?? null,
      probe_answered: res?.probe?.answered ?? null,
      probe_recall: res?.probe?.recall ?? null,
      probe_latency_ms_p50: res?.probe?.latency_ms_p50 ?? null,
      probe_short_results: res?.probe?.short_results ?? null,
      probe_queries: res?.probe?.queries ?? null,
      memory_limit_bytes: budget?.limit_bytes ?? null,
      memory_peak_bytes: budget?.peak_bytes ?? null,
      memory_limit_hits: budget?.limit_hits ?? null,
      memory_oom_kills: budget?.oom_kills ?? null,
      read_bytes_per_query: medianReadPerQuery(r),
      stopped: typeof r.extra.stopped === 'string' ? r.extra.stopped : null,
      unmeasured: res
        ? { ...res.unmeasured }
        : r.origin === 'measured'
          ? { resources: 'measured before resources were recorded' }
          : { resources: 'imported result' },
    };
  });
  return rows.sort((a, b) => a.dataset.localeCompare(b.dataset) || a.participant.localeCompare(b.participant));
}

function bytes(b: number | null): string {
  if (b === null) return '-';
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let v = b;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v >= 100 || u === 0 ? v.toFixed(0) : v.toFixed(1)} ${units[u]}`;
}

function secs(s: number | null): string {
  if (s === null) return '-';
  return s < 1 ? `${(s * 1000).toFixed(s < 0.01 ? 2 : 0)} ms` : `${s.toFixed(s < 10 ? 2 : 1)} s`;
}

function probe(r: GeneralRow): string {
  if (r.probe_answered === null) return '-';
  if (!r.probe_answered) return 'no';
  // An engine that indexes only at build answers the probe with empty lists: its
  // recall 0.00 and near-zero latency are not a figure of the engine's search.
  const short = r.probe_short_results ?? 0;
  if (r.probe_queries !== null && short === r.probe_queries) return `empty (${short} of ${r.probe_queries} short)`;
  const shortNote = short > 0 ? `, ${short} short` : '';
  return `${r.probe_recall === null ? '?' : r.probe_recall.toFixed(2)} @ ${r.probe_latency_ms_p50 === null ? '?' : r.probe_latency_ms_p50.toFixed(1)} ms${shortNote}`;
}

/** The terminal "general" table: a block per dataset, a row per participant. */
export function renderGeneral(rows: GeneralRow[]): string {
  const out: string[] = [];
  for (const ds of [...new Set(rows.map((r) => r.dataset))]) {
    const dr = rows.filter((r) => r.dataset === ds);
    const header = [
      'participant',
      'proc',
      'ingest',
      'index',
      'probe',
      'disk',
      'disk stopped',
      'engine says',
      'build peak (anon/file)',
      'serving anon',
      'serving file',
      'cold accept',
      'cold 1st query',
    ];
    const table = dr.map((r) => [
      r.participant,
      r.measured_process ?? '-',
      secs(r.ingest_s),
      secs(r.index_s),
      probe(r),
      bytes(r.disk_bytes),
      bytes(r.disk_stopped_bytes),
      bytes(r.engine_reported_bytes),
      r.mem_build_peak_bytes === null ? '-' : `${bytes(r.mem_build_peak_bytes)} (${bytes(r.mem_build_peak_anon_bytes)}/${bytes(r.mem_build_peak_file_bytes)})`,
      bytes(r.mem_serving_anon_bytes),
      bytes(r.mem_serving_file_bytes),
      secs(r.cold_accept_s),
      secs(r.cold_first_query_s),
    ]);
    // Under a memory budget, or where engines read from storage, what the budget did and what
    // a query cost in reads; in RAM (no budget, nothing read) the columns would only say 0.
    if (dr.some((r) => r.memory_limit_bytes !== null || (r.read_bytes_per_query ?? 0) > 0)) {
      header.push('budget', 'peak in budget', 'limit hits', 'OOM kills', 'read/query');
      dr.forEach((r, i) =>
        table[i].push(
          bytes(r.memory_limit_bytes),
          bytes(r.memory_peak_bytes),
          r.memory_limit_hits === null ? '-' : String(r.memory_limit_hits),
          r.memory_oom_kills === null ? '-' : String(r.memory_oom_kills),
          bytes(r.read_bytes_per_query),
        ),
      );
    }
    const widths = header.map((h, i) => Math.max(h.length, ...table.map((t) => t[i].length)));
    const line = (t: string[]) => t.map((x, i) => (i < 2 ? x.padEnd(widths[i]) : x.padStart(widths[i]))).join('  ');
    out.push(
      `${ds}: load, size, memory (PSS of the measured process tree: server, or host = in-process engine + harness) and cold start; probe = recall @ p50 latency of 20 queries between ingest and index build`,
    );
    out.push(line(header));
    out.push(widths.map((w) => '-'.repeat(w)).join('  '));
    for (const t of table) out.push(line(t));
    const notes = dr.flatMap((r) => {
      const reasons = new Map<string, string[]>();
      for (const [field, why] of Object.entries(r.unmeasured)) {
        if (!['cold_accept_s', 'disk_bytes', 'disk_stopped_bytes', 'resources', 'mem_build_peak_bytes', 'mem_serving_anon_bytes'].includes(field)) continue;
        reasons.set(why, [...(reasons.get(why) ?? []), field]);
      }
      return [...reasons].map(([why, fields]) => `  ${r.participant}: ${fields.map((f) => f.replace(/_s$|_bytes$/, '')).join(', ')} not measured: ${why}`);
    });
    out.push(...notes);
    // A participant the run stopped (an engine that does not fit its budget, one that kept
    // failing) is said with why, never only an empty column.
    for (const r of dr) if (r.stopped !== null) out.push(`  ${r.participant}: stopped: ${r.stopped.split('\n')[0]}`);
    out.push('');
  }
  return out.join('\n');
}
