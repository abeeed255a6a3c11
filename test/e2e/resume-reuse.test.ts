// Index reuse on resume (issue 7): a run killed mid-measurement (the fault hook kills the
// runner during a result write) leaves its engine's built index in <out>/.engines/; rerunning
// the same command reopens that index instead of loading again, records the reuse and no
// reload, and measures the same points as an uninterrupted run. Changed settings, a marker that
// names another build, answers that differ from the build's, or a damaged index file: no reuse,
// a reload with its reason. Real engine (hnswlib), real runs of the CLI.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { resultSchema, type ResultFile } from '../../src/results/schema.ts';
import { markerSchema } from '../../src/runner/engine-home.ts';

const BIN = fileURLToPath(new URL('../../bin/vecbench.js', import.meta.url));
const DATASET = 'synthetic-2000';
const dir = mkdtempSync(join(tmpdir(), 'vecbench-reuse-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const data = join(dir, 'data');

function settingsFile(name: string, efConstruction: number): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify({ index: { M: 12, efConstruction }, ladders: [{ k: [10], knobs: { ef: [10, 20, 40, 80] } }], batch_size: 500 }));
  return path;
}
const SETTINGS_A = settingsFile('a.json', 100);
const SETTINGS_B = settingsFile('b.json', 60);

/** One CLI run; `killAtWrite`: the runner SIGKILLs itself during its Nth atomic write. */
function vecbench(out: string, settings: string, opts: { killAtWrite?: number; killAtRequest?: string; extra?: string[] } = {}) {
  const env = {
    ...process.env,
    VECBENCH_QUIET: '1',
    VECBENCH_DATA: data,
    ...(opts.killAtWrite ? { VECBENCH_FAULT_WRITE: String(opts.killAtWrite) } : {}),
    ...(opts.killAtRequest ? { VECBENCH_FAULT_REQUEST: opts.killAtRequest } : {}),
  };
  const args = [
    'run',
    '--dataset',
    DATASET,
    '--participants',
    'hnswlib',
    '--settings',
    `hnswlib=${settings}`,
    '--out',
    out,
    '--clients',
    '4',
    '--groups',
    'none/10,cat10/10',
    ...(opts.extra ?? []),
  ];
  return spawnSync(process.execPath, [BIN, ...args], { env, encoding: 'utf8' });
}

const resultOf = (out: string): ResultFile => resultSchema.parse(JSON.parse(readFileSync(join(out, DATASET, 'hnswlib.json'), 'utf8')));
const home = (out: string) => join(out, '.engines', DATASET, 'hnswlib');
const markerPath = (out: string) => join(home(out), 'built.json');

/** What must not depend on an interruption: the points, their queries and their recall. */
const identity = (r: ResultFile) =>
  r.groups.map((g) => ({
    key: g.key,
    status: g.status,
    points: g.points.map((p) => ({ li: p.ladder_index, view: p.view, slice: p.query_slice, queries: p.queries, recall: p.recall, strict: p.recall_strict })),
  }));

/**
 * The 7th atomic write of a run on prepared data: the marker (1), the result after the load
 * (2), the groups' first queries (3, 4), the groups' timed points (5, 6), then the kill while
 * writing what follows them.
 */
const KILL_AT = 7;

/** A run of settings A killed mid-measurement; checks it left a built index and a partial result. */
function killedRun(out: string): void {
  const r = vecbench(out, SETTINGS_A, { killAtWrite: KILL_AT });
  assert.equal(r.signal, 'SIGKILL', `the run was killed by the fault hook (exit ${r.status}): ${r.stderr}`);
  const partial = resultOf(out);
  assert.equal(partial.run.complete, false);
  assert.ok(partial.load !== null, 'the load finished before the kill');
  assert.ok(partial.groups.reduce((a, g) => a + g.points.length, 0) > 0, 'some points were measured before the kill');
  assert.ok(existsSync(markerPath(out)), 'the finished build is marked');
}

let expected: ReturnType<typeof identity>;

before(() => {
  const clean = join(dir, 'clean');
  const r = vecbench(clean, SETTINGS_A);
  assert.equal(r.status, 0, r.stderr);
  const full = resultOf(clean);
  expected = identity(full);
  assert.deepEqual(full.load!.reused, []);
  assert.ok(!existsSync(join(clean, '.engines')), 'a complete result leaves no engine data behind');
});

test('a killed run resumes on the index it built: reuse recorded, no reload, the same points', { timeout: 600_000 }, () => {
  const out = join(dir, 'resume');
  killedRun(out);
  const built = markerSchema.parse(JSON.parse(readFileSync(markerPath(out), 'utf8')));
  assert.equal(built.rows, 2000);
  assert.equal(built.check.ids.length, 20);

  const r = vecbench(out, SETTINGS_A);
  assert.equal(r.status, 0, r.stderr);
  const resumed = resultOf(out);
  assert.equal(resumed.run.complete, true);
  assert.equal(resumed.run.resumed, 1);
  assert.deepEqual(resumed.load!.reloads, [], 'nothing was loaded again');
  assert.equal(resumed.load!.reused.length, 1);
  assert.equal(resumed.load!.reused[0].reason, 'resumed run');
  assert.equal(resumed.load!.reused[0].built, built.built);
  assert.equal(resumed.load!.reused[0].check_queries, 20);
  assert.ok(resumed.load!.reused[0].open_s! > 0);
  assert.deepEqual(identity(resumed), expected, 'the resumed result equals the uninterrupted one');
  // The reopened engine also served the cold start at the end.
  assert.ok(resumed.resources!.cold_first_query_s! > 0);
  assert.ok(!existsSync(home(out)), 'the engine data is removed once the result is complete');
});

