// The one setup step (scripts/setup.sh, `npm run setup`) and what a machine without it gets:
// without root the script prints one line naming `sudo npm run setup`; a server participant's
// test and the browser test fail (never skip) with one line naming it, without a stack trace.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SETUP_LINE = /run `sudo npm run setup`/;
const dir = mkdtempSync(join(tmpdir(), 'vecbench-setup-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('npm run setup is scripts/setup.sh, and CI runs it before npm ci and npm test', () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  assert.equal(pkg.scripts.setup, 'bash scripts/setup.sh');
  const steps = readFileSync(join(ROOT, '.ci/run'), 'utf8')
    .split('\n')
    .filter((l) => /^npm /.test(l));
  assert.deepEqual(steps, ['npm run setup', 'npm ci --no-audit --no-fund', 'npm test']);
});

test('without root, setup prints one line saying what to run and exits non-zero, installing nothing', () => {
  // A copy nobody can read: the clone itself may sit in /root (0700), closed to that user.
  const clone = join(dir, 'clone');
  mkdirSync(join(clone, 'scripts'), { recursive: true });
  copyFileSync(join(ROOT, 'scripts/setup.sh'), join(clone, 'scripts/setup.sh'));
  chmodSync(dir, 0o755);
  // nobody (65534): an ordinary user, as a developer's shell would be.
  const r = spawnSync('/usr/bin/setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', '--', 'bash', join(clone, 'scripts/setup.sh')], {
    encoding: 'utf8',
    cwd: clone,
  });
  assert.notEqual(r.status, 0);
  const lines = (r.stdout + r.stderr).trimEnd().split('\n');
  assert.equal(lines.length, 1, `one line, got:\n${r.stdout}${r.stderr}`);
  assert.match(lines[0], SETUP_LINE);
});

/** Runs one test file as npm test does (spec reporter, so failures print as a reader sees them). */
function runTestFile(file: string, env: Record<string, string>) {
  // Without NODE_TEST_CONTEXT the child is a test run of its own, not a subtest of this one.
  const base = { ...process.env };
  delete base.NODE_TEST_CONTEXT;
  return spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', join(ROOT, 'test', file)], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...base, ...env },
    timeout: 300_000,
  });
}

function assertFailsNamingSetup(r: ReturnType<typeof runTestFile>) {
  const text = r.stdout + r.stderr;
  assert.notEqual(r.status, 0, 'the test file fails');
  assert.match(text, SETUP_LINE);
  assert.doesNotMatch(text, /^\s+at /m, 'no stack trace');
  assert.doesNotMatch(text, /^. skipped [1-9]/m, 'nothing skipped');
}

test("a server participant's test on a machine without its server fails with one line naming setup", () => {
  // An empty cache is a machine where participants/redis/provision.sh never ran.
  const r = runTestFile('engines/participant-redis.test.ts', { VECBENCH_CACHE: join(dir, 'empty-cache') });
  assertFailsNamingSetup(r);
  assert.match(r.stdout + r.stderr, /Redis 8 is not built/);
});

test('the browser test without chromium fails with one line naming setup', () => {
  const r = runTestFile('e2e/browser.test.ts', { VECBENCH_CHROMIUM: join(dir, 'no-chromium') });
  assertFailsNamingSetup(r);
  assert.match(r.stdout + r.stderr, /chromium not found/);
});
