import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { scoreQuery, summarize, type QueryScore, type ScoreQueryArgs } from '../../src/metrics/recall.ts';

// A toy world: ids 0..9 exist. Distances of every id to the query, chosen to be exact in
// float32 around the k-th true distance (0.5) so epsilon boundaries are sharp.
const DIST: Record<number, number> = {
  0: 0.125,
  1: 0.25,
  2: 0.5,
  3: 0.75,
  4: 1,
  5: 2,
  6: 3,
  7: 0.5, // ties id 2 at the 3rd true distance exactly
  8: 0.5 + 5e-7, // within 1e-6 of it
  9: 0.5 + 1e-5, // beyond 1e-6 but within 1e-3
};

/** exact top of the toy world, best first: 0, 1, 2 (tied with 7), 8, 9, 3, 4, 5, 6 */
const TRUE_IDS = Int32Array.from([0, 1, 2, 7, 8, 9, 3, 4, 5, 6]);
const TRUE_DISTS = Float32Array.from(Array.from(TRUE_IDS, (id) => DIST[id]));

function args(over: Partial<ScoreQueryArgs> & { returned: ArrayLike<number> }): ScoreQueryArgs {
  return {
    k: 3,
    trueIds: TRUE_IDS,
    trueDists: TRUE_DISTS,
    matches: 10,
    isKnownId: (id) => id >= 0 && id <= 9,
    passes: () => true,
    distanceOf: (id) => {
      if (!(id in DIST)) throw new Error(`distanceOf called for unknown id ${id}`);
      return DIST[id];
    },
    ...over,
  };
}

function recalls(s: QueryScore): [number, number, number] {
  return [s.strict, s.tieAware, s.threshold];
}

describe('scoreQuery: the three recalls', () => {
  test('the exact answer scores 1 everywhere', () => {
    const s = scoreQuery(args({ returned: [0, 1, 2] }));
    assert.deepEqual(s, {
      strict: 1,
      tieAware: 1,
      threshold: 1,
      returned: 3,
      short: false,
      unknown: 0,
      duplicates: 0,
      violations: 0,
      leaked: [],
    });
  });

  test('a far id is credited by none', () => {
    assert.deepEqual(recalls(scoreQuery(args({ returned: [0, 1, 5] }))), [2 / 3, 2 / 3, 2 / 3]);
  });

  test('a different id at the same distance as the k-th: tie-aware and threshold credit it, strict does not', () => {
    assert.deepEqual(recalls(scoreQuery(args({ returned: [0, 1, 7] }))), [2 / 3, 1, 1]);
  });

  test('an id within 1e-6 of the k-th distance: tie-aware credits it', () => {
    assert.deepEqual(recalls(scoreQuery(args({ returned: [0, 1, 8] }))), [2 / 3, 1, 1]);
  });

  test('an id 1e-5 beyond the k-th distance: threshold credits it, tie-aware does not', () => {
    assert.deepEqual(recalls(scoreQuery(args({ returned: [0, 1, 9] }))), [2 / 3, 2 / 3, 1]);
  });

  test('order within the first k does not matter', () => {
    assert.deepEqual(recalls(scoreQuery(args({ returned: [2, 0, 1] }))), [1, 1, 1]);
  });

  test('ground truth longer than k: only the first kt true ids and the kt-th distance count', () => {
    const s = scoreQuery(args({ k: 2, returned: [0, 2] }));
    // id 2 is the 3rd true id, at 0.5 > 0.25 (the 2nd true distance)
    assert.deepEqual(recalls(s), [0.5, 0.5, 0.5]);
  });

  test('a NaN recomputed distance is never credited', () => {
    const s = scoreQuery(args({ returned: [0, 1, 5], distanceOf: (id) => (id === 5 ? NaN : DIST[id]) }));
    assert.deepEqual(recalls(s), [2 / 3, 2 / 3, 2 / 3]);
  });

  test('accepts typed arrays of ids', () => {
    const s = scoreQuery(args({ returned: Int32Array.from([0, 7, 3]) }));
    assert.deepEqual(recalls(s), [1 / 3, 2 / 3, 2 / 3]);
  });

  test('tie-aware never exceeds 1 even if more ids pass the distance than kt', () => {
    // inconsistent inputs on purpose: matches says 1 row passes, but 3 known passing ids come back
    const s = scoreQuery(args({ matches: 1, returned: [0, 7, 8] }));
    assert.deepEqual(recalls(s), [1, 1, 1]);
  });
});

