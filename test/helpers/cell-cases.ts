// Every test case of the cell rule (docs/method.md §4, src/metrics/frontier.ts) in one table, so the
// Node tests and the HTML page's browser test check the same thing. Plain data and a
// type-only import: safe to load in a browser.
//
// Conventions for `expect`:
// - value: compared within 1e-9 relative; when absent the cell's value must be null.
// - maxRecall: compared exactly; when absent the cell's maxRecall must be null.
// Expected interpolated numbers were worked out by hand/independently, e.g. halfway
// between 800 and 200 in log space is sqrt(800 * 200) = 400.
import type { Better, CellStatus, CurvePoint } from '../../src/metrics/frontier.ts';

export interface CellCase {
  name: string;
  better: Better;
  target: number;
  points: CurvePoint[];
  expect: { status: CellStatus; value?: number; maxRecall?: number };
}

// Points made without knobs get { ef: 100 + 10 * index }: never adjacent to each other,
// so the adjacent-knob exception only applies where a case spells the knobs out.
let nextIndex = 0;
function pt(recall: number, value: number, knobs: Record<string, number | string> = {}): CurvePoint {
  if (Object.keys(knobs).length === 0) knobs = { ef: 100 + 10 * nextIndex };
  return { recall, value, knobs, ladderIndex: nextIndex++ };
}

