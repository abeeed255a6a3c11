// Checks the SDK does for every adapter that needs them (src/adapters/kit.ts): the first row
// whose vector is not unit length, for engines that serve ip as another distance.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { firstNonUnitRow, type RowBatch } from '../../src/sdk/index.ts';

const batch = (rows: number[][]): RowBatch =>
  ({ ids: Int32Array.from(rows.map((_, i) => 100 + i)), vectors: Float32Array.from(rows.flat()) }) as unknown as RowBatch;

test('firstNonUnitRow names the first row off unit length and its norm; unit rows pass', () => {
  const s = Math.SQRT1_2;
  assert.equal(
    firstNonUnitRow(
      batch([
        [1, 0],
        [s, s],
        [0, -1],
      ]),
      2,
    ),
    null,
  );
  assert.deepEqual(
    firstNonUnitRow(
      batch([
        [1, 0],
        [3, 4],
        [0, 2],
      ]),
      2,
    ),
    { id: 101, norm: 5 },
  );
  // Within 1e-3 of 1 in the squared norm is unit (float rounding of a normalised vector).
  assert.equal(firstNonUnitRow(batch([[1.0004, 0]]), 2), null);
  assert.deepEqual(firstNonUnitRow(batch([[1.001, 0]]), 2)?.id, 100);
  assert.equal(firstNonUnitRow(batch([]), 2), null);
});