describe('scoreQuery: invalid ids', () => {
  test('unknown ids (not in the set, not integers) are counted and never credited', () => {
    // distanceOf would throw for 99 / 1.5 / NaN / -1: it must not even be asked
    const s = scoreQuery(args({ k: 6, returned: [0, 99, 1.5, NaN, -1, 1] }));
    assert.equal(s.unknown, 4);
    assert.equal(s.duplicates, 0);
    assert.equal(s.violations, 0);
    // kt = 6: truth is 0,1,2,7,8,9; only 0 and 1 are valid
    assert.deepEqual(recalls(s), [2 / 6, 2 / 6, 2 / 6]);
  });

  test('an unknown id at a tying distance is still not credited', () => {
    const s = scoreQuery(args({ returned: [0, 1, 42], isKnownId: (id) => id >= 0 && id <= 9, distanceOf: (id) => (id === 42 ? 0 : DIST[id]) }));
    assert.equal(s.unknown, 1);
    assert.deepEqual(recalls(s), [2 / 3, 2 / 3, 2 / 3]);
  });

  test('repeated unknown ids each count as unknown', () => {
    const s = scoreQuery(args({ returned: [42, 42, 0] }));
    assert.equal(s.unknown, 2);
    assert.equal(s.duplicates, 0);
  });

  test('duplicates are counted and credited once', () => {
    const s = scoreQuery(args({ returned: [0, 0, 0] }));
    assert.equal(s.duplicates, 2);
    assert.equal(s.short, false);
    assert.deepEqual(recalls(s), [1 / 3, 1 / 3, 1 / 3]);
  });

  test('a duplicated tie id is credited once by tie-aware', () => {
    const s = scoreQuery(args({ returned: [7, 7, 0] }));
    assert.equal(s.duplicates, 1);
    assert.deepEqual(recalls(s), [1 / 3, 2 / 3, 2 / 3]);
  });

  test('filter violations are counted and never credited, however close', () => {
    const even = (id: number) => id % 2 === 0;
    // filtered truth: 0, 2, 8, 4, 6 (odd ids fail)
    const trueIds = Int32Array.from([0, 2, 8, 4, 6]);
    const trueDists = Float32Array.from(Array.from(trueIds, (id) => DIST[id]));
    const s = scoreQuery(args({ returned: [0, 1, 2], passes: even, trueIds, trueDists, matches: 5 }));
    assert.equal(s.violations, 1);
    assert.equal(s.unknown, 0);
    // id 1 (distance 0.25) would pass every distance test; it is a violation
    assert.deepEqual(recalls(s), [2 / 3, 2 / 3, 2 / 3]);
  });

  test('a repeated violating id: one violation, then a duplicate', () => {
    const s = scoreQuery(args({ returned: [1, 1, 0], passes: (id) => id !== 1 }));
    assert.equal(s.violations, 1);
    assert.equal(s.duplicates, 1);
  });

  test('only the first k returned ids are looked at', () => {
    const s = scoreQuery(args({ returned: [5, 6, 3, 0, 1, 2, 99, 99] }));
    assert.deepEqual(recalls(s), [0, 0, 0]);
    assert.equal(s.unknown, 0);
    assert.equal(s.duplicates, 0);
    assert.equal(s.returned, 8);
    assert.equal(s.short, false);
  });
});

describe('scoreQuery: short results and small match counts', () => {
  test('fewer ids than k is short and scored against kt', () => {
    const s = scoreQuery(args({ returned: [0, 1] }));
    assert.equal(s.short, true);
    assert.equal(s.returned, 2);
    assert.deepEqual(recalls(s), [2 / 3, 2 / 3, 2 / 3]);
  });

  test('an empty answer scores 0 and is short', () => {
    const s = scoreQuery(args({ returned: [] }));
    assert.equal(s.short, true);
    assert.deepEqual(recalls(s), [0, 0, 0]);
  });

  test('matches < k: kt = matches, returning all matches is full recall and not short', () => {
    const passes = (id: number) => id === 0 || id === 2;
    const trueIds = Int32Array.from([0, 2, -1, -1]);
    const trueDists = Float32Array.from([DIST[0], DIST[2], Infinity, Infinity]);
    const base = { k: 4, matches: 2, passes, trueIds, trueDists };
    const full = scoreQuery(args({ ...base, returned: [2, 0] }));
    assert.deepEqual(recalls(full), [1, 1, 1]);
    assert.equal(full.short, false);

    const half = scoreQuery(args({ ...base, returned: [0] }));
    assert.deepEqual(recalls(half), [0.5, 0.5, 0.5]);
    assert.equal(half.short, true);

    const padded = scoreQuery(args({ ...base, returned: [0, 2, 4, 6] }));
    assert.deepEqual(recalls(padded), [1, 1, 1]);
    assert.equal(padded.violations, 2);
    assert.equal(padded.short, false);
  });

  test('kt = 0 (no matching rows, or k = 0): all recalls are 1', () => {
    const none = scoreQuery(args({ matches: 0, returned: [], passes: () => false, trueIds: new Int32Array(0), trueDists: new Float32Array(0) }));
    assert.deepEqual(recalls(none), [1, 1, 1]);
    assert.equal(none.short, false);

    const wrong = scoreQuery(args({ matches: 0, returned: [3, 99], passes: () => false, trueIds: new Int32Array(0), trueDists: new Float32Array(0) }));
    assert.deepEqual(recalls(wrong), [1, 1, 1]);
    assert.equal(wrong.violations, 1);
    assert.equal(wrong.unknown, 1);

    const k0 = scoreQuery(args({ k: 0, returned: [0] }));
    assert.deepEqual(recalls(k0), [1, 1, 1]);
    assert.equal(k0.returned, 1);
  });

  test('ground truth too short or padded inside kt is an error', () => {
    assert.throws(() => scoreQuery(args({ returned: [0], trueIds: Int32Array.from([0, 1]), trueDists: Float32Array.from([0.125, 0.25]) })), RangeError);
    assert.throws(() => scoreQuery(args({ returned: [0], trueIds: Int32Array.from([0, 1, -1]), trueDists: Float32Array.from([0.125, 0.25, 0]) })), RangeError);
    assert.throws(() => scoreQuery(args({ k: 2.5, returned: [0] })), RangeError);
  });
});

