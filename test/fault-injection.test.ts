// Crash tests (issue 7): SIGKILL vecbench at seeded random moments during load and
// measurement, in the middle of result writes, and kill the engine process under it; resume
// each time; the final result files must equal an uninterrupted run's (same points, same
// queries per point, same recall; timings aside), with nothing lost or measured twice.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { mulberry32 } from '../src/metrics/stats.ts';
import { resultSchema } from '../src/results/schema.ts';

const BIN = fileURLToPath(new URL('../bin/vecbench.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'vecbench-fault-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const data = join(dir, 'data');
const settings = join(dir, 'hnswlib.json');
writeFileSync(
  settings,
  JSON.stringify({
    index: { M: 12, efConstruction: 100 },
    ladders: [{ k: [10], knobs: { ef: [10, 20, 40, 80] } }, { knobs: { ef: [100, 200] } }],
    batch_size: 500,
  }),
);
const args = (out: string) => [
  'run',
  '--dataset',
  'synthetic-3000',
  '--participants',
  'exact,hnswlib',
  '--settings',
  `hnswlib=${settings}`,
  '--out',
  out,
  '--clients',
  '4',
];
const env = (extra: Record<string, string> = {}) => ({ ...process.env, VECBENCH_QUIET: '1', VECBENCH_DATA: data, ...extra });

function runToEnd(out: string): void {
  const r = spawnSync(process.execPath, [BIN, ...args(out)], { env: env(), encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
}

/** Every result file present must be whole and valid, whatever moment the kill hit. */
function checkFilesWhole(out: string): void {
  const ds = join(out, 'synthetic-3000');
  if (!existsSync(ds)) return;
  for (const f of readdirSync(ds)) {
    if (f.startsWith('.')) continue;
    resultSchema.parse(JSON.parse(readFileSync(join(ds, f), 'utf8')));
  }
}

/** The runner's node children: the engine hosts (not tsx's esbuild service, also a child). */
function childPids(pid: number): number[] {
  const r = spawnSync('pgrep', ['-P', String(pid), '-x', 'node'], { encoding: 'utf8' });
  return r.stdout.split('\n').filter(Boolean).map(Number);
}

type Kill = { kind: 'runner'; afterMs: number } | { kind: 'write'; nth: number } | { kind: 'engine'; afterMs: number };

/** Starts a run and applies one kill; resolves when the run process has ended. */
function runWithKill(out: string, kill: Kill): Promise<{ code: number | null; signal: string | null; killed: boolean; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args(out)], {
      env: env(kill.kind === 'write' ? { VECBENCH_FAULT_WRITE: String(kill.nth) } : {}),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));
    let killed = kill.kind === 'write';
    let timer: NodeJS.Timeout | undefined;
    if (kill.kind === 'runner') {
      timer = setTimeout(() => {
        killed = child.kill('SIGKILL');
      }, kill.afterMs);
    } else if (kill.kind === 'engine') {
      // The engine host is the runner's node child (forked with an IPC channel); from the
      // chosen moment on, kill it as soon as one is running.
      const tryKill = () => {
        for (const pid of childPids(child.pid!)) {
          try {
            process.kill(pid, 'SIGKILL');
            killed = true;
          } catch {
            // already gone
          }
        }
        if (!killed) timer = setTimeout(tryKill, 50);
      };
      timer = setTimeout(tryKill, kill.afterMs);
    }
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, killed, stderr });
    });
  });
}

const identity = (r: ReturnType<typeof resultSchema.parse>) =>
  r.groups.map((g) => ({
    key: g.key,
    status: g.status,
    skipped: g.skipped.length,
    points: g.points.map((p) => ({
      li: p.ladder_index,
      view: p.view,
      slice: p.query_slice,
      queries: p.queries,
      clients: p.clients,
      recall: p.recall,
      strict: p.recall_strict,
      short: p.short_results,
    })),
  }));

