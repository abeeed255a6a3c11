// Issue 15 items 6 and 7: one writer per results directory and one prepare per dataset, through
// the real command line (the refused commands are real second processes); stale locks of dead
// processes are taken over; a prepare's temporary directory goes on an error or a signal, and a
// dead prepare's is cleared by the next one.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { OUT_LOCK_FILE } from '../../src/commands/common.ts';
import { prepareDataset } from '../../src/prepare/registry.ts';
import { writePrepared } from '../../src/datasets/layout.ts';
import { generateSynthetic } from '../../src/prepare/synthetic.ts';
import { datasetLockPath } from '../../src/datasets/preparing.ts';
import { acquireLock, LOCK_FORMAT } from '../../src/util/lock.ts';
import { startTicks } from '../../src/util/proc.ts';
import { UserError } from '../../src/util/errors.ts';

// The prepares this process runs itself print no progress.
process.env.VECBENCH_QUIET = '1';

const BIN = fileURLToPath(new URL('../../bin/vecbench.js', import.meta.url));
const HOLDER = fileURLToPath(new URL('../helpers/lock-holder.ts', import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'vecbench-locks-'));
const inputs = join(root, 'inputs');
const data = join(root, 'data');
const children: ChildProcess[] = [];
after(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  rmSync(root, { recursive: true, force: true });
});

function vecbench(args: string[], opts: { quiet?: boolean } = {}) {
  const env: NodeJS.ProcessEnv = { ...process.env, VECBENCH_QUIET: '1' };
  if (opts.quiet === false) delete env.VECBENCH_QUIET;
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env, timeout: 600_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function writeFvecs(path: string, rows: number, d: number, seed: number): void {
  const rowBytes = 4 + 4 * d;
  const buf = Buffer.alloc(rows * rowBytes);
  let x = seed;
  for (let i = 0; i < rows; i++) {
    buf.writeInt32LE(d, i * rowBytes);
    for (let j = 0; j < d; j++) {
      x = (x * 1103515245 + 12345) % 2147483648;
      buf.writeFloatLE(x / 2147483648 - 0.5, i * rowBytes + 4 + 4 * j);
    }
  }
  writeFileSync(path, buf);
}

const prepareCustom = (name: string, dataDir = data, queries = 'queries.fvecs') => [
  'prepare',
  'custom',
  '--name',
  name,
  '--base',
  join(inputs, 'base.fvecs'),
  '--queries',
  join(inputs, queries),
  '--metric',
  'l2',
  '--data',
  dataDir,
];

/** Starts a process that holds a lock until killed; resolves once it holds it. */
async function holder(...args: string[]): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', HOLDER, ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, VECBENCH_QUIET: '1' },
  });
  children.push(child);
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (b: Buffer) => (b.toString().includes('held') ? resolve() : undefined));
    child.on('exit', (code) => reject(new Error(`lock holder exited (${code}) before it held the lock`)));
  });
  return child;
}

async function killed(child: ChildProcess, sig: NodeJS.Signals): Promise<number | null> {
  const done = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  child.kill(sig);
  return done;
}

/** The one error line of a refused command: exit 2, nothing else printed. */
function refused(r: { code: number | null; stdout: string; stderr: string }): string {
  assert.equal(r.code, 2, r.stderr);
  assert.equal(r.stdout, '');
  const lines = r.stderr.trim().split('\n');
  assert.equal(lines.length, 1, r.stderr);
  return lines[0];
}

const tempDirs = (dir: string) => (existsSync(dir) ? readdirSync(dir).filter((e) => e.includes('.tmp-')) : []);
const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const SINCE = String.raw`since \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`;

/** A process id that belonged to a process which has exited. */
function deadPid(): number {
  const r = spawnSync('true');
  assert.ok(r.pid > 0);
  return r.pid;
}

/** A process that runs until the test ends (killed in after()). */
function liveProcess(): ChildProcess {
  const child = spawn('sleep', ['600'], { stdio: 'ignore' });
  children.push(child);
  return child;
}

before(() => {
  mkdirSync(inputs, { recursive: true });
  writeFvecs(join(inputs, 'base.fvecs'), 400, 8, 1);
  writeFvecs(join(inputs, 'queries.fvecs'), 40, 8, 2);
  writeFvecs(join(inputs, 'queries-4d.fvecs'), 40, 4, 3);
  writeFvecs(join(inputs, 'queries-32.fvecs'), 40, 32, 5);
  const r = vecbench(prepareCustom('tiny'));
  assert.equal(r.code, 0, r.stderr);
});