describe('summarize', () => {
  function score(strict: number, tieAware: number, threshold: number, extra: Partial<QueryScore> = {}): QueryScore {
    return { strict, tieAware, threshold, returned: 10, short: false, unknown: 0, duplicates: 0, violations: 0, leaked: [], ...extra };
  }

  test('means, counts and totals', () => {
    const s = summarize([
      score(1, 1, 1),
      score(0.25, 0.5, 0.75, { short: true, unknown: 2 }),
      score(0, 0.25, 0.5, { duplicates: 3, violations: 1 }),
      score(0.25, 0.25, 0.25, { short: true, violations: 4 }),
    ]);
    assert.deepEqual(s, {
      queries: 4,
      // Every declared reading (src/results/readings.ts), as stored in a point.
      readings: {
        recall: 0.5,
        recall_strict: 0.375,
        recall_threshold: 0.625,
        short_results: 2,
        empty_results: 0,
        low_recall_share: 0.5,
        unknown_ids: 2,
        duplicate_ids: 3,
        filter_violations: 5,
      },
      recall: 0.5,
      recallStrict: 0.375,
      recallThreshold: 0.625,
      shortResults: 2,
      // tie-aware 0.5 is not low; 0.25 twice is
      lowRecallShare: 0.5,
      unknownIds: 2,
      duplicateIds: 3,
      filterViolations: 5,
      tenantLeaks: 0,
      firstLeak: null,
    });
  });

  test('a cross-tenant row is a violation and a leak, and the first leak is named', () => {
    // Rows 0-2 are tenant 0, rows 3-5 tenant 1; the query is confined to tenant 0.
    const tenant = (id: number) => (id < 3 ? 0 : 1);
    const a = scoreQuery(args({ returned: [0, 4, 1], passes: (id) => tenant(id) === 0, outside: (id) => tenant(id) !== 0 }));
    assert.equal(a.violations, 1);
    assert.deepEqual(a.leaked, [4]);
    // A violation inside the boundary (another filter clause) is no leak.
    const b = scoreQuery(args({ returned: [0, 2], passes: (id) => id !== 2, outside: (id) => tenant(id) !== 0 }));
    assert.equal(b.violations, 1);
    assert.deepEqual(b.leaked, []);
    const leak = { query: 7, query_tenant: 0, row: 4, row_tenant: 1 };
    const s = summarize([b, { ...a, leak }]);
    assert.equal(s.tenantLeaks, 1);
    assert.deepEqual(s.firstLeak, leak);
  });

  test('summarize of real scores', () => {
    const a = scoreQuery(args({ returned: [0, 1, 7] })); // 2/3, 1, 1
    const b = scoreQuery(args({ returned: [0, 5] })); // 1/3 each, short
    const s = summarize([a, b]);
    assert.equal(s.recall, (1 + 1 / 3) / 2);
    assert.equal(s.recallStrict, (2 / 3 + 1 / 3) / 2);
    assert.equal(s.recallThreshold, (1 + 1 / 3) / 2);
    assert.equal(s.shortResults, 1);
    assert.equal(s.lowRecallShare, 0.5);
  });

  test('no queries', () => {
    const s = summarize([]);
    assert.equal(s.queries, 0);
    assert.ok(Number.isNaN(s.recall));
    assert.ok(Number.isNaN(s.recallStrict));
    assert.ok(Number.isNaN(s.recallThreshold));
    assert.ok(Number.isNaN(s.lowRecallShare));
    assert.equal(s.shortResults, 0);
    assert.equal(s.unknownIds, 0);
  });
});