let cleanRun: Record<string, ReturnType<typeof identity>> | null = null;
/** The identity of an uninterrupted run's results, per participant (measured once). */
function expectedResults(): Record<string, ReturnType<typeof identity>> {
  if (cleanRun) return cleanRun;
  const clean = join(dir, 'clean');
  runToEnd(clean);
  cleanRun = Object.fromEntries(
    ['exact', 'hnswlib'].map((p) => [p, identity(resultSchema.parse(JSON.parse(readFileSync(join(clean, 'synthetic-3000', `${p}.json`), 'utf8'))))]),
  );
  return cleanRun;
}

test('SIGKILL at 20+ points across load, measurement and writing loses and duplicates nothing', { timeout: 1_500_000 }, async () => {
  const expected = expectedResults();
  const rng = mulberry32(7);
  const kinds = ['runner', 'write', 'engine'] as const;
  const hits = { runner: 0, write: 0, engine: 0 };
  // Crash sequences: each starts from nothing and is interrupted again and again, resuming
  // every time, until a run gets through; then it must equal the uninterrupted run.
  for (let seq = 0; hits.runner + hits.write + hits.engine < 21 && seq < 12; seq++) {
    const crashed = join(dir, `crashed-${seq}`);
    for (let i = 0; i < 8; i++) {
      const kind = kinds[Math.floor(rng() * 3)];
      const kill: Kill =
        kind === 'write' ? { kind, nth: 1 + Math.floor(rng() * 40) } : { kind, afterMs: (kind === 'engine' ? 1500 : 700) + Math.floor(rng() * 5000) };
      const r = await runWithKill(crashed, kill);
      checkFilesWhole(crashed);
      if (kill.kind === 'engine') {
        // An engine killed under the runner is restarted by it; where the kill lands outside
        // a retried request (e.g. a resource probe), the participant stops with the reason and
        // the next run resumes it. Either way: no internal error, and nothing lost.
        assert.ok(r.code === 0 || r.code === 1, `runner exit ${r.code}: ${r.stderr}`);
        assert.doesNotMatch(r.stderr, /internal error/);
        if (r.killed) hits.engine++;
        if (!r.killed || r.code === 0) break;
      } else if (r.signal === 'SIGKILL') {
        hits[kill.kind]++;
      } else {
        assert.equal(r.code, 0);
        break;
      }
    }
    runToEnd(crashed);
    for (const p of ['exact', 'hnswlib']) {
      const b = resultSchema.parse(JSON.parse(readFileSync(join(crashed, 'synthetic-3000', `${p}.json`), 'utf8')));
      assert.equal(b.run.complete, true);
      assert.deepEqual(identity(b), expected[p], `${p}: the resumed result of sequence ${seq} equals the uninterrupted one`);
    }
    const stale = readdirSync(join(crashed, 'synthetic-3000')).filter((f) => f.endsWith('.tmp'));
    assert.deepEqual(stale, [], 'no temp files left behind');
  }
  const total = hits.runner + hits.write + hits.engine;
  assert.ok(total >= 20 && hits.runner > 0 && hits.write > 0 && hits.engine > 0, `kills that hit: ${JSON.stringify(hits)}`);
  process.stdout.write(`# kills survived: ${JSON.stringify(hits)}\n`);
});

const STOP_CODES: Record<string, number> = { SIGTERM: 143, SIGINT: 130 };

function readFiles(out: string): Record<string, ReturnType<typeof resultSchema.parse>> {
  const ds = join(out, 'synthetic-3000');
  if (!existsSync(ds)) return {};
  const files = readdirSync(ds).filter((f) => f.endsWith('.json') && !f.startsWith('.'));
  return Object.fromEntries(files.map((f) => [f.replace(/\.json$/, ''), resultSchema.parse(JSON.parse(readFileSync(join(ds, f), 'utf8')))]));
}

/** After a stop: what the files hold is what an uninterrupted run measured, group by group;
 * a group is complete only with all of its points, and no point was skipped. */