describe('the results directory lock', () => {
  test('run, import, report --html into it, ceiling and churn are refused while another process writes --out; read-only commands are not', async () => {
    const out = join(root, 'out-held');
    const other = await holder('out', out);
    const held = new RegExp(
      `^vecbench: results directory ${esc(out)} is in use by pid ${other.pid} \\(vecbench out ${esc(out)}\\) ${SINCE}; wait for it to finish \\(or stop it\\), or pass another --out$`,
    );
    assert.match(refused(vecbench(['run', '--dataset', 'tiny', '--participants', 'exact', '--groups', 'none/10', '--data', data, '--out', out])), held);
    assert.match(refused(vecbench(['import', join(inputs, 'missing.json'), '--out', out])), held);
    assert.match(refused(vecbench(['report', '--out', out, '--html', join(out, 'report')])), held);
    assert.match(refused(vecbench(['ceiling', '--protocols', 'in-process', '--out', out])), held);
    assert.match(refused(vecbench(['churn', '--dataset', 'tiny', '--participants', 'exact', '--data', data, '--out', out])), held);
    // Reading is never blocked: report (table / --json) gets as far as finding no results.
    assert.match(refused(vecbench(['report', '--out', out, '--json'])), /no result files in/);
    assert.deepEqual(readdirSync(out), [OUT_LOCK_FILE], 'the refused commands wrote nothing');
    assert.equal(await killed(other, 'SIGTERM'), null);
  });

  test('a lock left by a killed process is taken over with a note, and released after an error', async () => {
    const out = join(root, 'out-stale');
    const other = await holder('out', out);
    await killed(other, 'SIGKILL');
    assert.ok(existsSync(join(out, OUT_LOCK_FILE)), 'SIGKILL leaves the lock behind');
    const r = vecbench(['import', join(inputs, 'missing.json'), '--out', out], { quiet: false });
    assert.equal(r.code, 2, r.stderr);
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines.length, 2, r.stderr);
    assert.match(
      lines[0],
      new RegExp(
        `^note: results directory ${esc(out)}: took over the stale lock ${esc(join(out, OUT_LOCK_FILE))} of pid ${other.pid} \\(vecbench out ${esc(out)}\\) ${SINCE}, which no longer runs$`,
      ),
    );
    assert.doesNotMatch(lines[1], /in use by/);
    assert.equal(existsSync(join(out, OUT_LOCK_FILE)), false, 'the error released the lock');
  });

  test('a live PID whose start time differs from the recorded one is not the holder', () => {
    const path = join(root, 'reused', 'x.lock');
    mkdirSync(join(root, 'reused'), { recursive: true });
    const live = liveProcess();
    const start = startTicks(live.pid!);
    assert.ok(start !== null);
    const lockOf = (s: number) => JSON.stringify({ format: LOCK_FORMAT, pid: live.pid, start: s, command: 'vecbench run', since: '2026-01-01T00:00:00Z' });
    writeFileSync(path, lockOf(start));
    assert.throws(
      () => acquireLock(path, { what: 'x', fix: 'or not' }),
      (e: unknown) => e instanceof UserError && e.message.includes(`in use by pid ${live.pid} (vecbench run) since 2026-01-01T00:00:00Z`),
    );
    writeFileSync(path, lockOf(start - 1));
    const lock = acquireLock(path, { what: 'x', fix: 'or not' });
    assert.match(JSON.stringify(lock), /x\.lock/);
    lock.release();
    assert.equal(existsSync(path), false, 'released');
  });

  test('the command a lock records masks the password of a server URL', () => {
    const path = join(root, 'secret', 'x.lock');
    const argv = process.argv;
    process.argv = [argv[0], BIN, 'run', '--connect', 'pgvector=postgres://vb:S3cretPass@127.0.0.1:5432/db'];
    try {
      const lock = acquireLock(path, { what: 'x', fix: 'or not' });
      const text = readFileSync(path, 'utf8');
      lock.release();
      assert.doesNotMatch(text, /S3cretPass/);
      assert.match(text, /"command":"vecbench run --connect pgvector=postgres:\/\/vb:\*\*\*@127\.0\.0\.1:5432\/db"/);
    } finally {
      process.argv = argv;
    }
  });
});

