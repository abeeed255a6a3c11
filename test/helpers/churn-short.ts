// A short churn runbook that every real engine goes through on the command line (test/e2e/churn.test.ts
// for the in-process engines, test/e2e/churn-servers.test.ts for the servers), and the checks of what
// it stored and what `vecbench report --json` derives from it.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const SHORT_RUNBOOK = {
  name: 'short',
  seed: 3,
  steps: [
    { op: 'load' },
    { op: 'search', group: 'none/10', queries: 100, label: 'before' },
    { op: 'disk', label: 'before' },
    { op: 'freshness', writes: 30 },
    { op: 'mixed', duration_s: 5, write_rate: 150, readers: 6, window_s: 1, queries: 100, recall_samples: 50 },
    { op: 'delete', share: 0.2 },
    { op: 'insert', new_share: 0.2 },
    { op: 'upsert', share: 0.05 },
    { op: 'search', group: 'none/10', queries: 100, label: 'after cycle' },
    { op: 'search', group: 'cat10/10', queries: 100, label: 'after cycle, filtered' },
    { op: 'wait' },
    { op: 'search', group: 'none/10', queries: 100, label: 'after compaction' },
    { op: 'disk', label: 'after' },
  ],
};

/** Recall an approximate engine must keep at its 0.95 calibration point; lower means a broken
 * index or a harness fault, not a slow engine. `lowAfterDeletes`: engines that return fewer than
 * k rows right after many deletes until their compaction (pgvector: a dead tuple takes an
 * ef_search slot until VACUUM, README), checked after the compaction instead. */
export interface ShortRunExpect {
  minRecall: number;
  /** The lowest window recall under writes (5 windows of 1 s, fewer samples: a looser bound). */
  minMixedRecall: number;
  lowAfterDeletes?: boolean;
}

/** The stored runbook of each engine: measured, no leak, every write visible, reads under writes
 * scored, 20 % deleted, 20 % x n inserted and 5 % moved (upsert, where the engine has it), only
 * live valid rows returned (a moved row is judged at its new vector), disk measured. */
export function checkShortRun(out: string, dataset: string, n: number, engines: Record<string, ShortRunExpect>): void {
  for (const [name, expect] of Object.entries(engines)) {
    const result = JSON.parse(readFileSync(join(out, dataset, `${name}.json`), 'utf8'));
    const rr = result.extra.churn.runbooks.short;
    assert.equal(rr.status, 'measured', `${name}: ${rr.reason}`);
    assert.equal(rr.leaks.total, 0, `${name}: tombstone leaks ${JSON.stringify(rr.leaks.listed)}`);
    const step = (i: number) => rr.steps[i - 1];
    const fresh = step(4).freshness;
    assert.equal(fresh.issued, 30, name);
    assert.equal(fresh.failed_writes, 0, `${name}: ${fresh.first_error}`);
    assert.equal(fresh.never_visible, 0, `${name}: every write becomes visible`);
    assert.ok(fresh.visible_ms.p50 >= 0 && fresh.visible_ms.p95 >= fresh.visible_ms.p50, name);
    const mixed = step(5).mixed;
    assert.ok(mixed.writes.issued > 0 && mixed.achieved_write_rate > 0, `${name}: the writer wrote`);
    assert.equal(mixed.writes.failed, 0, `${name}: ${mixed.writes.first_error}`);
    assert.equal(mixed.read_errors, 0, `${name}: ${mixed.first_read_error}`);
    assert.ok(mixed.reads > 0 && mixed.recall_samples > 0, `${name}: reads were scored`);
    assert.equal(mixed.timeline.length, 5);
    assert.equal(mixed.unknown_ids + mixed.filter_violations, 0, `${name}: every id a read returned was live or in flight`);
    assert.ok(mixed.min_recall >= expect.minMixedRecall, `${name}: min recall under writes ${mixed.min_recall}`);
    const deleted = step(6).write;
    assert.equal(deleted.rows, Math.round(0.2 * step(5).live_rows), `${name}: 20 % of the live rows deleted`);
    assert.equal(step(7).write.rows, Math.round(0.2 * n), `${name}: 20 % x n new rows`);
    const upsert = step(8);
    if (upsert.status === 'unsupported') assert.match(upsert.reason, /no upsert\(\)/);
    else assert.equal(upsert.write.rows, Math.round(0.05 * step(7).live_rows), `${name}: 5 % of the live rows moved`);
    for (const i of [9, 10, 12]) {
      const s = step(i).search;
      assert.equal(s.unknown_ids + s.filter_violations + s.duplicate_ids + s.errors, 0, `${name}: step ${i} returned only live, valid rows`);
      if (i === 9 && expect.lowAfterDeletes) continue;
      assert.ok(s.recall >= expect.minRecall, `${name}: step ${i} recall ${s.recall}`);
    }
    const wait = step(11);
    assert.ok(wait.status === 'done' || wait.status === 'unsupported', name);
    if (wait.status === 'unsupported') assert.match(wait.reason, /no compact\(\)/);
    for (const i of [3, 13]) {
      const disk = step(i).disk;
      assert.ok((disk.bytes ?? 0) > 0 || (disk.dir_bytes ?? 0) > 0, `${name}: step ${i} measured the engine's bytes or its data directory`);
    }
  }
}

export const REPORT_KEYS = [
  'participant',
  'dataset',
  'status',
  'freshness_p50_ms',
  'freshness_p95_ms',
  'freshness_max_ms',
  'never_visible',
  'mixed_write_rate',
  'mixed_target_rate',
  'mixed_read_qps',
  'mixed_min_recall',
  'mixed_recall',
  'mixed_recall_over_time',
  'mixed_latency_p95_over_time',
  'mixed_write_rate_over_time',
  'tombstone_leak',
  'recall_after_cycle',
  'recall_after_compaction',
  'compaction_s',
  'disk_before_bytes',
  'disk_after_bytes',
  'dir_before_bytes',
  'dir_after_bytes',
];

/** `report --json`'s churn rows of these engines: every field, figures from the stored steps. */
export function checkReportChurn(churn: Record<string, unknown>[], dataset: string, engines: string[]): void {
  const rows = churn.filter((c) => c.dataset === dataset && engines.includes(c.participant as string));
  assert.deepEqual(rows.map((c) => c.participant).sort(), [...engines].sort());
  for (const c of rows) {
    for (const key of REPORT_KEYS) assert.ok(key in c, `${c.participant}: report --json churn has ${key}`);
    assert.equal(c.status, 'measured');
    assert.equal(c.tombstone_leak, 0);
    assert.equal(c.never_visible, 0);
    assert.ok(
      c.freshness_p50_ms !== null && (c.mixed_write_rate as number) > 0 && c.mixed_min_recall !== null && c.recall_after_cycle !== null,
      String(c.participant),
    );
    assert.equal((c.mixed_recall_over_time as unknown[]).length, 5);
    assert.equal((c.mixed_write_rate_over_time as unknown[]).length, 5);
    assert.ok(c.disk_before_bytes !== null || c.dir_before_bytes !== null, `${c.participant}: a disk figure before the cycle`);
  }
}
