// The heartbeat of a step that reports no progress (an engine's index build): its elapsed time
// at every interval while it lasts, nothing after it ends. Waits for lines rather than for a
// fixed time, so a slow machine only makes it slower.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Heartbeat, Progress } from '../../src/util/progress.ts';

async function until(cond: () => boolean): Promise<void> {
  for (const start = Date.now(); !cond(); await sleep(10)) assert.ok(Date.now() - start < 20_000, 'the heartbeat never beat');
}

test('a heartbeat says what is under way and for how long, at each interval, and stops when the step ends', async () => {
  const lines: string[] = [];
  const beat = new Heartbeat('eng: building the index', 20, (l) => lines.push(l), false, false);
  beat.begin();
  beat.begin(); // a second begin does not start a second timer
  await until(() => lines.length >= 2);
  beat.end();
  const seen = lines.length;
  for (const l of lines) assert.match(l, /^eng: building the index: \d+\.\ds elapsed\n$/);
  await sleep(100);
  assert.equal(lines.length, seen, 'nothing after end()');
});

test('on a terminal the line is rewritten in place and cleared at the end; quiet says nothing', async () => {
  const lines: string[] = [];
  const beat = new Heartbeat('eng: building the index', 20, (l) => lines.push(l), true, false);
  beat.begin();
  await until(() => lines.length >= 2);
  beat.end();
  assert.ok(lines.slice(0, -1).every((l) => l.startsWith('\r\x1b[Keng: building the index: ')));
  assert.equal(lines.at(-1), '\r\x1b[K');
  const quiet: string[] = [];
  const silent = new Heartbeat('eng', 5, (l) => quiet.push(l), false, true);
  silent.begin();
  await sleep(50);
  silent.end();
  assert.deepEqual(quiet, []);
});

test("a step's own estimate of the time left is the ETA printed, not the share done extrapolated", (t) => {
  const lines: string[] = [];
  t.mock.method(process.stderr, 'write', (chunk: string) => {
    lines.push(String(chunk));
    return true;
  });
  // Round 1 of 70 done: extrapolating would say 69 times the elapsed time is left.
  const p = new Progress('timing, rounds', 70, false);
  const clock = p as unknown as { start: number; lastPrint: number };
  clock.start = performance.now() - 60_000;
  // Off a terminal, lines are spaced 10 s apart: each update here is the first for a while.
  clock.lastPrint = -Infinity;
  p.update(1, '', 300);
  clock.lastPrint = -Infinity;
  p.update(1);
  t.mock.restoreAll();
  assert.match(lines[0], /ETA 5m00s/);
  assert.match(lines[1], /ETA 1h/, 'without an estimate the share done is extrapolated');
});
