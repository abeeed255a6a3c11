// What an attacker tried (docs/security.md lists each case): files that are input (a ground-truth
// plan, a Slurm partition), shared temporary directories another local user prepared first
// (the server registry, the server data base, the transpiler's cache), replayed against the
// fixed code. Each test did harm on the code before the fix; each now ends in one line and
// leaves the victim untouched. The local attacker is the user nobody (65534) where ownership
// matters; the tests run as root, as CI does, and skip nothing when they do not.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { writePrepared } from '../../src/datasets/layout.ts';
import { generateSynthetic } from '../../src/datasets/synthetic.ts';
import { MAX_SHARDS, readPlan, writePlan } from '../../src/groundtruth/plan.ts';
import { writeSlurmScripts } from '../../src/groundtruth/schedulers.ts';
import { reapServerData } from '../../src/runner/server-data.ts';
import { reapOrphans, spawnServer } from '../../src/runner/server.ts';
import { UserError } from '../../src/util/errors.ts';

process.env.VECBENCH_QUIET = '1';
const BIN = join(import.meta.dirname, '..', '..', 'bin', 'vecbench.js');
const NOBODY = 65534;
const dir = mkdtempSync(join(tmpdir(), 'vecbench-security-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A one-line UserError whose message matches `re`. */
function refused(re: RegExp) {
  return (e: unknown) => {
    assert.ok(e instanceof UserError, `not a UserError: ${e}`);
    assert.ok(!e.message.includes('\n'), `not one line: ${JSON.stringify(e.message)}`);
    assert.match(e.message, re);
    return true;
  };
}

describe('a ground-truth plan is input', () => {
  const data = join(dir, 'data');
  const planDir = join(dir, 'plan');
  let good: Record<string, unknown>;
  before(async () => {
    await writePrepared(data, 'small', generateSynthetic(400, 20));
    await writePlan(data, 'small', 2, planDir);
    good = JSON.parse(readFileSync(join(planDir, 'plan.json'), 'utf8'));
  });
  /** Writes a plan edited by `edit` into a directory of its own and reads it back. */
  function readEdited(name: string, edit: (p: Record<string, any>) => void) {
    const d = join(dir, `plan-${name}`);
    mkdirSync(d, { recursive: true });
    const p = structuredClone(good) as Record<string, any>;
    edit(p);
    writeFileSync(join(d, 'plan.json'), JSON.stringify(p));
    return () => readPlan(d);
  }

  test('a newline in the dataset name (a shell line in shards.sbatch) is refused, and the scripts never carry one', () => {
    assert.throws(
      readEdited('newline', (p) => (p.dataset.name = 'x\nid > /tmp/pwned #')),
      refused(/field dataset\.name: not a dataset name/),
    );
    // Even a plan that skipped readPlan cannot put a line into the scripts.
    const plan = readPlan(planDir);
    assert.throws(() => writeSlurmScripts(planDir, { ...plan, dataset: { ...plan.dataset, name: 'x\nid' } }), refused(/line break or control character/));
    assert.throws(() => writeSlurmScripts(planDir, plan, { partition: 'debug\n$(id)' }), refused(/--partition .* is not a Slurm partition name/));
    assert.throws(() => writeSlurmScripts(planDir, plan, { partition: '`id`' }), refused(/not a Slurm partition name/));
    const ok = writeSlurmScripts(planDir, plan, { partition: 'batch,debug' });
    for (const f of [ok.shards, ok.merge]) {
      const text = readFileSync(f, 'utf8');
      for (const line of text.split('\n').filter((l) => !l.startsWith('#') && l.trim() !== ''))
        assert.match(line, /^(set -euo pipefail|exec '[^']+' '[^']+' groundtruth)/, line);
    }
  });

  test('a shard output or filter name that leaves the plan directory is refused before anything is written or removed', () => {
    const victim = join(dir, 'escaped', 'victim.txt');
    mkdirSync(join(dir, 'escaped'), { recursive: true });
    writeFileSync(victim, 'keep me');
    assert.throws(
      readEdited('output', (p) => (p.shards[0].output = '../escaped/victim.txt')),
      refused(/field shards\.0\.output: not a shard output name/),
    );
    assert.throws(
      readEdited('filter', (p) => (p.filters[0] = '/../../escaped/important')),
      refused(/field filters\.0: not a standard filter kind/),
    );
    assert.throws(
      readEdited('unit-filter', (p) => (p.shards[0].units[0].filter = '../x')),
      refused(/not a standard filter kind/),
    );
    assert.throws(
      readEdited('input', (p) => (p.inputs[0].file = '../../etc/passwd')),
      refused(/field inputs\.0\.file: not a file name of the dataset/),
    );
    assert.equal(readFileSync(victim, 'utf8'), 'keep me');
  });

  test(`a plan of 300,000 shards is one line, not a stack overflow (at most ${MAX_SHARDS})`, () => {
    assert.throws(
      readEdited('huge', (p) => {
        const rows = p.shards[0].rows;
        p.shards = Array.from({ length: 300_000 }, (_, i) => ({ index: i, output: `shard-${i}.bin`, rows, units: [{ filter: 'none', queries: [i % 20] }] }));
      }),
      refused(/field shards: /),
    );
  });
});

describe('shared temporary directories another user prepared', () => {
  const saved = { registry: process.env.VECBENCH_SERVER_REGISTRY, data: process.env.VECBENCH_SERVER_DATA };
  after(() => {
    for (const [k, v] of [
      ['VECBENCH_SERVER_REGISTRY', saved.registry],
      ['VECBENCH_SERVER_DATA', saved.data],
    ] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });

  test("the server registry: a directory of another user's, or a link, is refused; a server is never started on it and nothing in the target is removed", () => {
    // The attacker's directory, with a forged pid file and a victim file.
    const theirs = join(dir, 'their-registry');
    mkdirSync(theirs, { mode: 0o777 });
    writeFileSync(join(theirs, '1.json'), JSON.stringify({ name: 'x', pid: 1, start: 0, runner: 999999, runnerStart: 0, dataDir: '/', started: '' }));
    chownSync(theirs, NOBODY, NOBODY);
    process.env.VECBENCH_SERVER_REGISTRY = theirs;
    assert.throws(() => reapOrphans(), refused(/belongs to uid 65534, not to you/));
    assert.throws(
      () => spawnServer({ name: 'sleeper', command: '/bin/sleep', args: ['30'], dataDir: dir, logFile: join(dir, 'sleeper.log') }),
      refused(/their-registry belongs to uid 65534/),
    );
    assert.deepEqual(readdirSync(theirs), ['1.json']);

    // A link to a victim directory full of *.json files.
    const victims = join(dir, 'victims');
    mkdirSync(victims);
    writeFileSync(join(victims, 'precious.json'), '{}');
    const link = join(dir, 'link-registry');
    symlinkSync(victims, link);
    process.env.VECBENCH_SERVER_REGISTRY = link;
    assert.throws(() => reapOrphans(), refused(/link-registry is a symbolic link/));
    assert.deepEqual(readdirSync(victims), ['precious.json']);
  });

  test('the server registry of our own: a planted link in place of a pid file is never written through', () => {
    const mine = join(dir, 'my-registry');
    process.env.VECBENCH_SERVER_REGISTRY = mine;
    const target = join(dir, 'secret.txt');
    writeFileSync(target, 'secret', { mode: 0o600 });
    const server = spawnServer({ name: 'sleeper', command: '/bin/sleep', args: ['30'], dataDir: dir, logFile: join(dir, 'sleeper2.log') });
    try {
      // The pid file was created exclusively in a directory only we can write.
      const files = readdirSync(mine);
      assert.deepEqual(files, [`${server.pid}.json`]);
      // A link planted under a pid file's name is skipped by the reaper, never followed.
      symlinkSync(target, join(mine, '424242.json'));
      reapOrphans();
      assert.equal(readFileSync(target, 'utf8'), 'secret');
      assert.ok(existsSync(join(mine, `${server.pid}.json`)), 'the live server of a live runner is kept');
    } finally {
      server.killNow();
    }
  });

  test("the server data base: another user's directory is refused before anything in it is removed", () => {
    const base = join(dir, 'their-data');
    mkdirSync(base, { mode: 0o755 });
    mkdirSync(join(base, 'precious'));
    writeFileSync(join(base, 'precious.json'), JSON.stringify({ link: '/nowhere', runner: 999999, runnerStart: 0, created: '' }));
    chownSync(base, NOBODY, NOBODY);
    process.env.VECBENCH_SERVER_DATA = base;
    assert.throws(() => reapServerData(), refused(/is not a directory of yours that only you can write/));
    assert.ok(existsSync(join(base, 'precious')));
  });

  test('the CLI transpiles nothing at start: no tsx cache under its temporary directory', () => {
    const tmp = join(dir, 'cli-tmp');
    mkdirSync(tmp);
    const r = spawnSync(process.execPath, [BIN, '--help'], { env: { ...process.env, TMPDIR: tmp }, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(
      readdirSync(tmp).filter((f) => f.startsWith('tsx')),
      [],
    );
  });
});
