// The machine-load meter (src/runner/machine-load.ts) against real CPU hogs. Other engineers'
// processes share this machine, so no check expects a quiet one: each compares the meter with
// the hogs' own /proc counters over the same interval, or several meters read over one interval,
// so background load (even a core kept busy the whole time) lands on both sides alike.
// vecbench-test: alone (it measures other processes' CPU use and makes its own hogs).
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test, type TestContext } from 'node:test';
import { processCpuSeconds } from '../../src/runner/cpu.ts';
import { processTree } from '../../src/runner/resources.ts';
import {
  BUSY_OTHER_CORES,
  BUSY_RULE,
  BUSY_STEAL,
  MachineLoadMeter,
  busyWarning,
  checkQuiet,
  isBusy,
  ownCpuSeconds,
  readCpuTotals,
  type LoadSample,
} from '../../src/runner/machine-load.ts';

const HOG_MARK = 'vecbench-machine-load-hog';
// Spins for 15 s at most, so a hog outlives the test by little even if the test is killed.
const HOG_SCRIPT = `/* ${HOG_MARK} */ const end = Date.now() + 15000; while (Date.now() < end) {}`;
const CPUS = readFileSync('/proc/stat', 'utf8')
  .split('\n')
  .filter((l) => /^cpu\d+ /.test(l)).length;
const self = () => [process.pid];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function measure(ownRoots: () => number[], ms = 1000): Promise<LoadSample> {
  const meter = new MachineLoadMeter(ownRoots);
  meter.start();
  await sleep(ms);
  return meter.stop();
}

/** Waits until the hog has used `seconds` of CPU: past node's start-up and spinning. */
async function untilSpinning(pid: number, seconds = 0.2): Promise<void> {
  const deadline = Date.now() + 10_000;
  while ((processCpuSeconds(pid) ?? 0) < seconds) {
    if (Date.now() > deadline) throw new Error(`hog ${pid} did not start spinning`);
    await sleep(20);
  }
}

/** Cores a process used over a window, read from its own /proc counters (the yardstick the
 * meter is checked against). `children`: its waited-for children's time instead of its own. */
function coresOver(pid: number, children = false): () => number {
  const read = () => {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (children ? Number(f[13]) + Number(f[14]) : Number(f[11]) + Number(f[12])) / TICKS;
  };
  const t0 = performance.now();
  const c0 = read();
  return () => (read() - c0) / ((performance.now() - t0) / 1000);
}
const TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** Kills an external hog by pid, after checking the pid still is that hog and not a process
 * that reused the number. */
function killExternal(pid: number): void {
  try {
    if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(HOG_MARK)) process.kill(pid, 'SIGKILL');
  } catch {
    /* already gone */
  }
}

/** A hog that is not our descendant: sh starts it in the background and exits, so it is
 * reparented away from us, like a daemonised server. Killed when the test ends. */
async function externalHog(t: TestContext): Promise<number> {
  const sh = spawn('sh', ['-c', '"$0" -e "$1" >/dev/null 2>&1 & echo $!', process.execPath, HOG_SCRIPT], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  sh.stdout!.on('data', (d) => (out += d));
  await new Promise((resolve) => sh.on('close', resolve));
  const pid = Number(out.trim());
  assert.ok(Number.isInteger(pid) && pid > 0, `no hog pid from sh: ${JSON.stringify(out)}`);
  t.after(() => killExternal(pid));
  assert.ok(!processTree(process.pid).includes(pid), 'the external hog is still our descendant');
  await untilSpinning(pid);
  return pid;
}

/** A hog that is our child, counted as ours. Killed when the test ends. */
async function ownHog(t: TestContext): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['-e', HOG_SCRIPT], { stdio: 'ignore' });
  t.after(() => child.kill('SIGKILL'));
  await untilSpinning(child.pid!);
  return child;
}

