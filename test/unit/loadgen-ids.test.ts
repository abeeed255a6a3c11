// Issue 15 item 4: the load generator stores engine ids through the runner's one range check,
// so an id at or past 2^32 (which an Int32Array would wrap onto a real id) is unknown.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { nowMs } from '../../src/loadgen/clock.ts';
import { closedLoop, openLoop, OK, type DriveResult } from '../../src/loadgen/driver.ts';
import { scoreQuery } from '../../src/metrics/recall.ts';

const n = 20;
const rows = 100;
/** An engine whose every answer is the right row plus 2^32: right only after wrapping. */
const wrapping = (i: number) => [i + 2 ** 32];

/** Scores request i's stored answer against its true top-1, row i. */
function scores(r: DriveResult) {
  return Array.from(r.indices, (i, j) =>
    scoreQuery({
      returned: r.ids.subarray(r.offsets[j], r.offsets[j + 1]),
      k: 1,
      trueIds: Int32Array.of(i),
      trueDists: [0],
      matches: rows,
      isKnownId: (id) => id >= 0 && id < rows,
      passes: () => true,
      distanceOf: (id) => (id === i ? 0 : 1),
    }),
  );
}

function checkUnknown(r: DriveResult): void {
  assert.equal(r.indices.length, n);
  assert.ok(r.status.every((s) => s === OK));
  for (const s of scores(r)) {
    assert.equal(s.unknown, 1, 'the id past 2^32 is unknown');
    assert.equal(s.tieAware, 0, 'and never credited');
  }
}

test('closed loop: an engine returning id + 2^32 gets unknown ids, not recall', async () => {
  checkUnknown(await closedLoop(wrapping, { inFlight: 2, timeoutMs: Infinity, n }));
});

test('open loop: an engine returning id + 2^32 gets unknown ids, not recall', async () => {
  const start = nowMs() + 5;
  checkUnknown(
    await openLoop(wrapping, {
      indices: Int32Array.from({ length: n }, (_, i) => i),
      intendedMs: Float64Array.from({ length: n }, (_, i) => i),
      startAtMs: start,
      maxInFlight: 2,
      timeoutMs: Infinity,
    }),
  );
});

test('ids in the int32 range are stored as returned', async () => {
  const r = await closedLoop((i) => [i], { inFlight: 1, timeoutMs: Infinity, n });
  for (const s of scores(r)) assert.equal(s.tieAware, 1);
});
