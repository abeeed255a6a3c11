import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { bootstrapCI, intervalsOverlap, mean, mulberry32, percentile, quantileSorted, sampleVariance, trimOutliers } from '../../src/metrics/stats.ts';

describe('percentile (nearest rank)', () => {
  test('the textbook example', () => {
    const xs = [15, 20, 35, 40, 50];
    assert.equal(percentile(xs, 5), 15);
    assert.equal(percentile(xs, 30), 20);
    assert.equal(percentile(xs, 40), 20);
    assert.equal(percentile(xs, 50), 35);
    assert.equal(percentile(xs, 100), 50);
  });

  test('edges: p = 0 is the minimum, ranks exactly on a boundary do not round up', () => {
    const xs = [10, 20, 30, 40, 50];
    assert.equal(percentile(xs, 0), 10);
    assert.equal(percentile(xs, 20), 10);
    assert.equal(percentile(xs, 21), 20);
    assert.equal(percentile(xs, 80), 40);
    assert.equal(percentile(xs, 80.0001), 50);
  });

  test('1..100 and 1..1000: p-th percentile is p (per mille)', () => {
    const hundred = Float64Array.from({ length: 100 }, (_, i) => i + 1);
    for (const p of [1, 7, 29, 50, 57, 90, 95, 99, 100]) assert.equal(percentile(hundred, p), p);
    const thousand = Float64Array.from({ length: 1000 }, (_, i) => i + 1);
    assert.equal(percentile(thousand, 99.9), 999);
    assert.equal(percentile(thousand, 99.5), 995);
    assert.equal(percentile(thousand, 0.1), 1);
  });

  test('single element, empty, bad p', () => {
    assert.equal(percentile([7], 0), 7);
    assert.equal(percentile([7], 99), 7);
    assert.ok(Number.isNaN(percentile([], 50)));
    assert.throws(() => percentile([1, 2], -1), RangeError);
    assert.throws(() => percentile([1, 2], 101), RangeError);
    assert.throws(() => percentile([1, 2], NaN), RangeError);
  });
});

describe('quantileSorted (linear interpolation)', () => {
  test('known values', () => {
    const xs = [1, 2, 3, 4, 5, 6, 7, 8, 9, 100];
    assert.equal(quantileSorted(xs, 0.25), 3.25);
    assert.equal(quantileSorted(xs, 0.75), 7.75);
    assert.equal(quantileSorted(xs, 0), 1);
    assert.equal(quantileSorted(xs, 1), 100);
    assert.equal(quantileSorted([4], 0.3), 4);
  });
});

describe('mean', () => {
  test('known values', () => {
    assert.equal(mean([1, 2, 3, 4]), 2.5);
    assert.equal(mean(Float32Array.from([0.5, 1.5])), 1);
    assert.ok(Number.isNaN(mean([])));
  });
});

describe('mulberry32', () => {
  test('deterministic by seed, different seeds differ', () => {
    const a = mulberry32(42);
    const b = mulberry32(42);
    const c = mulberry32(43);
    const sa = Array.from({ length: 20 }, a);
    const sb = Array.from({ length: 20 }, b);
    const sc = Array.from({ length: 20 }, c);
    assert.deepEqual(sa, sb);
    assert.notDeepEqual(sa, sc);
  });

  test('uniform in [0, 1)', () => {
    const r = mulberry32(7);
    const n = 100_000;
    const bins = new Array<number>(10).fill(0);
    let sum = 0;
    for (let i = 0; i < n; i++) {
      const x = r();
      assert.ok(x >= 0 && x < 1, `out of range: ${x}`);
      sum += x;
      bins[Math.floor(x * 10)]++;
    }
    assert.ok(Math.abs(sum / n - 0.5) < 0.01, `mean ${sum / n}`);
    for (const b of bins) assert.ok(Math.abs(b - n / 10) < n / 100, `bin count ${b}`);
  });
});

