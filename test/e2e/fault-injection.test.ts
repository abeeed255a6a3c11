// Crash tests (issue 7): SIGKILL vecbench at chosen moments during load and measurement, in the
// middle of result writes, and kill the engine process under it; resume each time; the final
// result files must equal an uninterrupted run's (same points, same queries per point, same
// recall; timings aside), with nothing lost or measured twice. The moments are chosen, not
// random: VECBENCH_FAULT_REQUEST=TYPE:N kills the runner right after its Nth request of TYPE to
// an engine (TYPE:N:engine kills the engine instead), VECBENCH_FAULT_WRITE=N inside its Nth
// atomic write. Three groups of a 3,000-row set give every kind of moment at a fraction of a
// full run's cost.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { resultSchema } from '../../src/results/schema.ts';

const BIN = fileURLToPath(new URL('../../bin/vecbench.js', import.meta.url));
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
  '--groups',
  'none/10,cat10/10,none/100',
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

/** One chosen moment: the runner right after its Nth request of a type (load: an engine is
 * loading; point: a measurement is under way), inside its Nth atomic write, or the engine
 * process with its Nth request of a type in flight. */
type Kill =
  | { kind: 'runner'; request: 'load' | 'point'; nth: number }
  | { kind: 'write'; nth: number }
  | { kind: 'engine'; request: 'load' | 'point'; nth: number };

/** Starts a run with one kill planned; resolves when the run process has ended. */
function runWithKill(out: string, kill: Kill): Promise<{ code: number | null; signal: string | null; stderr: string }> {
  const fault: Record<string, string> =
    kill.kind === 'write'
      ? { VECBENCH_FAULT_WRITE: String(kill.nth) }
      : { VECBENCH_FAULT_REQUEST: `${kill.request}:${kill.nth}${kill.kind === 'engine' ? ':engine' : ''}` };
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args(out)], { env: env(fault), stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));
    child.on('exit', (code, signal) => resolve({ code, signal, stderr }));
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

/** The crash sequences: each starts from nothing and is killed again and again at these moments,
 * resuming every time, then run to its end; it must then equal the uninterrupted run. Every
 * phase is hit: both engines' loads, recall passes and timed passes (a full run sends 70-100
 * point requests; the groups' points are stored as they finish), result and journal writes, and
 * the engine process under a load and under a point (after which the run goes on to its end,
 * so an engine kill ends its sequence). A kill before anything is stored meets a run in the
 * same state as a fresh one, so it is sure to hit; the later ones may find the work done. */
const SEQUENCES: Kill[][] = [
  [
    { kind: 'runner', request: 'load', nth: 1 },
    { kind: 'runner', request: 'load', nth: 2 },
    { kind: 'write', nth: 1 },
    { kind: 'runner', request: 'point', nth: 1 },
    { kind: 'write', nth: 2 },
    { kind: 'runner', request: 'point', nth: 3 },
    { kind: 'write', nth: 3 },
    { kind: 'runner', request: 'point', nth: 5 },
    { kind: 'write', nth: 4 },
    { kind: 'runner', request: 'point', nth: 8 },
    { kind: 'write', nth: 5 },
    { kind: 'runner', request: 'point', nth: 12 },
    { kind: 'write', nth: 6 },
    // A resumed run keeps the recall probes and timed passes its predecessor had, so each resume
    // has less left to do: the last kills come early in theirs.
    { kind: 'runner', request: 'point', nth: 2 },
    { kind: 'runner', request: 'point', nth: 2 },
    { kind: 'runner', request: 'point', nth: 2 },
    { kind: 'runner', request: 'point', nth: 2 },
    { kind: 'runner', request: 'point', nth: 2 },
  ],
  [
    { kind: 'runner', request: 'point', nth: 60 },
    { kind: 'engine', request: 'point', nth: 3 },
  ],
  // A resumed run reopens the engines it had built, so a kill under a load is a fresh run's.
  [{ kind: 'engine', request: 'load', nth: 1 }],
  [{ kind: 'engine', request: 'point', nth: 45 }],
];

test('SIGKILL at 20+ chosen moments across load, measurement and writing loses and duplicates nothing', { timeout: 900_000 }, async () => {
  const expected = expectedResults();
  const hits = { runner: 0, write: 0, engine: 0 };
  const missed: string[] = [];
  for (const [seq, kills] of SEQUENCES.entries()) {
    const crashed = join(dir, `crashed-${seq}`);
    for (const kill of kills) {
      const r = await runWithKill(crashed, kill);
      checkFilesWhole(crashed);
      assert.doesNotMatch(r.stderr, /internal error/);
      if (kill.kind === 'engine') {
        // An engine killed under the runner is restarted by it; where the kill lands outside a
        // retried request, the participant stops with the reason and the next run resumes it.
        // Either way: no internal error, and nothing lost.
        assert.ok(r.code === 0 || r.code === 1, `runner exit ${r.code}: ${r.stderr}`);
        // Its moment came unless the run ended before that many requests.
        if (/fault injection: engine process killed/.test(r.stderr)) hits.engine++;
        else missed.push(`${seq}: ${JSON.stringify(kill)}`);
      } else if (r.signal === 'SIGKILL') {
        hits[kill.kind]++;
      } else {
        missed.push(`${seq}: ${JSON.stringify(kill)}`);
        // The run ended before the moment came: it must have ended well.
        assert.equal(r.code, 0, r.stderr);
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
  assert.ok(
    total >= 20 && hits.runner > 0 && hits.write > 0 && hits.engine > 0,
    `kills that hit: ${JSON.stringify(hits)}; the run ended before these: ${missed.join(', ')}`,
  );
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
    let stopped = 0;
    // Chosen delays after the first stored group: at once, and part-way into the next ones.
    for (const [i, delayMs] of [0, 400, 1200].entries()) {
      const out = join(dir, `group-${sig}-${i}`);
      // As `timeout`, systemd and container runtimes do: every process of the group at once.
      const r = await runAndSignal(out, (pid) => process.kill(-pid, sig), delayMs);
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
