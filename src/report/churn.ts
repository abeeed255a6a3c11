// The live-churn rows of the report (docs/method.md §7): one row per participant x dataset, derived
// from the steps stored in each result file's `extra.churn`. `vecbench report --json` prints
// them as `churn`; the terminal gets a table per dataset plus the curves over time.
import { readChurnSection, type RunbookResult, type StepResult } from '../churn/schema.ts';
import type { ResultFile } from '../results/schema.ts';

export interface ChurnRow {
  dataset: string;
  participant: string;
  engine_version: string;
  /** measured: at least one runbook measured; unsupported: the participant cannot write;
   * failed: every runbook that ran failed. */
  status: 'measured' | 'unsupported' | 'failed';
  /** Why unsupported or failed; runbooks that failed beside measured ones are listed here too. */
  reason: string | null;
  runbooks: string[];
  freshness_p50_ms: number | null;
  freshness_p95_ms: number | null;
  freshness_max_ms: number | null;
  /** Writes acknowledged but never among the top k within the timeout. */
  never_visible: number | null;
  freshness_writes: number | null;
  mixed_write_rate: number | null;
  mixed_target_rate: number | null;
  mixed_read_qps: number | null;
  mixed_readers: number | null;
  mixed_min_recall: number | null;
  mixed_recall: number | null;
  mixed_latency_p95_ms: number | null;
  /** Per window of the mixed step: recall and read p95 latency over time. */
  mixed_recall_over_time: (number | null)[] | null;
  mixed_latency_p95_over_time: (number | null)[] | null;
  mixed_write_rate_over_time: number[] | null;
  mixed_window_s: number | null;
  /** Deleted ids returned by any read after their delete was acknowledged, over all runbooks. */
  tombstone_leak: number;
  /** The first search after the last write of a runbook that deletes, and after its compaction. */
  recall_after_cycle: number | null;
  recall_after_compaction: number | null;
  /** The engine's compact() (flush / compaction / optimize), timed; null: it has none. */
  compaction_s: number | null;
  /** The engine's own diskBytes() before the first write and after the last (null: none). */
  disk_before_bytes: number | null;
  disk_after_bytes: number | null;
  /** Bytes allocated by its data directories at the same steps, measured by the harness. */
  dir_before_bytes: number | null;
  dir_after_bytes: number | null;
}

const isWrite = (s: StepResult) => (s.op === 'insert' || s.op === 'upsert' || s.op === 'delete') && s.status === 'done';

function lastStep(runbooks: RunbookResult[], pick: (s: StepResult) => boolean): StepResult | null {
  let found: StepResult | null = null;
  for (const rb of runbooks) for (const s of rb.steps) if (s.status === 'done' && pick(s)) found = s;
  return found;
}

/** The delete-cycle figures of the last runbook that deleted rows. */
function cycle(
  runbooks: RunbookResult[],
): Pick<
  ChurnRow,
  'recall_after_cycle' | 'recall_after_compaction' | 'compaction_s' | 'disk_before_bytes' | 'disk_after_bytes' | 'dir_before_bytes' | 'dir_after_bytes'
> {
  const out = {
    recall_after_cycle: null,
    recall_after_compaction: null,
    compaction_s: null,
    disk_before_bytes: null,
    disk_after_bytes: null,
    dir_before_bytes: null,
    dir_after_bytes: null,
  } as ReturnType<typeof cycle>;
  const rb = [...runbooks].reverse().find((r) => r.steps.some((s) => s.op === 'delete' && s.status === 'done'));
  if (!rb) return out;
  const steps = rb.steps;
  const firstWrite = steps.findIndex(isWrite);
  let lastWrite = -1;
  steps.forEach((s, i) => {
    if (isWrite(s)) lastWrite = i;
  });
  const after = steps.slice(lastWrite + 1);
  const searchAfter = after.find((s) => s.op === 'search' && s.status === 'done');
  out.recall_after_cycle = searchAfter?.search?.recall ?? null;
  const waitIdx = after.findIndex((s) => s.op === 'wait' && s.status === 'done');
  if (waitIdx >= 0) {
    out.compaction_s = after[waitIdx].wait?.duration_s ?? null;
    out.recall_after_compaction = after.slice(waitIdx + 1).find((s) => s.op === 'search' && s.status === 'done')?.search?.recall ?? null;
  }
  const diskBefore = steps
    .slice(0, firstWrite)
    .filter((s) => s.op === 'disk' && s.status === 'done')
    .at(-1)?.disk;
  const diskAfter = after.filter((s) => s.op === 'disk' && s.status === 'done').at(-1)?.disk;
  out.disk_before_bytes = diskBefore?.bytes ?? null;
  out.disk_after_bytes = diskAfter?.bytes ?? null;
  out.dir_before_bytes = diskBefore?.dir_bytes ?? null;
  out.dir_after_bytes = diskAfter?.dir_bytes ?? null;
  return out;
}

