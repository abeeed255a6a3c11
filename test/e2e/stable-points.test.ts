// Stable points end to end with a real engine (hnswlib) through the command line: the same
// query set for every point, intervals on every figure, calibrated cells, repeated builds,
// provenance, `report --json` cells with intervals and ties, a resume that refuses to mix
// vecbench commits or engine versions, and the busy-machine flag under a deliberately loaded
// core.
// vecbench-test: alone (it loads a core on purpose and checks the busy flag).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { CALIBRATION_TOLERANCE } from '../../src/metrics/frontier.ts';
import { BUSY_RETAKES } from '../../src/runner/timed-rounds.ts';

const BIN = fileURLToPath(new URL('../../bin/vecbench.js', import.meta.url));
const dir = process.env.VB_KEEP ?? mkdtempSync(join(tmpdir(), 'vecbench-stable-'));
const data = join(dir, 'data');
after(() => process.env.VB_KEEP || rmSync(dir, { recursive: true, force: true }));

// Other work on this machine must not flag these points: the busy rule has a test of its own below.
// The points cells read get passes to ±5 % or 0.5 s.
const FAST = [
  '--queries',
  '1000',
  '--min-passes',
  '3',
  '--min-seconds',
  '0',
  '--max-passes',
  '6',
  '--busy-cores',
  '64',
  '--cell-ci',
  '0.05',
  '--cell-seconds',
  '0.5',
];