function checkStoppedFiles(out: string, expected: Record<string, ReturnType<typeof identity>>, what: string): void {
  for (const [p, r] of Object.entries(readFiles(out))) {
    for (const g of r.groups) {
      assert.deepEqual(g.skipped, [], `${what}: ${p} ${g.key} has no skipped point`);
      assert.notEqual(g.status, 'failed', `${what}: ${p} ${g.key} did not fail (${g.reason})`);
      if (g.complete)
        assert.deepEqual(
          identity({ ...r, groups: [g] })[0],
          expected[p].find((x) => x.key === g.key),
          `${what}: ${p} ${g.key} is complete only when whole`,
        );
    }
    if (r.run.complete) assert.deepEqual(identity(r), expected[p], `${what}: ${p} is complete only when whole`);
  }
}

/** Starts a run in a process group of its own; `signal(child)` is called once the first
 * group of hnswlib is stored (mid-run). Resolves with the run's exit. */
function runAndSignal(out: string, signal: (pid: number) => void, delayMs: number): Promise<{ code: number | null; stderr: string; signalled: boolean }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args(out)], { env: env(), stdio: ['ignore', 'ignore', 'pipe'], detached: true });
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));
    let signalled = false;
    let timer: NodeJS.Timeout | undefined;
    const poll = () => {
      const groups = readFiles(out).hnswlib?.groups ?? [];
      if (groups.some((g) => g.complete && g.points.length > 0)) {
        timer = setTimeout(() => {
          signalled = true;
          signal(child.pid!);
        }, delayMs);
      } else timer = setTimeout(poll, 20);
    };
    timer = setTimeout(poll, 20);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr, signalled });
    });
  });
}

for (const sig of ['SIGTERM', 'SIGINT'] as const) {
  test(`${sig} to the whole process group stops the run: no group marked complete that is not, no point skipped; a resume measures the rest`, {
    timeout: 600_000,
  }, async () => {
    const expected = expectedResults();
    const rng = mulberry32(sig === 'SIGTERM' ? 15 : 16);
    let stopped = 0;
    for (let i = 0; i < 4; i++) {
      const out = join(dir, `group-${sig}-${i}`);
      // As `timeout`, systemd and container runtimes do: every process of the group at once.
      const r = await runAndSignal(out, (pid) => process.kill(-pid, sig), Math.floor(rng() * 1500));
      if (!r.signalled) continue; // the run finished before the moment came
      assert.equal(r.code, STOP_CODES[sig], r.stderr);
      assert.doesNotMatch(r.stderr, /internal error/);
      checkStoppedFiles(out, expected, `${sig} ${i}`);
      assert.equal(readFiles(out).hnswlib?.run.complete, false, 'the signalled participant is not complete');
      stopped++;
      runToEnd(out);
      for (const [p, res] of Object.entries(readFiles(out))) {
        assert.equal(res.run.complete, true);
        assert.deepEqual(identity(res), expected[p], `${p}: the resumed result equals the uninterrupted one`);
      }
    }
    assert.ok(stopped > 0, 'at least one run was signalled mid-run');
  });
}

test('SIGTERM to the engine process alone stops the run (not a crash to retry or a skip); a resume measures the rest', { timeout: 600_000 }, async () => {
  const expected = expectedResults();
  const out = join(dir, 'host-sigterm');
  const r = await runAndSignal(
    out,
    (pid) => {
      for (const host of childPids(pid)) process.kill(host, 'SIGTERM');
    },
    0,
  );
  assert.ok(r.signalled);
  assert.equal(r.code, 143, r.stderr);
  assert.match(r.stderr, /stopped by SIGTERM/);
  checkStoppedFiles(out, expected, 'host SIGTERM');
  assert.equal(readFiles(out).hnswlib?.run.complete, false);
  runToEnd(out);
  for (const [p, res] of Object.entries(readFiles(out))) assert.deepEqual(identity(res), expected[p], `${p}: the resumed result equals the uninterrupted one`);
});