test('readCpuTotals: the counters only grow, and the total grows by CPUs x wall time', async () => {
  const a = readCpuTotals();
  const t0 = performance.now();
  await sleep(500);
  const b = readCpuTotals();
  const wall = (performance.now() - t0) / 1000;
  assert.ok(a && b, '/proc/stat unreadable');
  for (const s of [a, b]) assert.ok(s.stealS <= s.busyS && s.busyS <= s.totalS, JSON.stringify(s));
  assert.ok(b.busyS >= a.busyS && b.stealS >= a.stealS && b.totalS > a.totalS, `${JSON.stringify(a)} -> ${JSON.stringify(b)}`);
  // Seconds, not ticks: every CPU adds about one second per second.
  const rate = (b.totalS - a.totalS) / wall;
  assert.ok(rate > CPUS * 0.7 && rate < CPUS * 1.3, `total grew ${rate.toFixed(2)} s/s on ${CPUS} CPUs`);
});

test('the rule: a quarter of a core of others, or 5% steal, is busy; unknown is not', () => {
  assert.equal(isBusy({ otherCores: BUSY_OTHER_CORES - 0.01, steal: 0 }), false);
  assert.equal(isBusy({ otherCores: BUSY_OTHER_CORES + 0.01, steal: 0 }), true);
  assert.equal(isBusy({ otherCores: 0, steal: BUSY_STEAL + 0.01 }), true);
  assert.equal(isBusy({ otherCores: 0, steal: BUSY_STEAL - 0.01 }), false);
  assert.equal(isBusy({ otherCores: null, steal: null }), false);
  assert.match(BUSY_RULE, /0\.25 of a core/);
  assert.match(BUSY_RULE, /5%/);
  assert.equal(busyWarning({ wallS: 1, otherCores: 0.1, steal: 0, top: [{ pid: 42, command: 'node', cores: 0.1 }], shortLivedCores: 0 }), null);
  assert.equal(
    busyWarning({ wallS: 1, otherCores: 1.02, steal: 0.08, top: [{ pid: 42, command: 'node', cores: 0.98 }], shortLivedCores: 0.04 }),
    'the machine is busy: other processes use 1.02 cores (node [pid 42] 0.98); the hypervisor steals 8.0% of the CPU time',
  );
  assert.equal(
    busyWarning({ wallS: 1, otherCores: 0.9, steal: 0, top: [{ pid: 42, command: 'sh', cores: 0.1 }], shortLivedCores: 0.8 }),
    'the machine is busy: other processes use 0.90 cores (sh [pid 42] 0.10, short-lived processes 0.80)',
  );
});

test('an external hog counts in full in otherCores and makes the machine busy', async (t) => {
  const pid = await externalHog(t);
  const hog = coresOver(pid);
  const busy = await measure(self);
  const hogCores = hog();
  killExternal(pid);
  assert.ok(busy.otherCores !== null, 'unreadable');
  // A hog that got no CPU proves nothing; on a saturated machine it still gets its share.
  assert.ok(hogCores > 0.3, `the hog only got ${hogCores.toFixed(2)} cores`);
  // Every tick the hog spent is another's: the meter sees at least that (other load adds to it).
  assert.ok(busy.otherCores >= hogCores - 0.1, `otherCores ${busy.otherCores.toFixed(2)}, the hog alone used ${hogCores.toFixed(2)}`);
  assert.ok(isBusy(busy), JSON.stringify(busy));
});

