import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { adjacentKnobs, grainsOf, leads, paretoFrontier, readCell, type Better, type CellStatus, type CurvePoint } from '../../src/metrics/frontier.ts';
import { CELL_CASES } from '../helpers/cell-cases.ts';

function close(actual: number | null, expected: number, what: string): void {
  assert.ok(actual !== null, `${what}: expected ${expected}, got null`);
  const rel = Math.abs(actual - expected) / Math.abs(expected);
  assert.ok(rel <= 1e-9, `${what}: expected ${expected}, got ${actual}`);
}

function p(recall: number, value: number, ladderIndex = 0, knobs: CurvePoint['knobs'] = { ef: 1000 + ladderIndex * 7 }): CurvePoint {
  return { recall, value, knobs, ladderIndex };
}

describe('readCell: short answers and low-recall queries beside the cell', () => {
  const sp = (recall: number, value: number, shortShare: number, lowRecallShare: number, i: number): CurvePoint => ({
    ...p(recall, value, i),
    shares: { short_share: shortShare, low_recall_share: lowRecallShare },
  });

  test('a cell read at a point carries its shares; an interpolated one interpolates them', () => {
    const at = readCell([sp(0.9, 1000, 0.1, 0.2, 0), sp(0.95, 800, 0.05, 0.1, 1)], 0.95, 'higher');
    assert.equal(at.status, 'point');
    assert.equal(at.shares.short_share, 0.05);
    assert.equal(at.shares.low_recall_share, 0.1);
    const mid = readCell([sp(0.94, 1000, 0.1, 0.2, 0), sp(0.96, 800, 0.05, 0.1, 1)], 0.95, 'higher');
    assert.equal(mid.status, 'interpolated');
    close(mid.shares.short_share, 0.075, 'short share');
    close(mid.shares.low_recall_share, 0.15, 'low-recall share');
  });

  test('a collapsed cell carries the shares of its highest-recall point', () => {
    const c = readCell([sp(0.1, 5000, 0.9, 1, 0), sp(0.4, 900, 0.6, 0.7, 1)], 0.9, 'higher');
    assert.equal(c.status, 'collapsed');
    assert.equal(c.value, null);
    assert.equal(c.shares.short_share, 0.6);
    assert.equal(c.shares.low_recall_share, 0.7);
  });

  test('points without shares give null shares', () => {
    const c = readCell([p(0.95, 800)], 0.95, 'higher');
    assert.equal(c.shares.short_share, undefined);
    assert.equal(c.shares.low_recall_share, undefined);
  });
  test('bytes read from storage per query are carried like the shares: at a point, interpolated, or from the best point', () => {
    const rp = (recall: number, value: number, readBytes: number, i: number): CurvePoint => ({ ...p(recall, value, i), readBytes });
    const MiB = 2 ** 20;
    assert.equal(readCell([rp(0.9, 1000, 2 * MiB, 0), rp(0.95, 800, 8 * MiB, 1)], 0.95, 'higher').readBytes, 8 * MiB);
    const mid = readCell([rp(0.94, 1000, 2 * MiB, 0), rp(0.96, 800, 6 * MiB, 1)], 0.95, 'higher');
    assert.equal(mid.status, 'interpolated');
    close(mid.readBytes, 4 * MiB, 'bytes read');
    assert.equal(readCell([rp(0.3, 5000, 3 * MiB, 0), rp(0.4, 900, 5 * MiB, 1)], 0.9, 'higher').readBytes, 5 * MiB);
    // In RAM (no bytes measured) a cell reads none, and one side without them gives none.
    assert.equal(readCell([p(0.95, 800)], 0.95, 'higher').readBytes, null);
    assert.equal(readCell([p(0.94, 1000, 0), rp(0.96, 800, 6 * MiB, 1)], 0.95, 'higher').readBytes, null);
  });
});

describe('readCell: the shared cell-case table', () => {
  for (const c of CELL_CASES) {
    test(c.name, () => {
      const before = JSON.stringify(c.points);
      const cell = readCell(c.points, c.target, c.better);
      assert.equal(cell.status, c.expect.status);
      if (c.expect.value === undefined) assert.equal(cell.value, null);
      else close(cell.value, c.expect.value, 'value');
      if (c.expect.maxRecall === undefined) assert.equal(cell.maxRecall, null);
      else assert.equal(cell.maxRecall, c.expect.maxRecall);
      // the input is not modified
      assert.equal(JSON.stringify(c.points), before);
      // the order of the measured points does not matter
      const reversed = readCell([...c.points].reverse(), c.target, c.better);
      assert.equal(reversed.status, cell.status);
      assert.equal(reversed.value, cell.value);
      assert.equal(reversed.maxRecall, cell.maxRecall);
    });
  }

  test('the table covers every status readCell produces, in both directions', () => {
    const produced: CellStatus[] = ['point', 'interpolated', 'above', 'collapsed', 'not_reached', 'bracket_too_wide', 'none'];
    for (const better of ['higher', 'lower'] as Better[]) {
      for (const status of produced) {
        assert.ok(
          CELL_CASES.some((c) => c.better === better && c.expect.status === status),
          `no ${better} case with status ${status}`,
        );
      }
      assert.ok(
        CELL_CASES.some((c) => c.better === better && c.expect.status === 'interpolated' && c.name.includes('adjacent')),
        `no ${better} adjacent-knob case`,
      );
    }
  });
});

