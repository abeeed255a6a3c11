// The host-speed probe (src/runner/host-speed.ts) against a deliberately loaded machine: a busy
// loop on every core must make the probe read as slowed past the default limit.
// vecbench-test: alone (it loads every core and measures the slowdown).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import test from 'node:test';
import { HOST_SLOW, WorkerHostSpeed } from '../../src/runner/host-speed.ts';
import { envDefaults } from '../../src/runner/timing-defaults.ts';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

test('the host-speed probe reads a machine whose cores are all busy as slowed', async () => {
  const meter = new WorkerHostSpeed();
  // Quiet probes first: the fastest of them is the run's reference.
  for (let i = 0; i < 8; i++) await meter.waitForSpeed(0);
  const hogs = Array.from({ length: availableParallelism() }, () => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
  try {
    await new Promise((r) => setTimeout(r, 300));
    const slowed: number[] = [];
    for (let i = 0; i < 5; i++) slowed.push((await meter.waitForSpeed(0)).slowdown);
    // Sharing each core with a busy loop halves the probe's share of it: about x2.
    assert.ok(median(slowed) > HOST_SLOW, `slowdowns under load: ${slowed.map((x) => x.toFixed(2)).join(' ')}`);
  } finally {
    for (const h of hogs) h.kill('SIGKILL');
  }
  // sample() reuses a fresh probe rather than probing after every short round.
  const a = await meter.sample();
  const b = await meter.sample();
  assert.equal(a.ms, b.ms);
});

test('host_slow is a VECBENCH_TIMING name; the probe is off unless asked for', () => {
  assert.equal(envDefaults('host_slow=0').hostSlow, 0);
  assert.equal(envDefaults('host_slow=1.5').hostSlow, 1.5);
  assert.equal(envDefaults('').hostSlow, 0, 'off without VECBENCH_TIMING or --host-slow');
  assert.throws(() => envDefaults('host_slo=1'), /unknown name host_slo; the names are .*host_slow/);
});