test('a hog that is our child counts as ours, an external one does not', async (t) => {
  const pid = await externalHog(t);
  const child = await ownHog(t);
  const external = coresOver(pid);
  const own = coresOver(child.pid!);
  const ours = new MachineLoadMeter(self);
  const nobodys = new MachineLoadMeter(() => []);
  for (const m of [ours, nobodys]) m.start();
  await sleep(1000);
  const [a, b] = [ours, nobodys].map((m) => m.stop());
  const [externalCores, ownCores] = [external(), own()];
  killExternal(pid);
  child.kill('SIGKILL');
  assert.ok(a.otherCores !== null && b.otherCores !== null, 'unreadable');
  assert.ok(externalCores > 0.3 && ownCores > 0.3, `the hogs only got ${externalCores.toFixed(2)} and ${ownCores.toFixed(2)} cores`);
  assert.ok(a.otherCores >= externalCores - 0.1, `otherCores ${a.otherCores.toFixed(2)}, the external hog used ${externalCores.toFixed(2)}`);
  // A meter that owns nothing sees our tree too: the difference is our child hog (this process
  // sleeps meanwhile), whatever else the machine runs.
  const ourTree = b.otherCores - a.otherCores;
  assert.ok(Math.abs(ourTree - ownCores) < 0.15, `our tree counted ${ourTree.toFixed(2)} cores, our child hog used ${ownCores.toFixed(2)}`);
});

test('in one interval: our child is ours already, an outside process only once named a root', async (t) => {
  // One interval for every meter, so the background load is the same for all and cancels:
  // this holds even when other processes saturate the machine.
  const external = await externalHog(t);
  const child = await ownHog(t);
  const plain = new MachineLoadMeter(self);
  const withExternal = new MachineLoadMeter(() => [process.pid, external]);
  const withChild = new MachineLoadMeter(() => [process.pid, child.pid!]);
  const external0 = processCpuSeconds(external)!;
  const child0 = processCpuSeconds(child.pid!)!;
  for (const m of [plain, withExternal, withChild]) m.start();
  await sleep(1000);
  const [a, b, c] = [plain, withExternal, withChild].map((m) => m.stop());
  const externalCores = (processCpuSeconds(external)! - external0) / a.wallS;
  const childCores = (processCpuSeconds(child.pid!)! - child0) / a.wallS;
  assert.ok(a.otherCores !== null && b.otherCores !== null && c.otherCores !== null, 'unreadable');
  assert.ok(externalCores > 0.2 && childCores > 0.2, `the hogs only got ${externalCores.toFixed(2)} and ${childCores.toFixed(2)} cores`);
  // Naming the daemonised process a root moves exactly its CPU from "other" to "ours".
  const dropped = a.otherCores - b.otherCores;
  assert.ok(Math.abs(dropped - externalCores) < 0.1, `otherCores dropped by ${dropped.toFixed(2)}, the external hog used ${externalCores.toFixed(2)}`);
  // Naming our own child changes nothing: it was ours already (else it would drop by childCores).
  assert.ok(
    Math.abs(a.otherCores - c.otherCores) < 0.1,
    `otherCores ${a.otherCores.toFixed(2)} vs ${c.otherCores.toFixed(2)} with the child named, which used ${childCores.toFixed(2)}`,
  );
});

test('overlapping roots count each process once', async (t) => {
  const child = await ownHog(t);
  await untilSpinning(child.pid!, 0.4);
  const hogAlone = ownCpuSeconds([child.pid!])!;
  const before = ownCpuSeconds(self())!;
  const both = ownCpuSeconds([process.pid, child.pid!])!;
  const reversed = ownCpuSeconds([child.pid!, process.pid])!;
  const after = ownCpuSeconds(self())!;
  assert.ok(hogAlone >= 0.3, `the hog used ${hogAlone} s`);
  // The reads are a few ms apart: a double-counted hog would add its 0.4 s.
  for (const v of [both, reversed]) assert.ok(v >= before - 0.05 && v <= after + 0.05, `${before} <= ${v} <= ${after}`);
});