function vecbench(...args: string[]) {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    encoding: 'utf8',
    env: { ...process.env, VECBENCH_QUIET: '1', VECBENCH_DATA: data },
    timeout: 600_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const resultFile = (out: string) => join(out, 'synthetic-2000', 'hnswlib.json');
const readJson = (path: string) => JSON.parse(readFileSync(path, 'utf8'));

describe('stable points with hnswlib', () => {
  const out = join(dir, 'a');
  test('a run with two builds: calibrated cells at measured points, intervals, provenance', () => {
    const r = vecbench(
      'run',
      '--dataset',
      'synthetic-2000',
      '--participants',
      'hnswlib',
      '--groups',
      'none/10,cat10/10',
      '--out',
      out,
      '--builds',
      '2',
      ...FAST,
    );
    assert.equal(r.code, 0, r.stderr);
    const res = readJson(resultFile(out));
    assert.deepEqual(res.run.query_set, { mode: 'subset', size: 1000, seed: res.run.query_seed });
    assert.deepEqual(res.run.timing, {
      min_passes: 3,
      min_seconds: 0,
      max_passes: 6,
      busy_cores: 64,
      host_slow: 0,
      cell_half_width: 0.05,
      cell_seconds: 0.5,
      cell_max_passes: 300,
      // Recorded as asked; a participant timed alone has no lead to pair, so its own interval ruled.
      lead_half_width: 0.03,
    });
    assert.equal(res.run.builds, 2);
    assert.match(res.provenance.settings_hash, /^[0-9a-f]{16}$/);
    assert.ok(res.provenance.cpu_model.length > 0);
    assert.equal(res.load.reloads.filter((x: { reason: string }) => /build 2 of 2/.test(x.reason)).length, 1);
    for (const g of res.groups) {
      const pts = g.points as {
        queries: number;
        query_slice: number[];
        passes: number;
        ci: { qps: number[]; recall: number[] };
        qps: number;
        recall: number;
        build: number;
        view: string;
        driven: string;
        calibrated_for?: number;
        for_cell?: boolean;
        pass: { wall_s: number[] };
        passes_busy?: number;
      }[];
      assert.ok(pts.length > 0, g.key);
      // The points cells read are timed to ±5 % (at least 10 passes) or 0.5 s, in the throughput
      // view only; every calibrated point is one, and so is every point of the second build.
      // A point whose rounds the machine kept busy (steal time on a loaded VM) ends on its retakes
      // (BUSY_RETAKES x min_passes busy passes) with what it had, and says how many were busy.
      for (const p of pts.filter((x) => x.for_cell)) {
        const seconds = p.pass.wall_s.reduce((a, b) => a + b, 0);
        assert.equal(p.view, 'throughput');
        const retaken = (p.passes_busy ?? 0) >= BUSY_RETAKES * res.run.timing.min_passes;
        assert.ok(
          retaken || seconds >= 0.5 || (p.passes >= 10 && (p.ci.qps[1] - p.ci.qps[0]) / 2 / p.qps <= 0.05),
          `${g.key}: ${p.passes} passes, ${seconds} s, ${p.passes_busy ?? 0} busy`,
        );
      }
      assert.ok(pts.filter((x) => x.calibrated_for !== undefined && x.view === 'throughput').every((x) => x.for_cell));
      assert.ok(pts.filter((x) => x.build === 1).every((x) => x.for_cell));
      for (const p of pts) {
        assert.equal(p.queries, 1000);
        assert.ok(p.passes >= 3);
        assert.ok(p.ci.qps[0] <= p.qps && p.qps <= p.ci.qps[1]);
        assert.ok(p.ci.recall[0] <= p.recall && p.recall <= p.ci.recall[1]);
      }
      // The same query set everywhere: every point names the same first and last query.
      assert.equal(new Set(pts.map((p) => p.query_slice.join('-'))).size, 1);
      const found = (g.calibration as { status: string }[]).filter((c) => c.status === 'found').length;
      assert.equal(pts.filter((p) => p.build === 1 && p.calibrated_for !== undefined).length, found, `${g.key}: the second build times the calibrated knobs`);
      assert.ok(
        pts.filter((p) => p.build === 1).every((p) => p.view === 'throughput'),
        `${g.key}: in the throughput view`,
      );
      assert.ok(pts.filter((p) => p.view === 'latency').every((p) => p.driven === '1 at a time'));
      assert.equal(typeof g.first_query_ms, 'number');
    }
    const rep = vecbench('report', '--out', out, '--json');
    assert.equal(rep.code, 0, rep.stderr);
    const cells = JSON.parse(rep.stdout).cells as {
      group: string;
      target: number;
      status: string;
      value: number | null;
      ci_low: number | null;
      ci_high: number | null;
      tie: boolean;
      read_recall: number[];
      max_recall: number | null;
      builds?: unknown[];
    }[];
    const valued = cells.filter((c) => c.value !== null);
    assert.ok(valued.length > 0);
    for (const c of valued) {
      assert.ok(c.ci_low !== null && c.ci_high !== null && c.ci_low <= c.value! && c.value! <= c.ci_high, JSON.stringify(c));
      assert.equal(typeof c.tie, 'boolean');
      // Groups whose calibration found knobs were measured on both builds.
      assert.ok(c.builds === undefined || c.builds.length === 2);
    }
    assert.ok(valued.some((c) => c.builds?.length === 2));
    // Targets inside the knob's range are read at a calibrated point within the tolerance.
    const inRange = cells.filter((c) => c.status !== 'above' && c.max_recall !== null && c.max_recall >= c.target);
    assert.ok(inRange.length > 0);
    for (const c of inRange) {
      assert.equal(c.status, 'calibrated', JSON.stringify(c));
      assert.ok(Math.abs(c.read_recall[0] - c.target) <= CALIBRATION_TOLERANCE + 1e-9, JSON.stringify(c));
    }
    // The table says how each participant was driven and prints intervals.
    assert.match(r.stdout, /\((\d+ threads|1 at a time[^)]*)\)/);
    assert.match(r.stdout, /±\d/);
  });

  test('a resume refuses to mix vecbench commits or engine versions in one file', () => {
    const path = resultFile(out);
    const res = readJson(path);
    res.run.complete = false;
    const commit = res.provenance.vecbench_commit;
    writeFileSync(path, JSON.stringify({ ...res, provenance: { ...res.provenance, vecbench_commit: 'deadbeef' } }));
    let r = vecbench('run', '--dataset', 'synthetic-2000', '--participants', 'hnswlib', '--groups', 'none/10,cat10/10', '--out', out, '--builds', '2', ...FAST);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /cannot be resumed: it was measured by vecbench commit deadbeef, this is /);
    assert.equal(r.stderr.trim().split('\n').length, 1);
    writeFileSync(path, JSON.stringify({ ...res, provenance: { ...res.provenance, vecbench_commit: commit }, engine_version: '0.0.1-old' }));
    r = vecbench('run', '--dataset', 'synthetic-2000', '--participants', 'hnswlib', '--groups', 'none/10,cat10/10', '--out', out, '--builds', '2', ...FAST);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /holds points measured with hnswlib-node 0\.0\.1-old, the engine is 3\.0\.0 now; pass --fresh/);
  });

  test('a deliberately loaded core: a warning at the start, points flagged busy-machine that set no cell', async () => {
    // A CPU hog that is not our descendant (sh exits, node is reparented), as another user's job.
    const sh = spawnSync('sh', ['-c', `${process.execPath} -e "const t=Date.now()+120000; while(Date.now()<t){}" >/dev/null 2>&1 & echo $!`], {
      encoding: 'utf8',
    });
    const hog = Number(sh.stdout.trim());
    assert.ok(hog > 0);
    try {
      await new Promise((r) => setTimeout(r, 300));
      const busyOut = join(dir, 'busy');
      const child = spawn(
        process.execPath,
        [
          BIN,
          'run',
          '--dataset',
          'synthetic-2000',
          '--participants',
          'hnswlib',
          '--groups',
          'none/10',
          '--out',
          busyOut,
          '--queries',
          '500',
          '--min-passes',
          '2',
          '--min-seconds',
          '0',
          '--max-passes',
          '3',
          '--busy-cores',
          '0.25',
        ],
        { env: { ...process.env, VECBENCH_DATA: data } },
      );
      let stderr = '';
      child.stderr.on('data', (b) => (stderr += b));
      const code = await new Promise<number | null>((res) => child.on('exit', res));
      assert.equal(code, 0, stderr);
      assert.match(stderr, /the machine is busy/);
      const res = readJson(resultFile(busyOut));
      const pts = res.groups[0].points as { flags: string[]; passes: number; passes_busy: number }[];
      assert.ok(pts.length > 0);
      for (const p of pts) {
        assert.ok(p.flags.includes('busy-machine'), JSON.stringify(p.flags));
        assert.equal(p.passes, 3);
      }
      const rep = vecbench('report', '--out', busyOut);
      assert.match(rep.stdout, /hnswlib: points left off the frontier: \d+ busy-machine/);
    } finally {
      process.kill(hog, 'SIGKILL');
    }
  });
});
