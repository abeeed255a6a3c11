// The spread of a cold group's points around their curve (src/metrics/curve-spread.ts), on
// synthetic curves whose truth is known, and through deriveCells: a cold cell's interval spans the
// spread, a warm cell's is its point's own.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { curveSpread, withSpread } from '../../src/metrics/curve-spread.ts';
import type { CurvePoint } from '../../src/metrics/frontier.ts';
import { mulberry32 } from '../../src/metrics/stats.ts';
import { deriveCells } from '../../src/report/cells.ts';
import { renderPage } from '../../src/report/html.ts';
import { renderTable } from '../../src/report/table.ts';
import { oneGroupResult, timedPoint } from '../helpers/one-group-result.ts';

function normal(rand: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
}

/** Nine points from recall 0.88 to 0.996 on QPS = 2000 x exp(-30 (recall - 0.88)), each off the
 * curve by `sd` (log scale), each with its own ±2 % interval. */
function curve(rand: () => number, sd: number): CurvePoint[] {
  const recalls = [0.88, 0.896, 0.904, 0.946, 0.95, 0.954, 0.986, 0.99, 0.996];
  return recalls.map((recall, i) => {
    const value = 2000 * Math.exp(-30 * (recall - 0.88) + sd * normal(rand));
    return { recall, value, low: value / 1.02, high: value * 1.02, knobs: { x: i }, ladderIndex: i };
  });
}

test('the spread is near nothing on a smooth curve and near its size when points scatter', () => {
  const rand = mulberry32(7);
  const smooth = curveSpread([curve(rand, 0), curve(rand, 0)])!;
  assert.ok(smooth < 0.005, `smooth: ${smooth}`);
  const estimates = Array.from({ length: 40 }, () => curveSpread([curve(rand, 0.15), curve(rand, 0.15)])!).sort((a, b) => a - b);
  const mid = estimates[20];
  assert.ok(mid > 0.1 && mid < 0.2, `a scatter of 0.15: median estimate ${mid}`);
});

test('one outlier, such as the first pass after an eviction, does not set the spread', () => {
  const rand = mulberry32(11);
  const views = [curve(rand, 0.02), curve(rand, 0.02)];
  const calm = curveSpread(views)!;
  views[0][0] = { ...views[0][0], value: views[0][0].value / 2.5 };
  const withOutlier = curveSpread(views)!;
  assert.ok(withOutlier < 0.06, `one point 2.5x slow: ${withOutlier} (calm ${calm})`);
});

test('too few points give no spread; the widened interval adds the spread to each side in quadrature', () => {
  const rand = mulberry32(3);
  assert.equal(curveSpread([curve(rand, 0.1).slice(0, 3), curve(rand, 0.1).slice(0, 4)]), null, '1 + 2 residuals');
  const p: CurvePoint = { recall: 0.9, value: 100, low: 100 / Math.exp(0.03), high: 100 * Math.exp(0.04), knobs: {}, ladderIndex: 0 };
  const w = withSpread(p, 0.1);
  const z = 1.959964 * 0.1;
  assert.ok(Math.abs(Math.log(100 / w.low!) - Math.hypot(0.03, z)) < 1e-12);
  assert.ok(Math.abs(Math.log(w.high! / 100) - Math.hypot(0.04, z)) < 1e-12);
  assert.equal(withSpread(p, 0), p);
});

/** Points alternately 20 % fast and slow around a smooth curve, in both views. */
function scattered() {
  const recalls = [0.88, 0.896, 0.9, 0.904, 0.946, 0.95, 0.954, 0.986, 0.99];
  return recalls.flatMap((r, i) => {
    const qps = 2000 * Math.exp(-30 * (r - 0.88)) * (i % 2 === 0 ? 1.2 : 1 / 1.2);
    return [timedPoint(i, 'throughput', r, qps), timedPoint(i, 'latency', r, qps)];
  });
}

test("a cold cell's interval spans its group's spread; a warm cell's stays its point's own", () => {
  const pts = scattered();
  const at = (protocol: 'cold' | 'warm') => deriveCells([oneGroupResult(pts, protocol)]).find((c) => c.target === 0.9 && c.view === 'throughput')!;
  const warm = at('warm');
  const cold = at('cold');
  assert.equal(warm.value, cold.value);
  assert.equal(warm.spread, undefined);
  assert.ok(Math.abs(warm.ci_high! / warm.value! - 1.03) < 1e-9, "warm: the point's own ±3 %");
  assert.ok(cold.spread! > 0.1, `cold spread ${cold.spread}`);
  assert.ok(cold.ci_high! / cold.value! > Math.exp(1.959 * cold.spread!), 'cold: the interval spans the spread');
});

test("the page and the table say a cold cell's interval includes its group's spread", async () => {
  assert.match(renderTable(deriveCells([oneGroupResult(scattered(), 'cold')])), /±: 95 % interval \(cold points: spanning their group's spread\)/);
  assert.doesNotMatch(renderTable(deriveCells([oneGroupResult(scattered(), 'warm')])), /spanning their group's spread/);
  const html = await renderPage([oneGroupResult(scattered(), 'cold')]);
  const title =
    /<td class="cell[^"]*"[^>]*data-target="0.9"[^>]*title="([^"]*)"/.exec(html)?.[1] ??
    /<td class="cell[^"]*"[^>]*title="([^"]*)"[^>]*data-target="0.9"/.exec(html)?.[1];
  assert.ok(title?.includes('including the cold group&#39;s spread'), title);
  const warm = await renderPage([oneGroupResult(scattered(), 'warm')]);
  assert.ok(!warm.includes('spread: a point lands'), 'a warm page says nothing of it');
});