describe('trimOutliers', () => {
  test('drops a far outlier with k = 3 (Q1 3.25, Q3 7.75, IQR 4.5, fences -10.25 and 21.25)', () => {
    assert.deepEqual(trimOutliers([1, 2, 3, 4, 5, 6, 7, 8, 9, 100]), [1, 2, 3, 4, 5, 6, 7, 8, 9]);
    assert.deepEqual(trimOutliers([1, 2, 3, 4, 5, 6, 7, 8, 9, 21]), [1, 2, 3, 4, 5, 6, 7, 8, 9, 21]);
    assert.deepEqual(trimOutliers([1, 2, 3, 4, 5, 6, 7, 8, 9, 22]), [1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  test('values on the fence are kept, beyond are dropped (Q1 2, Q3 4, IQR 2)', () => {
    assert.deepEqual(trimOutliers([0, 2, 3, 4, 6], 1), [0, 2, 3, 4, 6]);
    assert.deepEqual(trimOutliers([0, 2, 3, 4, 6], 0.99), [2, 3, 4]);
  });

  test('keeps input order, drops low outliers too', () => {
    assert.deepEqual(trimOutliers([10, -500, 11, 12, 9, 10, 11]), [10, 11, 12, 9, 10, 11]);
  });

  test('no spread: only the constant survives', () => {
    assert.deepEqual(trimOutliers([5, 5, 5, 5, 6]), [5, 5, 5, 5]);
    assert.deepEqual(trimOutliers([5, 5, 5]), [5, 5, 5]);
  });

  test('empty, non-finite, does not mutate', () => {
    assert.deepEqual(trimOutliers([]), []);
    assert.deepEqual(trimOutliers([1, NaN, 2, Infinity, 3]), [1, 2, 3]);
    const xs = [3, 1, 2, 1000];
    trimOutliers(xs);
    assert.deepEqual(xs, [3, 1, 2, 1000]);
  });
});

describe('bootstrapCI', () => {
  const sample = Array.from({ length: 100 }, (_, i) => i + 1); // mean 50.5, sd ~29.0, se ~2.9

  test('CI of the mean contains the true mean, with a plausible width', () => {
    const ci = bootstrapCI(sample, mean, { seed: 1 });
    assert.equal(ci.estimate, 50.5);
    assert.ok(ci.low < 50.5 && 50.5 < ci.high, `[${ci.low}, ${ci.high}]`);
    // 95 % normal interval would be about 50.5 ± 5.7
    assert.ok(ci.low > 43 && ci.low < 48, `low ${ci.low}`);
    assert.ok(ci.high > 53 && ci.high < 58, `high ${ci.high}`);
  });

  test('deterministic by seed; another seed gives another interval', () => {
    const a = bootstrapCI(sample, mean, { seed: 123 });
    const b = bootstrapCI(sample, mean, { seed: 123 });
    const c = bootstrapCI(sample, mean, { seed: 124 });
    assert.deepEqual(a, b);
    assert.notDeepEqual(a, c);
    // the default seed is fixed too
    assert.deepEqual(bootstrapCI(sample, mean), bootstrapCI(sample, mean));
  });

  test('a constant sample has a zero-width interval', () => {
    assert.deepEqual(bootstrapCI([4, 4, 4, 4], mean), { low: 4, high: 4, estimate: 4 });
  });

  test('a lower level gives a narrower interval', () => {
    const wide = bootstrapCI(sample, mean, { seed: 9, level: 0.99 });
    const narrow = bootstrapCI(sample, mean, { seed: 9, level: 0.5 });
    assert.ok(wide.low < narrow.low && narrow.high < wide.high);
  });

  test('the interval equals the quantiles of the resampled statistics', () => {
    // Re-derive the bootstrap by hand with the same generator and compare.
    const xs = [3, 8, 1, 9, 4];
    const resamples = 50;
    const rand = mulberry32(5);
    const stats: number[] = [];
    for (let r = 0; r < resamples; r++) {
      const s = xs.map(() => xs[Math.floor(rand() * xs.length)]);
      stats.push(Math.max(...s));
    }
    stats.sort((a, b) => a - b);
    const ci = bootstrapCI(xs, (s) => Math.max(...s), { resamples, seed: 5, level: 0.9 });
    assert.equal(ci.estimate, 9);
    assert.equal(ci.low, quantileSorted(stats, 0.05));
    assert.equal(ci.high, quantileSorted(stats, 0.95));
  });

  test('the statistic sees a fresh array each time', () => {
    const seen = new Set<number[]>();
    bootstrapCI(
      [1, 2, 3],
      (s) => {
        seen.add(s);
        s.sort((a, b) => b - a);
        return s[0];
      },
      { resamples: 10 },
    );
    assert.equal(seen.size, 11); // 10 resamples + the estimate on the sample itself
  });

  test('empty sample and bad options', () => {
    const e = bootstrapCI([], mean);
    assert.ok(Number.isNaN(e.low) && Number.isNaN(e.high) && Number.isNaN(e.estimate));
    assert.throws(() => bootstrapCI([1], mean, { resamples: 0 }), RangeError);
    assert.throws(() => bootstrapCI([1], mean, { level: 1 }), RangeError);
  });
});

describe('intervalsOverlap', () => {
  test('overlap, containment, touching, apart', () => {
    assert.equal(intervalsOverlap({ low: 1, high: 3 }, { low: 2, high: 4 }), true);
    assert.equal(intervalsOverlap({ low: 1, high: 10 }, { low: 2, high: 3 }), true);
    assert.equal(intervalsOverlap({ low: 2, high: 3 }, { low: 1, high: 10 }), true);
    assert.equal(intervalsOverlap({ low: 1, high: 2 }, { low: 2, high: 3 }), true);
    assert.equal(intervalsOverlap({ low: 1, high: 2 }, { low: 2.5, high: 3 }), false);
    assert.equal(intervalsOverlap({ low: 2.5, high: 3 }, { low: 1, high: 2 }), false);
  });
});

test('sampleVariance divides by n - 1; fewer than two values have none', () => {
  assert.equal(sampleVariance([2, 4, 4, 4, 5, 5, 7, 9]), 32 / 7);
  assert.ok(Number.isNaN(sampleVariance([3])));
  assert.ok(Number.isNaN(sampleVariance([])));
});