describe('readCell: where the value was read from', () => {
  test('interpolated cells name the two bracketing frontier points', () => {
    const lo = p(0.94, 800, 1);
    const dominated = p(0.945, 100, 2);
    const hi = p(0.96, 200, 3);
    const cell = readCell([hi, dominated, lo], 0.95, 'higher');
    assert.equal(cell.status, 'interpolated');
    assert.deepEqual(cell.from, [lo, hi]);
    close(cell.value, 400, 'value');
  });

  test('point and above cells name their one point; others name none', () => {
    const a = p(0.95, 500, 1);
    const b = p(0.99, 100, 2);
    assert.deepEqual(readCell([a, b], 0.95, 'higher').from, [a]);
    assert.deepEqual(readCell([a, b], 0.9, 'higher').from, [a]);
    assert.equal(readCell([a, b], 0.999, 'higher').from, undefined);
    assert.equal(readCell([p(0.9, 1000, 1), p(0.97, 200, 5)], 0.95, 'higher').from, undefined);
    assert.equal(readCell([], 0.95, 'higher').from, undefined);
  });

  test('a non-finite target is refused', () => {
    assert.throws(() => readCell([p(0.9, 1)], NaN, 'higher'), RangeError);
  });
});

describe('paretoFrontier', () => {
  test('keeps the non-dominated points sorted by recall ascending (QPS)', () => {
    const pts = [p(0.99, 100, 0), p(0.9, 1000, 1), p(0.95, 400, 2), p(0.93, 300, 3), p(0.8, 900, 4)];
    const f = paretoFrontier(pts, 'higher');
    assert.deepEqual(
      f.map((x) => [x.recall, x.value]),
      [
        [0.9, 1000],
        [0.95, 400],
        [0.99, 100],
      ],
    );
  });

  test('keeps the non-dominated points sorted by recall ascending (latency)', () => {
    const pts = [p(0.99, 9, 0), p(0.9, 1, 1), p(0.95, 3, 2), p(0.93, 4, 3), p(0.8, 2, 4)];
    const f = paretoFrontier(pts, 'lower');
    assert.deepEqual(
      f.map((x) => [x.recall, x.value]),
      [
        [0.9, 1],
        [0.95, 3],
        [0.99, 9],
      ],
    );
  });

  test('equal duplicates: one is kept (the lowest ladderIndex)', () => {
    const f = paretoFrontier([p(0.95, 500, 7), p(0.95, 500, 2), p(0.95, 500, 4)], 'higher');
    assert.equal(f.length, 1);
    assert.equal(f[0].ladderIndex, 2);
  });

  test('same recall: only the better value; same value: only the higher recall', () => {
    assert.deepEqual(
      paretoFrontier([p(0.95, 300, 0), p(0.95, 500, 1)], 'higher').map((x) => x.ladderIndex),
      [1],
    );
    assert.deepEqual(
      paretoFrontier([p(0.95, 300, 0), p(0.95, 500, 1)], 'lower').map((x) => x.ladderIndex),
      [0],
    );
    assert.deepEqual(
      paretoFrontier([p(0.9, 500, 0), p(0.95, 500, 1)], 'higher').map((x) => x.ladderIndex),
      [1],
    );
    assert.deepEqual(
      paretoFrontier([p(0.9, 500, 0), p(0.95, 500, 1)], 'lower').map((x) => x.ladderIndex),
      [1],
    );
  });

  test('a single point is its own frontier; none gives none', () => {
    const one = p(0.5, 10, 0);
    assert.deepEqual(paretoFrontier([one], 'higher'), [one]);
    assert.deepEqual(paretoFrontier([one], 'lower'), [one]);
    assert.deepEqual(paretoFrontier([], 'higher'), []);
  });

  test('unusable points are dropped', () => {
    const f = paretoFrontier([p(NaN, 10, 0), p(1.01, 10, 1), p(0.9, 0, 2), p(0.9, Infinity, 3), p(0.5, 1, 4)], 'higher');
    assert.deepEqual(
      f.map((x) => x.ladderIndex),
      [4],
    );
  });

  test('a point that increases on both axes dominates the rest in QPS but not in latency', () => {
    const pts = [p(0.9, 100, 0), p(0.95, 200, 1)];
    assert.deepEqual(
      paretoFrontier(pts, 'higher').map((x) => x.ladderIndex),
      [1],
    );
    assert.deepEqual(
      paretoFrontier(pts, 'lower').map((x) => x.ladderIndex),
      [0, 1],
    );
  });
});