export function deriveChurn(results: ResultFile[]): ChurnRow[] {
  const rows: ChurnRow[] = [];
  for (const r of results) {
    const section = readChurnSection(r.extra, `result ${r.dataset.name}/${r.participant}`);
    if (!section) continue;
    const all = Object.values(section.runbooks);
    if (all.length === 0) continue;
    const measured = all.filter((x) => x.status === 'measured' || x.status === 'incomplete' || (x.status === 'failed' && x.steps.length > 0));
    const unsupported = all.filter((x) => x.status === 'unsupported');
    const failed = all.filter((x) => x.status === 'failed');
    const status: ChurnRow['status'] = all.some((x) => x.status === 'measured' || (x.status === 'incomplete' && x.steps.length > 0))
      ? 'measured'
      : unsupported.length > 0 && failed.length === 0
        ? 'unsupported'
        : 'failed';
    const reasons = [...unsupported.slice(0, 1), ...failed].map((x) => `${x.runbook}: ${x.reason ?? x.status}`);
    const fresh = lastStep(measured, (s) => s.op === 'freshness')?.freshness ?? null;
    const mixed = lastStep(measured, (s) => s.op === 'mixed')?.mixed ?? null;
    const engineVersion = all.map((x) => x.engine_version).find((v) => v !== 'unknown') ?? r.engine_version;
    rows.push({
      dataset: r.dataset.name,
      participant: r.participant,
      engine_version: engineVersion,
      status,
      reason: status === 'unsupported' ? (unsupported[0].reason ?? 'unsupported') : reasons.length > 0 ? reasons.join('; ') : null,
      runbooks: measured.filter((x) => x.status === 'measured').map((x) => x.runbook),
      freshness_p50_ms: fresh?.visible_ms?.p50 ?? null,
      freshness_p95_ms: fresh?.visible_ms?.p95 ?? null,
      freshness_max_ms: fresh?.visible_ms?.max ?? null,
      never_visible: fresh ? fresh.never_visible : null,
      freshness_writes: fresh ? fresh.issued : null,
      mixed_write_rate: mixed?.achieved_write_rate ?? null,
      mixed_target_rate: mixed?.target_rate ?? null,
      mixed_read_qps: mixed?.read_qps ?? null,
      mixed_readers: mixed?.readers ?? null,
      mixed_min_recall: mixed?.min_recall ?? null,
      mixed_recall: mixed?.recall ?? null,
      mixed_latency_p95_ms: mixed?.latency_ms?.p95 ?? null,
      mixed_recall_over_time: mixed ? mixed.timeline.map((w) => w.recall) : null,
      mixed_latency_p95_over_time: mixed ? mixed.timeline.map((w) => w.latency_ms?.p95 ?? null) : null,
      mixed_write_rate_over_time: mixed ? mixed.timeline.map((w) => w.write_rate) : null,
      mixed_window_s: mixed?.timeline[0]?.width_s ?? null,
      tombstone_leak: all.reduce((a, x) => a + x.leaks.total, 0),
      ...cycle(measured),
    });
  }
  return rows.sort((a, b) => a.dataset.localeCompare(b.dataset) || a.participant.localeCompare(b.participant));
}

const num = (x: number | null, digits: number) => (x === null ? '-' : x.toFixed(digits));
const ms = (x: number | null) => (x === null ? '-' : x < 10 ? x.toFixed(2) : x < 100 ? x.toFixed(1) : x.toFixed(0));
function bytes(x: number | null): string {
  if (x === null) return '-';
  if (x < 1 << 20) return `${(x / 1024).toFixed(0)} KiB`;
  if (x < 1 << 30) return `${(x / (1 << 20)).toFixed(1)} MiB`;
  return `${(x / (1 << 30)).toFixed(2)} GiB`;
}