test('a run stopped during timing resumes with the recall probes and timed passes it had: the same points, passes from before the stop', {
  timeout: 600_000,
}, () => {
  const out = join(dir, 'timing');
  // Two groups of 4 ladder points: 8 recall probes, then timed passes; killed at the 20th point
  // request, inside the timing.
  const killed = vecbench(out, SETTINGS_A, { killAtRequest: 'point:20' });
  assert.equal(killed.signal, 'SIGKILL', `killed by the fault hook (exit ${killed.status}): ${killed.stderr}`);
  const progress = join(out, DATASET, '.hnswlib.progress');
  const kept = readFileSync(progress, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { kind: string; at_unix_s?: number });
  const probes = kept.filter((x) => x.kind === 'probe').length;
  const passes = kept.filter((x) => x.kind === 'pass');
  assert.ok(probes >= 8 && passes.length >= 1, `kept ${probes} probes and ${passes.length} passes`);
  assert.equal(
    resultOf(out).groups.reduce((a, g) => a + g.points.length, 0),
    0,
    'no group finished its timing before the stop',
  );

  const resumedAt = Date.now() / 1000;
  const r = vecbench(out, SETTINGS_A);
  assert.equal(r.status, 0, r.stderr);
  const resumed = resultOf(out);
  assert.equal(resumed.load!.reused.length, 1, 'the index was reopened, so its measurements could be kept');
  // Recall comes from the kept probes, so the points are exactly the uninterrupted run's.
  assert.deepEqual(identity(resumed), expected);
  const before = resumed.groups.flatMap((g) => g.points.flatMap((p) => p.pass?.at_unix_s ?? [])).filter((t) => t < resumedAt);
  assert.equal(before.length, passes.length, 'every kept pass is in the result, at its own time');
  assert.ok(!existsSync(progress), 'a complete result leaves no progress file');
});

test('an engine stopped for a slow point is reopened on its built index, not built again', { timeout: 600_000 }, () => {
  const out = join(dir, 'slow');
  // The 20th point request's time limit expires at once: the harness stops the engine as it
  // would one too slow for --point-timeout.
  const r = vecbench(out, SETTINGS_A, { killAtRequest: 'point:20:slow' });
  assert.equal(r.status, 0, r.stderr);
  const res = resultOf(out);
  assert.equal(res.run.complete, true);
  assert.deepEqual(res.load!.reloads, [], 'the engine was not loaded again');
  assert.equal(res.load!.reused.length, 1, 'its index was reopened');
  assert.match(res.load!.reused[0].reason, /^engine restarted \(the last engine process stopped after a point request took longer than \d+s\)$/);
  assert.equal(res.load!.reused[0].check_queries, 20);
});

test('changed settings: the result is measured afresh and the old index is not reused', { timeout: 600_000 }, () => {
  const out = join(dir, 'changed');
  killedRun(out);
  const before = markerSchema.parse(JSON.parse(readFileSync(markerPath(out), 'utf8')));
  const r = vecbench(out, SETTINGS_B, { extra: ['--keep-engines'] });
  assert.equal(r.status, 0, r.stderr);
  const fresh = resultOf(out);
  assert.equal(fresh.run.complete, true);
  assert.equal(fresh.run.resumed, 0, 'a result of other settings is not resumed');
  assert.deepEqual(fresh.load!.reused, [], 'no reuse');
  assert.deepEqual(fresh.load!.reloads, []);
  assert.equal((fresh.settings.index as { efConstruction: number }).efConstruction, 60);
  // --keep-engines: the index of the new settings is kept, marked with their hash.
  const after = markerSchema.parse(JSON.parse(readFileSync(markerPath(out), 'utf8')));
  assert.notEqual(after.settings_hash, before.settings_hash);
  assert.ok(existsSync(join(home(out), 'work', 'hnswlib.index')));
});

const refusals: { name: string; tamper: (out: string) => void; reason: RegExp }[] = [
  {
    name: 'a marker naming other settings',
    tamper: (out) => {
      const m = JSON.parse(readFileSync(markerPath(out), 'utf8'));
      m.settings_hash = '0'.repeat(64);
      writeFileSync(markerPath(out), JSON.stringify(m));
    },
    reason: /index not reused: it was built with other settings/,
  },
  {
    name: "check answers that differ from the build's",
    tamper: (out) => {
      const m = JSON.parse(readFileSync(markerPath(out), 'utf8'));
      m.check.ids[3] = [1999, 1998, 1997];
      writeFileSync(markerPath(out), JSON.stringify(m));
    },
    reason: /index not reused: the reopened engine answers 1 of 20 check queries differently/,
  },
  {
    name: 'a damaged index file',
    tamper: (out) => truncateSync(join(home(out), 'work', 'hnswlib.rows.bin'), 100),
    reason: /index not reused: reopening it failed/,
  },
];

for (const c of refusals) {
  test(`${c.name}: reloaded, the reason recorded, the same points`, { timeout: 600_000 }, () => {
    const out = join(dir, c.name.replace(/\W+/g, '-'));
    killedRun(out);
    c.tamper(out);
    const r = vecbench(out, SETTINGS_A);
    assert.equal(r.status, 0, r.stderr);
    const resumed = resultOf(out);
    assert.equal(resumed.run.resumed, 1);
    assert.deepEqual(resumed.load!.reused, []);
    assert.equal(resumed.load!.reloads.length, 1);
    assert.match(resumed.load!.reloads[0].reason, c.reason);
    assert.deepEqual(identity(resumed), expected);
  });
}