describe('adjacentKnobs', () => {
  test('exactly one integer knob differing by exactly 1', () => {
    assert.equal(adjacentKnobs({ ef: 10 }, { ef: 11 }), true);
    assert.equal(adjacentKnobs({ ef: 11, m: 'x' }, { ef: 10, m: 'x' }), true);
    assert.equal(adjacentKnobs({ ef: 10 }, { ef: 10 }), false);
    assert.equal(adjacentKnobs({ ef: 10 }, { ef: 12 }), false);
    assert.equal(adjacentKnobs({ ef: 10, r: 1 }, { ef: 11, r: 2 }), false);
    assert.equal(adjacentKnobs({ ef: 0.5 }, { ef: 1.5 }), false);
    assert.equal(adjacentKnobs({ ef: '10' }, { ef: 11 }), false);
    assert.equal(adjacentKnobs({ ef: 10 }, { nprobes: 11 }), false);
    assert.equal(adjacentKnobs({ ef: 10 }, { ef: 11, r: 1 }), false);
    assert.equal(adjacentKnobs({}, {}), false);
  });

  test('a knob with a declared grain is adjacent at exactly one grain, float noise and all', () => {
    const grains = { k_factor: 0.1 };
    assert.equal(adjacentKnobs({ k_factor: 0.1 * 3, nprobe: 64 }, { k_factor: 0.4, nprobe: 64 }, grains), true);
    assert.equal(adjacentKnobs({ k_factor: 6.4 }, { k_factor: 6.3 }, grains), true);
    assert.equal(adjacentKnobs({ k_factor: 6.4 }, { k_factor: 6.6 }, grains), false);
    assert.equal(adjacentKnobs({ k_factor: 6.4 }, { k_factor: 6.3 }), false, 'without its grain, not integers: not adjacent');
    assert.equal(adjacentKnobs({ k_factor: 6 }, { k_factor: 7 }, grains), false, 'with a grain of 0.1, 6 and 7 have values between them');
    assert.equal(adjacentKnobs({ ef: 10 }, { ef: 11 }, grains), true, 'other knobs keep the integer rule');
  });

  test('grainsOf reads a stored calibration spec, and nothing from one without a step', () => {
    assert.deepEqual(grainsOf({ knob: ['k_factor', 'kf'], step: 0.1 }), { k_factor: 0.1, kf: 0.1 });
    assert.deepEqual(grainsOf({ knob: ['ef'] }), {});
    assert.deepEqual(grainsOf(undefined), {});
    assert.deepEqual(grainsOf({ knob: 'ef', step: 1 }), {});
    assert.deepEqual(grainsOf({ knob: ['ef'], step: -1 }), {});
  });

  test('readCell interpolates across a gap wider than 0.02 between values one grain apart, not two', () => {
    const at = (kf: number, recall: number, value: number, i: number) => p(recall, value, i, { k_factor: kf });
    const one = [at(6.3, 0.93, 100, 0), at(6.4, 0.96, 90, 1)];
    assert.equal(readCell(one, 0.95, 'higher').status, 'bracket_too_wide');
    assert.equal(readCell(one, 0.95, 'higher', { k_factor: 0.1 }).status, 'interpolated');
    const two = [at(6.2, 0.93, 100, 0), at(6.4, 0.96, 90, 1)];
    assert.equal(readCell(two, 0.95, 'higher', { k_factor: 0.1 }).status, 'bracket_too_wide');
  });
});

describe('leads', () => {
  test('higher is better: value / max', () => {
    assert.deepEqual(leads([100, 50, null, 25], 'higher'), [1, 0.5, null, 0.25]);
  });

  test('lower is better: value / min, the best is 1', () => {
    assert.deepEqual(leads([2, 4, null, 1], 'lower'), [2, 4, null, 1]);
  });

  test('all null or empty', () => {
    assert.deepEqual(leads([null, null], 'higher'), [null, null]);
    assert.deepEqual(leads([], 'lower'), []);
  });

  test('a single value leads itself', () => {
    assert.deepEqual(leads([null, 37], 'higher'), [null, 1]);
  });

  test('non-finite values are treated like null', () => {
    assert.deepEqual(leads([NaN, 10, 20], 'higher'), [null, 0.5, 1]);
  });
});