test('checkQuiet names the external hog and busyWarning mentions it', async (t) => {
  const pid = await externalHog(t);
  const hog = coresOver(pid);
  const result = await checkQuiet(1000, self);
  const hogCores = hog();
  killExternal(pid);
  assert.ok(result.top.length <= 3);
  assert.ok(result.shortLivedCores !== null && result.shortLivedCores <= result.otherCores!);
  assert.ok(hogCores > 0.3, `the hog only got ${hogCores.toFixed(2)} cores`);
  const listed = result.top.find((p) => p.pid === pid);
  // The list is the three busiest others: the hog is on it unless three others each used more.
  if (!listed) {
    assert.equal(result.top.length, 3, `hog ${pid} (${hogCores.toFixed(2)} cores) not in ${JSON.stringify(result.top)}`);
    for (const p of result.top) assert.ok(p.cores >= hogCores - 0.05, `${JSON.stringify(result.top)} listed before the hog at ${hogCores.toFixed(2)}`);
    return;
  }
  assert.equal(listed.command, 'node');
  assert.ok(Math.abs(listed.cores - hogCores) < 0.1, `listed at ${listed.cores.toFixed(2)} cores, the hog's counters say ${hogCores.toFixed(2)}`);
  const line = busyWarning(result);
  assert.ok(line?.startsWith('the machine is busy: other processes use ') && line.includes(`[pid ${pid}]`), String(line));
});

test('checkQuiet counts commands that ran and exited during the check as short-lived', async (t) => {
  // A detached shell hashing 20 MB over and over: each md5sum lives a few tens of ms. The shell
  // waits for each, so its children's counters (cutime, cstime) are the yardstick.
  const script = `: ${HOG_MARK}; end=$(($(date +%s) + 10)); while [ $(date +%s) -lt $end ]; do head -c 20000000 /dev/zero | md5sum; done`;
  const sh = spawn('sh', ['-c', 'sh -c "$0" >/dev/null 2>&1 & echo $!', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  sh.stdout!.on('data', (d) => (out += d));
  await new Promise((resolve) => sh.on('close', resolve));
  const pid = Number(out.trim());
  t.after(() => killExternal(pid));
  await sleep(200);
  const children = coresOver(pid, true);
  const result = await checkQuiet(1000, self);
  const childCores = children();
  killExternal(pid);
  assert.ok(result.shortLivedCores !== null && result.otherCores !== null, 'unreadable');
  assert.ok(childCores > 0.2, `the short-lived commands only got ${childCores.toFixed(2)} cores`);
  // At each end one pipeline is in flight (tens of ms: at most ~0.1 core over the second): the
  // one alive at the end is named, the one alive at the start is reaped with its earlier time.
  assert.ok(
    result.shortLivedCores >= childCores - 0.15,
    `shortLivedCores ${result.shortLivedCores.toFixed(2)}, the commands used ${childCores.toFixed(2)}; top ${JSON.stringify(result.top)}`,
  );
});

test('total() weighs the passes by their wall time', async (t) => {
  await externalHog(t);
  const meter = new MachineLoadMeter(self);
  assert.throws(() => meter.stop(), /without start/);
  const passes: LoadSample[] = [];
  for (const ms of [300, 700]) {
    meter.start();
    await sleep(ms);
    passes.push(meter.stop());
  }
  const total = meter.total();
  assert.ok(
    passes.every((p) => p.otherCores !== null && p.otherCores > 0),
    JSON.stringify(passes),
  );
  const wall = passes[0].wallS + passes[1].wallS;
  assert.ok(Math.abs(total.wallS - wall) < 1e-9);
  const weighted = (passes[0].otherCores! * passes[0].wallS + passes[1].otherCores! * passes[1].wallS) / wall;
  assert.ok(Math.abs(total.otherCores! - weighted) < 1e-9, `total ${total.otherCores}, weighted ${weighted}`);
});

test('a start/stop pair is cheap', () => {
  // CPU time this process spends, not wall time: another process on the machine cannot make
  // the pair look expensive (no test asserts on the machine being quiet).
  const meter = new MachineLoadMeter(self);
  const t0 = process.cpuUsage();
  for (let i = 0; i < 10; i++) {
    meter.start();
    meter.stop();
  }
  const used = process.cpuUsage(t0);
  const perPair = (used.user + used.system) / 1000 / 10;
  assert.ok(perPair < 50, `${perPair.toFixed(1)} ms of CPU per pair`);
});