describe('the dataset lock', () => {
  test('a second prepare, a run that prepares, and a run of a set being prepared again are refused; another dataset prepares at once', async () => {
    const other = await holder('dataset', data, 'synthetic-2k');
    const heldMessage = (name: string) =>
      new RegExp(
        `^vecbench: dataset ${name} in ${esc(data)} is being prepared by pid ${other.pid} \\(vecbench dataset ${esc(data)} ${name}\\) ${SINCE}; wait for it to finish \\(or stop it\\), or use another --data directory$`,
      );
    assert.match(refused(vecbench(['prepare', 'synthetic-2k', '--data', data])), heldMessage('synthetic-2k'));
    const out = join(root, 'out-data-held');
    assert.match(refused(vecbench(['run', '--dataset', 'synthetic-2k', '--participants', 'exact', '--data', data, '--out', out])), heldMessage('synthetic-2k'));
    assert.equal(existsSync(out), false, 'the refused run left no results directory');
    assert.deepEqual(tempDirs(data), []);
    const tinyHolder = await holder('dataset', data, 'tiny');
    assert.match(
      refused(vecbench(['run', '--dataset', 'tiny', '--participants', 'exact', '--groups', 'none/10', '--data', data, '--out', out])),
      new RegExp(`^vecbench: dataset tiny in ${esc(data)} is being prepared by pid ${tinyHolder.pid} `),
    );
    // Another dataset in the same --data prepares meanwhile, and a normal exit releases its lock.
    const r = vecbench(prepareCustom('tiny-two'));
    assert.equal(r.code, 0, r.stderr);
    assert.equal(existsSync(datasetLockPath(data, 'tiny-two')), false);
    assert.equal(vecbench(['datasets', '--data', data]).code, 0, 'listing is read-only');
    await killed(other, 'SIGTERM');
    await killed(tinyHolder, 'SIGTERM');
  });

  test('a stale dataset lock is taken over; an error releases the lock', async () => {
    const other = await holder('dataset', data, 'tiny-stale');
    await killed(other, 'SIGKILL');
    const r = vecbench(prepareCustom('tiny-stale'), { quiet: false });
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stderr,
      new RegExp(`^note: dataset tiny-stale in ${esc(data)}: took over the stale lock .* of pid ${other.pid} .*, which no longer runs$`, 'm'),
    );
    assert.equal(existsSync(datasetLockPath(data, 'tiny-stale')), false);
    const bad = vecbench(prepareCustom('tiny-bad', data, 'queries-4d.fvecs'));
    assert.match(refused(bad), /4-d/);
    assert.equal(existsSync(datasetLockPath(data, 'tiny-bad')), false, 'the error released the lock');
    assert.deepEqual(tempDirs(data), []);
  });
});

describe('temporary directories of prepares', () => {
  test("the next prepare removes a dead prepare's <name>.tmp-<pid>; a running one's stays", async () => {
    const dir = join(root, 'data-tmp');
    const dead = join(dir, `synthetic-300.tmp-${deadPid()}`);
    mkdirSync(dead, { recursive: true });
    writeFileSync(join(dead, 'base.f32'), 'half written');
    // A process that started after its PID's directory was last written got the PID again.
    const reusedPid = join(dir, `synthetic-300.tmp-${liveProcess().pid}`);
    mkdirSync(reusedPid);
    utimesSync(reusedPid, new Date(Date.now() - 3600_000), new Date(Date.now() - 3600_000));
    await prepareDataset(dir, 'synthetic-300', { groundTruth: false });
    assert.deepEqual(readdirSync(dir), ['synthetic-300']);

    const running = join(dir, `synthetic-400.tmp-${liveProcess().pid}`);
    mkdirSync(running);
    await assert.rejects(prepareDataset(dir, 'synthetic-400', { groundTruth: false }), /synthetic-400 is being prepared by another vecbench \(pid \d+\)/);
    assert.ok(existsSync(running), 'a running prepare keeps its directory');
  });

  test('a prepare that fails midway removes its own temporary directory', async () => {
    const dir = join(root, 'data-fail');
    const made = generateSynthetic(300, 20);
    made.attrs.num = made.attrs.num.subarray(1);
    await assert.rejects(writePrepared(dir, 'broken', made), /attribute num has 299 values for 300 rows/);
    assert.deepEqual(tempDirs(dir), []);
  });

  test('SIGTERM during a prepare removes its temporary directory and its lock', async () => {
    const dir = join(root, 'data-signal');
    writeFvecs(join(inputs, 'big.fvecs'), 120_000, 32, 4);
    const child = spawn(
      process.execPath,
      [
        BIN,
        'prepare',
        'custom',
        '--name',
        'big',
        '--base',
        join(inputs, 'big.fvecs'),
        '--queries',
        join(inputs, 'queries-32.fvecs'),
        '--metric',
        'l2',
        '--data',
        dir,
      ],
      { stdio: 'ignore', env: { ...process.env, VECBENCH_QUIET: '1' } },
    );
    children.push(child);
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    let signalled = false;
    while (!signalled && child.exitCode === null) {
      if (tempDirs(dir).length > 0) {
        child.kill('SIGTERM');
        signalled = true;
      } else await new Promise((r) => setTimeout(r, 5));
    }
    assert.ok(signalled, 'the prepare ended before its temporary directory was seen');
    assert.equal(await exited, 143);
    assert.deepEqual(tempDirs(dir), [], 'no temporary directory left');
    assert.equal(existsSync(datasetLockPath(dir, 'big')), false, 'no lock left');
    assert.equal(existsSync(join(dir, 'big')), false);
  });
});