export const CELL_CASES: CellCase[] = [
  // ---------- QPS: higher is better ----------
  {
    name: 'qps: frontier point exactly at the target',
    better: 'higher',
    target: 0.95,
    points: [pt(0.9, 1000), pt(0.95, 500), pt(0.99, 100)],
    expect: { status: 'point', value: 500, maxRecall: 0.99 },
  },
  {
    name: 'qps: point within 1e-12 of the target counts as the point',
    better: 'higher',
    target: 0.95,
    points: [pt(0.9, 1000), pt(0.95 + 5e-13, 500), pt(0.99, 100)],
    expect: { status: 'point', value: 500, maxRecall: 0.99 },
  },
  {
    name: 'qps: exact recall 1.0 target read from a point at 1.0',
    better: 'higher',
    target: 1,
    points: [pt(0.98, 400), pt(1, 50)],
    expect: { status: 'point', value: 50, maxRecall: 1 },
  },
  {
    name: 'qps: interpolated halfway in log space (sqrt(800*200))',
    better: 'higher',
    target: 0.95,
    points: [pt(0.94, 800), pt(0.96, 200)],
    expect: { status: 'interpolated', value: 400, maxRecall: 0.96 },
  },
  {
    name: 'qps: interpolated a quarter of the way (1000 * 0.1^0.25)',
    better: 'higher',
    target: 0.9025,
    points: [pt(0.8, 3000), pt(0.9, 1000), pt(0.91, 100), pt(0.99, 10)],
    expect: { status: 'interpolated', value: 562.341325190349, maxRecall: 0.99 },
  },
  {
    name: 'qps: 0.93 and 0.95 are exactly 0.02 apart, not too wide',
    better: 'higher',
    target: 0.94,
    points: [pt(0.93, 1000), pt(0.95, 250)],
    expect: { status: 'interpolated', value: 500, maxRecall: 0.95 },
  },
  {
    name: 'qps: bracket 0.0201 wide is too wide',
    better: 'higher',
    target: 0.94,
    points: [pt(0.93, 1000), pt(0.9501, 250)],
    expect: { status: 'bracket_too_wide', maxRecall: 0.9501 },
  },
  {
    name: 'qps: every frontier point above the target reads the lowest-recall one',
    better: 'higher',
    target: 0.9,
    points: [pt(0.96, 300), pt(0.99, 100)],
    expect: { status: 'above', value: 300, maxRecall: 0.99 },
  },
  {
    name: 'qps: above reads the frontier, not a dominated lower-recall point',
    better: 'higher',
    target: 0.95,
    points: [pt(0.96, 100), pt(0.97, 300), pt(0.99, 50)],
    expect: { status: 'above', value: 300, maxRecall: 0.99 },
  },
  {
    name: 'qps: never reaches the target',
    better: 'higher',
    target: 0.95,
    points: [pt(0.8, 2000), pt(0.93, 900)],
    expect: { status: 'not_reached', maxRecall: 0.93 },
  },
  {
    name: 'qps: recall below 0.5 at every point is collapsed, not merely not reached',
    better: 'higher',
    target: 0.9,
    points: [pt(0.1, 5000), pt(0.3, 2000), pt(0.499, 900)],
    expect: { status: 'collapsed', maxRecall: 0.499 },
  },
  {
    name: 'qps: one point at 0.5 is no collapse',
    better: 'higher',
    target: 0.9,
    points: [pt(0.1, 5000), pt(0.5, 900)],
    expect: { status: 'not_reached', maxRecall: 0.5 },
  },
  {
    name: 'qps: just below the target (beyond 1e-12) is not reached',
    better: 'higher',
    target: 0.95,
    points: [pt(0.9, 2000), pt(0.95 - 1e-9, 900)],
    expect: { status: 'not_reached', maxRecall: 0.95 - 1e-9 },
  },
  {
    name: 'qps: bracket more than 0.02 wide',
    better: 'higher',
    target: 0.95,
    points: [pt(0.9, 1000, { ef: 16 }), pt(0.97, 200, { ef: 64 })],
    expect: { status: 'bracket_too_wide', maxRecall: 0.97 },
  },
  {
    name: 'qps: wide bracket between adjacent integer knob values is interpolated (1000 * 0.2^(5/7))',
    better: 'higher',
    target: 0.95,
    points: [pt(0.9, 1000, { nprobes: 5, refine: 2 }), pt(0.97, 200, { nprobes: 6, refine: 2 })],
    expect: { status: 'interpolated', value: 316.7639217533158, maxRecall: 0.97 },
  },
  {
    name: 'qps: knob values 2 apart are not adjacent',
    better: 'higher',
    target: 0.95,
    points: [pt(0.9, 1000, { nprobes: 5 }), pt(0.97, 200, { nprobes: 7 })],
    expect: { status: 'bracket_too_wide', maxRecall: 0.97 },
  },
  {
    name: 'qps: two knobs each differing by 1 are not adjacent',
    better: 'higher',
    target: 0.95,
    points: [pt(0.9, 1000, { nprobes: 5, refine: 2 }), pt(0.97, 200, { nprobes: 6, refine: 3 })],
    expect: { status: 'bracket_too_wide', maxRecall: 0.97 },
  },
  {
    name: 'qps: non-integer knob values 1 apart are not adjacent',
    better: 'higher',
    target: 0.95,
    points: [pt(0.9, 1000, { alpha: 1.5 }), pt(0.97, 200, { alpha: 2.5 })],
    expect: { status: 'bracket_too_wide', maxRecall: 0.97 },
  },
  {
    name: 'qps: string knob difference is not adjacent',
    better: 'higher',
    target: 0.95,
    points: [pt(0.9, 1000, { ef: 5, mode: 'a' }), pt(0.97, 200, { ef: 5, mode: 'b' })],
    expect: { status: 'bracket_too_wide', maxRecall: 0.97 },
  },
  {
    name: 'qps: different knob names are not adjacent',
    better: 'higher',
    target: 0.95,
    points: [pt(0.9, 1000, { ef: 5 }), pt(0.97, 200, { ef: 6, refine: 1 })],
    expect: { status: 'bracket_too_wide', maxRecall: 0.97 },
  },
  {
    name: 'qps: several points at the nearest recall: adjacent if any pair is (1000 * 0.2^(5/7))',
    better: 'higher',
    target: 0.95,
    points: [pt(0.9, 900, { ef: 8 }), pt(0.9, 1000, { ef: 5 }), pt(0.97, 200, { ef: 6 })],
    expect: { status: 'interpolated', value: 316.7639217533158, maxRecall: 0.97 },
  },
  {
    name: 'qps: dominated points narrow the bracket but are not read (1000 * 0.2^(5/7))',
    better: 'higher',
    target: 0.95,
    points: [pt(0.9, 1000), pt(0.94, 100), pt(0.96, 150), pt(0.97, 200)],
    expect: { status: 'interpolated', value: 316.7639217533158, maxRecall: 0.97 },
  },
  {
    name: 'qps: a dominated point exactly at the target is not read',
    better: 'higher',
    target: 0.95,
    points: [pt(0.94, 900), pt(0.95, 100), pt(0.96, 800)],
    expect: { status: 'interpolated', value: 848.5281374238571, maxRecall: 0.96 },
  },
  {
    name: 'qps: wide frontier gap with a dominated near point on only one side stays too wide',
    better: 'higher',
    target: 0.95,
    points: [pt(0.9, 1000), pt(0.955, 150), pt(0.97, 200)],
    expect: { status: 'bracket_too_wide', maxRecall: 0.97 },
  },
  {
    name: 'qps: no points',
    better: 'higher',
    target: 0.95,
    points: [],
    expect: { status: 'none' },
  },
  {
    name: 'qps: only unusable points (NaN, out of range, zero, negative, infinite)',
    better: 'higher',
    target: 0.95,
    points: [pt(NaN, 100), pt(1.2, 100), pt(-0.1, 100), pt(0.96, 0), pt(0.97, -5), pt(0.98, Infinity), pt(0.99, NaN)],
    expect: { status: 'none' },
  },
  {
    name: 'qps: unusable points are ignored, including for maxRecall',
    better: 'higher',
    target: 0.95,
    points: [pt(0.9, 1000), pt(0.93, 900), pt(1.5, 99999), pt(0.99, 0)],
    expect: { status: 'not_reached', maxRecall: 0.93 },
  },
  {
    name: 'qps: equal duplicates read as the point',
    better: 'higher',
    target: 0.95,
    points: [pt(0.95, 500), pt(0.95, 500), pt(0.9, 700)],
    expect: { status: 'point', value: 500, maxRecall: 0.95 },
  },
  {
    name: 'qps: same recall twice, the better value is read',
    better: 'higher',
    target: 0.95,
    points: [pt(0.95, 300), pt(0.95, 500)],
    expect: { status: 'point', value: 500, maxRecall: 0.95 },
  },
  {
    name: 'qps: single point below the target',
    better: 'higher',
    target: 0.99,
    points: [pt(0.95, 500)],
    expect: { status: 'not_reached', maxRecall: 0.95 },
  },
  {
    name: 'qps: single point above the target',
    better: 'higher',
    target: 0.9,
    points: [pt(0.95, 500)],
    expect: { status: 'above', value: 500, maxRecall: 0.95 },
  },
  {
    name: 'qps: single point at the target',
    better: 'higher',
    target: 0.95,
    points: [pt(0.95, 500)],
    expect: { status: 'point', value: 500, maxRecall: 0.95 },
  },
  {
    name: 'qps direction: both points on the QPS frontier (sqrt(100*50))',
    better: 'higher',
    target: 0.95,
    points: [pt(0.94, 100), pt(0.96, 50)],
    expect: { status: 'interpolated', value: 70.71067811865476, maxRecall: 0.96 },
  },

  // ---------- latency: lower is better ----------
  {
    name: 'latency: recall below 0.5 at every point is collapsed',
    better: 'lower',
    target: 0.95,
    points: [pt(0.2, 1), pt(0.45, 3)],
    expect: { status: 'collapsed', maxRecall: 0.45 },
  },
  {
    name: 'latency: frontier point exactly at the target',
    better: 'lower',
    target: 0.95,
    points: [pt(0.9, 1), pt(0.95, 2), pt(0.99, 8)],
    expect: { status: 'point', value: 2, maxRecall: 0.99 },
  },
  {
    name: 'latency: interpolated halfway in log space (sqrt(2*8))',
    better: 'lower',
    target: 0.95,
    points: [pt(0.94, 2), pt(0.96, 8)],
    expect: { status: 'interpolated', value: 4, maxRecall: 0.96 },
  },
  {
    name: 'latency: interpolated a quarter of the way (1 * 10^0.25)',
    better: 'lower',
    target: 0.9025,
    points: [pt(0.9, 1), pt(0.91, 10)],
    expect: { status: 'interpolated', value: 1.7782794100389228, maxRecall: 0.91 },
  },
  {
    name: 'latency: every frontier point above the target reads the lowest-recall one',
    better: 'lower',
    target: 0.9,
    points: [pt(0.96, 3), pt(0.99, 9)],
    expect: { status: 'above', value: 3, maxRecall: 0.99 },
  },
  {
    name: 'latency: above reads the frontier, not a dominated lower-recall point',
    better: 'lower',
    target: 0.95,
    points: [pt(0.96, 9), pt(0.97, 3), pt(0.99, 12)],
    expect: { status: 'above', value: 3, maxRecall: 0.99 },
  },
  {
    name: 'latency: never reaches the target',
    better: 'lower',
    target: 0.99,
    points: [pt(0.9, 1), pt(0.97, 4)],
    expect: { status: 'not_reached', maxRecall: 0.97 },
  },
  {
    name: 'latency: bracket more than 0.02 wide',
    better: 'lower',
    target: 0.95,
    points: [pt(0.9, 1, { ef: 16 }), pt(0.97, 5, { ef: 64 })],
    expect: { status: 'bracket_too_wide', maxRecall: 0.97 },
  },
  {
    name: 'latency: wide bracket between adjacent integer knob values is interpolated (5^(5/7))',
    better: 'lower',
    target: 0.95,
    points: [pt(0.9, 1, { ef: 21 }), pt(0.97, 5, { ef: 20 })],
    expect: { status: 'interpolated', value: 3.156925177794596, maxRecall: 0.97 },
  },
  {
    name: 'latency: knob values 2 apart are not adjacent',
    better: 'lower',
    target: 0.95,
    points: [pt(0.9, 1, { ef: 20 }), pt(0.97, 5, { ef: 22 })],
    expect: { status: 'bracket_too_wide', maxRecall: 0.97 },
  },
  {
    name: 'latency: dominated points narrow the bracket but are not read (5^(5/7))',
    better: 'lower',
    target: 0.95,
    points: [pt(0.9, 1), pt(0.94, 6), pt(0.96, 7), pt(0.97, 5)],
    expect: { status: 'interpolated', value: 3.156925177794596, maxRecall: 0.97 },
  },
  {
    name: 'latency: a dominated point exactly at the target is not read (sqrt(2*8))',
    better: 'lower',
    target: 0.95,
    points: [pt(0.94, 2), pt(0.95, 10), pt(0.96, 8)],
    expect: { status: 'interpolated', value: 4, maxRecall: 0.96 },
  },
  {
    name: 'latency: no points',
    better: 'lower',
    target: 0.9,
    points: [],
    expect: { status: 'none' },
  },
  {
    name: 'latency: only unusable points',
    better: 'lower',
    target: 0.9,
    points: [pt(0.95, 0), pt(0.96, -1), pt(Infinity, 2)],
    expect: { status: 'none' },
  },
  {
    name: 'latency: equal duplicates read as the point',
    better: 'lower',
    target: 0.95,
    points: [pt(0.95, 2), pt(0.95, 2)],
    expect: { status: 'point', value: 2, maxRecall: 0.95 },
  },
  {
    name: 'latency: same recall twice, the lower latency is read',
    better: 'lower',
    target: 0.95,
    points: [pt(0.95, 7), pt(0.95, 2)],
    expect: { status: 'point', value: 2, maxRecall: 0.95 },
  },
  {
    name: 'latency: single point above the target',
    better: 'lower',
    target: 0.9,
    points: [pt(0.95, 2)],
    expect: { status: 'above', value: 2, maxRecall: 0.95 },
  },
  {
    name: 'latency direction: the same points as the QPS case, lower recall point dominated',
    better: 'lower',
    target: 0.95,
    points: [pt(0.94, 100), pt(0.96, 50)],
    expect: { status: 'above', value: 50, maxRecall: 0.96 },
  },
];