function table(header: string[], body: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => r[i].length)));
  const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [line(header), ...body.map(line)].join('\n');
}

/** Leak details of each participant (the listed ones), for the terminal. */
function leakLines(results: ResultFile[], dataset: string): string[] {
  const out: string[] = [];
  for (const r of results) {
    if (r.dataset.name !== dataset) continue;
    const section = readChurnSection(r.extra, `result ${r.dataset.name}/${r.participant}`);
    if (!section) continue;
    for (const rb of Object.values(section.runbooks)) {
      if (rb.leaks.total === 0) continue;
      const shown = rb.leaks.listed.slice(0, 10).map((l) => `id ${l.id} (step ${l.step} ${l.op}, deleted in step ${l.deleted_in_step})`);
      out.push(`  ${r.participant} / ${rb.runbook}: ${rb.leaks.total} leak(s): ${shown.join(', ')}${rb.leaks.total > shown.length ? ', ...' : ''}`);
    }
  }
  return out;
}

export function renderChurn(rows: ChurnRow[], results: ResultFile[] = []): string {
  const parts: string[] = [];
  for (const dataset of [...new Set(rows.map((r) => r.dataset))]) {
    const rs = rows.filter((r) => r.dataset === dataset);
    const ok = rs.filter((r) => r.status !== 'unsupported');
    parts.push(
      `${dataset}: live churn (freshness = write ack to visible in the top 10; min recall = lowest window under writes; leaks = deleted ids returned)`,
    );
    parts.push(
      table(
        [
          'participant',
          'fresh p50 ms',
          'p95',
          'max',
          'never vis.',
          'writes/s (target)',
          'read QPS',
          'min recall',
          'mean',
          'leaks',
          'recall after cycle',
          'after compact',
          'compaction s',
          'engine bytes before -> after',
          'data dir before -> after',
        ],
        ok.map((r) => [
          r.participant,
          ms(r.freshness_p50_ms),
          ms(r.freshness_p95_ms),
          ms(r.freshness_max_ms),
          r.never_visible === null ? '-' : `${r.never_visible}/${r.freshness_writes}`,
          r.mixed_write_rate === null ? '-' : `${r.mixed_write_rate.toFixed(1)} (${r.mixed_target_rate})`,
          num(r.mixed_read_qps, 0),
          num(r.mixed_min_recall, 3),
          num(r.mixed_recall, 3),
          String(r.tombstone_leak),
          num(r.recall_after_cycle, 3),
          num(r.recall_after_compaction, 3),
          r.compaction_s === null ? 'none' : r.compaction_s.toFixed(2),
          r.disk_before_bytes === null && r.disk_after_bytes === null ? '-' : `${bytes(r.disk_before_bytes)} -> ${bytes(r.disk_after_bytes)}`,
          r.dir_before_bytes === null && r.dir_after_bytes === null ? '-' : `${bytes(r.dir_before_bytes)} -> ${bytes(r.dir_after_bytes)}`,
        ]),
      ),
    );
    const curves = ok.filter((r) => r.mixed_recall_over_time !== null);
    if (curves.length > 0) {
      const w = curves[0].mixed_window_s ?? 0;
      parts.push(`\nrecall under writes, per ${w} s window:`);
      for (const r of curves) parts.push(`  ${r.participant.padEnd(16)} ${r.mixed_recall_over_time!.map((x) => num(x, 3)).join(' ')}`);
      parts.push(`read latency p95 (ms) under writes, per ${w} s window:`);
      for (const r of curves) parts.push(`  ${r.participant.padEnd(16)} ${r.mixed_latency_p95_over_time!.map(ms).join(' ')}`);
    }
    const leaks = leakLines(results, dataset);
    if (leaks.length > 0) parts.push('\ntombstone leaks:', ...leaks);
    const notes = rs.filter((r) => r.reason !== null).map((r) => `  ${r.participant}: ${r.status === 'unsupported' ? 'unsupported: ' : ''}${r.reason}`);
    if (notes.length > 0) parts.push('\nnot measured / failed:', ...notes);
    parts.push('');
  }
  return parts.join('\n');
}
