// The test driver behind `npm test` and `npm run test:quick`. Tests live in tiers named by what
// they cost (docs/design.md, "Tests"):
//   test/unit/     pure: no engine, no process, no server
//   test/engines/  one real engine (in process, or its server) per file
//   test/e2e/      the CLI, servers, the browser, fault injection
// Two files run at a time (one per core of the machines this is written for), but a file that
// measures or makes machine load, or asserts on timing it measures, says so in its first lines
// (`// vecbench-test: alone`, with the reason) and runs after the others, by itself.
// All of them run under node:test through tsx; the CLI and the processes it starts run the
// build in dist/, which this script makes first.
//
//   node scripts/test.mjs all      setup check, build, typecheck, lint, unit, engines, e2e
//   node scripts/test.mjs quick    build, unit, the contract suite over _template and exact,
//                                  and one end-to-end run (the loop after each change)
//   node scripts/test.mjs unit|engines|e2e [FILE...]   one tier (or some of its files)
//
// Each phase prints its time; at the end, the phases and the ten slowest test files.
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setupProblem } from './setup-stamp.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
process.chdir(root);

/** Timing of the runs the tests start: the fewest passes that still exercise every path. Tests
 * assert behaviour, never speed, so these settings change no verdict. */
const TEST_TIMING = 'min_passes=2,min_seconds=0,max_passes=4,queries=300,busy_cores=64,host_slow=0,cell_half_width=0';

const filesOf = (tier) =>
  readdirSync(path.join('test', tier))
    .filter((f) => f.endsWith('.test.ts'))
    .sort()
    .map((f) => path.join('test', tier, f));

/** Whether a test file asks to run by itself (the marker in its first 2 KiB). */
function runsAlone(file) {
  const fd = openSync(file, 'r');
  try {
    const head = Buffer.alloc(2048);
    const n = readSync(fd, head, 0, head.length, 0);
    return /^\/\/ vecbench-test: alone\b/m.test(head.subarray(0, n).toString('utf8'));
  } finally {
    closeSync(fd);
  }
}

/** A tier's files, two at a time, then those that run alone, one at a time. */
function tier(name) {
  const files = filesOf(name);
  return [
    { name, files: files.filter((f) => !runsAlone(f)), concurrency: 2 },
    { name: `${name}, alone`, files: files.filter(runsAlone), concurrency: 1 },
  ];
}

/** A tier is one or more node:test invocations: files, how many run at once, extra env. */
const TIERS = {
  unit: () => tier('unit'),
  engines: () => tier('engines'),
  e2e: () => tier('e2e'),
  quick: () => [
    ...TIERS.unit(),
    {
      name: 'contract (_template, exact)',
      files: ['test/engines/participant-contract.test.ts'],
      concurrency: 1,
      env: { VECBENCH_CONTRACT: '_template,exact' },
    },
    { name: 'end to end', files: ['test/e2e/cli.test.ts'], concurrency: 1 },
  ],
};

const phases = [];
const durations = [];
let failed = false;

function phase(name, fn) {
  const started = Date.now();
  process.stdout.write(`\ntest: ${name}...\n`);
  const ok = fn();
  const s = (Date.now() - started) / 1000;
  phases.push({ name, s, ok });
  process.stdout.write(`test: ${name} ${ok ? 'passed' : 'FAILED'} in ${s.toFixed(0)}s\n`);
  if (!ok) failed = true;
  return ok;
}

function sh(cmd, args, env = {}) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', env: { ...process.env, ...env } });
  return r.status === 0;
}

function runTests(step) {
  const dir = mkdtempSync(path.join(tmpdir(), 'vecbench-test-durations-'));
  const file = path.join(dir, 'durations.jsonl');
  try {
    const ok = sh(
      process.execPath,
      [
        '--import',
        'tsx',
        '--test',
        `--test-concurrency=${step.concurrency}`,
        '--test-reporter=spec',
        '--test-reporter-destination=stdout',
        '--test-reporter=./test/reporters/file-durations.mjs',
        `--test-reporter-destination=${file}`,
        ...step.files,
      ],
      { VECBENCH_TIMING: TEST_TIMING, ...step.env },
    );
    try {
      for (const line of readFileSync(file, 'utf8').split('\n').filter(Boolean)) durations.push(JSON.parse(line));
    } catch {
      // No durations when the run died early; its failure is reported by the exit code.
    }
    return ok;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function summary() {
  process.stdout.write('\ntest: phases\n');
  for (const p of phases) process.stdout.write(`  ${p.ok ? 'ok  ' : 'FAIL'} ${p.s.toFixed(0).padStart(6)}s  ${p.name}\n`);
  const total = phases.reduce((a, p) => a + p.s, 0);
  process.stdout.write(`  total ${total.toFixed(0)}s\n`);
  if (durations.length > 0) {
    process.stdout.write('test: the ten slowest test files (summed duration of their tests)\n');
    for (const d of [...durations].sort((a, b) => b.ms - a.ms).slice(0, 10)) {
      process.stdout.write(`  ${(d.ms / 1000).toFixed(1).padStart(7)}s  ${path.relative(root, d.file)}${d.fail > 0 ? ` (${d.fail} failed)` : ''}\n`);
    }
  }
}

const [what = 'all', ...only] = process.argv.slice(2);
if (what !== 'all' && !(what in TIERS)) {
  process.stderr.write(
    `test: unknown tier "${what}"; use all, quick, ${Object.keys(TIERS)
      .filter((t) => t !== 'quick')
      .join(', ')}\n`,
  );
  process.exit(2);
}

if (what === 'all') {
  // What the suite needs beyond npm (apt packages, the servers' builds): as root the setup
  // runs here when it is missing or changed; without root one line says what to run.
  const problem = setupProblem();
  if (problem !== null) {
    if (process.getuid?.() !== 0) {
      process.stderr.write(`test: ${problem}: run \`sudo npm run setup\`, then npm test again\n`);
      process.exit(1);
    }
    // The native addons are built again after it: npm ci built them before the libraries the
    // setup installs (OpenBLAS, faiss) were there.
    if (!phase(`setup (${problem})`, () => sh('bash', ['scripts/setup.sh']) && sh(process.execPath, ['scripts/build-native.mjs']))) {
      summary();
      process.exit(1);
    }
  }
}
if (!phase('build', () => sh(process.execPath, ['scripts/build.mjs']))) {
  summary();
  process.exit(1);
}
if (what === 'all') {
  phase('typecheck', () => sh('npx', ['tsc', '--noEmit', '-p', '.']));
  phase('lint', () => sh('npm', ['run', '--silent', 'lint']));
}
const steps = what === 'all' ? [...TIERS.unit(), ...TIERS.engines(), ...TIERS.e2e()] : TIERS[what]();
for (const step of steps) {
  const files = only.length > 0 ? step.files.filter((f) => only.some((o) => f.endsWith(o))) : step.files;
  if (files.length === 0) continue;
  phase(`tests: ${step.name} (${files.length} file${files.length === 1 ? '' : 's'})`, () => runTests({ ...step, files }));
}
summary();
process.exit(failed ? 1 : 0);
