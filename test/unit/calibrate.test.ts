// Calibration to a target recall against fake engines whose recall curve is known: a smooth
// monotone one, a non-monotone one, one that jumps between adjacent knob values, and ranges
// the target lies outside of.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Knobs } from '../../src/contracts.ts';
import { calibrate, calibrateFamily, familiesOf, type CalibrationSpec } from '../../src/runner/calibrate.ts';
import { CALIBRATION_TOLERANCE } from '../../src/metrics/frontier.ts';

/** A probe over a recall curve of the knob `ef`, counting the probes asked. */
function engine(curve: (ef: number) => number) {
  const asked: Knobs[] = [];
  return {
    asked,
    probe: async (k: Knobs) => {
      asked.push(k);
      return curve(k.ef as number);
    },
  };
}

const smooth = (ef: number) => 1 - Math.exp(-ef / 25);
const spec: CalibrationSpec = { knob: ['ef'], min: 1, max: 4096 };

test('a smooth curve: each target is found within the tolerance, between coarse ladder values', async () => {
  for (const target of [0.9, 0.95, 0.99]) {
    const e = engine(smooth);
    const r = await calibrateFamily({ knob: 'ef', base: {}, values: [10, 40, 160, 640] }, target, spec, e.probe);
    assert.equal(r.status, 'found', `target ${target}: ${JSON.stringify(r)}`);
    const got = smooth(r.knobs[0].ef as number);
    assert.ok(Math.abs(got - target) <= CALIBRATION_TOLERANCE, `target ${target}: recall ${got} at ef ${r.knobs[0].ef}`);
    // Bisection: a handful of probes beyond the four ladder values, each value asked once.
    assert.ok(e.asked.length <= 4 + 10, `${e.asked.length} probes`);
    assert.equal(new Set(e.asked.map((k) => k.ef)).size, e.asked.length);
    assert.deepEqual(
      r.probes.map((p) => p.knobs.ef),
      e.asked.map((k) => k.ef),
    );
  }
});

test('a ladder value already within the tolerance is taken without probing further', async () => {
  const e = engine(smooth);
  // smooth(75) = 0.9502
  const r = await calibrateFamily({ knob: 'ef', base: { mode: 'x' }, values: [10, 75, 200] }, 0.95, spec, e.probe);
  assert.equal(r.status, 'found');
  assert.deepEqual(r.knobs, [{ mode: 'x', ef: 75 }]);
  assert.equal(e.asked.length, 3);
});

test('a non-monotone curve: the search still ends on a crossing within the tolerance', async () => {
  // Recall rises, dips between 60 and 90, then rises again: a bisection that assumed monotonicity
  // could leave the bracket; keeping recall(lo) < target < recall(hi) cannot.
  const wobbly = (ef: number) => (ef < 60 ? 0.7 + ef / 300 : ef < 90 ? 0.9 - (ef - 60) / 300 : Math.min(1, 0.8 + (ef - 90) / 400));
  const e = engine(wobbly);
  const r = await calibrateFamily({ knob: 'ef', base: {}, values: [10, 50, 100, 300] }, 0.95, spec, e.probe);
  assert.equal(r.status, 'found', JSON.stringify(r));
  assert.ok(Math.abs(wobbly(r.knobs[0].ef as number) - 0.95) <= CALIBRATION_TOLERANCE);
});

test('adjacent integers straddling the target: "adjacent", with both values', async () => {
  const step = (ef: number) => (ef <= 17 ? 0.93 : 0.97);
  const r = await calibrateFamily({ knob: 'ef', base: {}, values: [10, 20, 40] }, 0.95, spec, engine(step).probe);
  assert.equal(r.status, 'adjacent');
  assert.deepEqual(
    r.knobs.map((k) => k.ef),
    [17, 18],
  );
});

test('below the range, beyond it, and searches that leave the ladder for the declared range', async () => {
  const high = (ef: number) => 0.97 + Math.min(ef, 100) / 10_000;
  assert.equal((await calibrateFamily({ knob: 'ef', base: {}, values: [10, 20] }, 0.9, spec, engine(high).probe)).status, 'below_range');
  const low = (ef: number) => 0.5 + Math.min(ef, 5000) / 100_000;
  assert.equal((await calibrateFamily({ knob: 'ef', base: {}, values: [10, 20] }, 0.9, spec, engine(low).probe)).status, 'not_reached');
  // The ladder stops at 40 (recall 0.80), the declared max is 4096: the search goes above the ladder.
  const above = await calibrateFamily({ knob: 'ef', base: {}, values: [10, 20, 40] }, 0.99, spec, engine(smooth).probe);
  assert.equal(above.status, 'found');
  assert.ok((above.knobs[0].ef as number) > 40);
  // The ladder starts at 200 (recall 0.9997), the declared min is 1: the search goes below it.
  const below = await calibrateFamily({ knob: 'ef', base: {}, values: [200, 400] }, 0.9, spec, engine(smooth).probe);
  assert.equal(below.status, 'found');
  assert.ok((below.knobs[0].ef as number) < 200);
  // Without a declared range the ladder is the range.
  assert.equal((await calibrateFamily({ knob: 'ef', base: {}, values: [200, 400] }, 0.9, { knob: ['ef'] }, engine(smooth).probe)).status, 'below_range');
});

test('a non-integer knob is bisected a bounded number of times', async () => {
  const jump = (x: number) => (x < 0.5 ? 0.9 : 0.99);
  const e = engine(jump);
  const r = await calibrateFamily({ knob: 'ef', base: {}, values: [0.1, 0.9] }, 0.95, spec, e.probe);
  assert.equal(r.status, 'failed');
  assert.match(r.reason ?? '', /bisection steps/);
  assert.ok(e.asked.length <= 2 + 12);
});

test('families: one per combination of the other knobs; string values are not searched', async () => {
  const ladder: Knobs[] = [
    { scan: 'off', ef_search: 10 },
    { scan: 'off', ef_search: 40 },
    { scan: 'off', ef_search: 'exact' },
    { scan: 'on', ef_search: 10 },
    { scan: 'on', ef_search: 40 },
  ];
  const fams = familiesOf(ladder, { knob: ['ef', 'ef_search'] });
  assert.deepEqual(
    fams.map((f) => [f.knob, f.base, f.values]),
    [
      ['ef_search', { scan: 'off' }, [10, 40]],
      ['ef_search', { scan: 'on' }, [10, 40]],
    ],
  );
  const none = await calibrate([{ nprobes: 3 }], 0.9, { knob: ['ef'] }, async () => 1);
  assert.equal(none[0].status, 'no_knob');
});

test('a knob with a grain (step) is bisected on its grid: a step curve ends "adjacent" on two neighbouring grid values, in few probes', async () => {
  // Recall set by floor(10 x ef) candidates, as faiss's k_factor at k = 10: a real number whose
  // recall only changes every 0.1. Without the grain the search would split 1.3999 from 1.4001.
  const steps = (ef: number) => 1 - 0.5 * Math.exp(-(Math.floor(10 * ef + 1e-9) - 10) / 4);
  const e = engine((ef) => steps(ef));
  const [f] = familiesOf([{ ef: 1.5 }, { ef: 4 }], { knob: ['ef'] });
  const rec = await calibrateFamily(f, 0.9, { knob: ['ef'], min: 1, max: 8, step: 0.1 }, e.probe);
  const values = rec.knobs.map((k) => k.ef as number);
  assert.equal(rec.status, 'adjacent', JSON.stringify(rec));
  assert.ok(Math.abs(values[1] - values[0] - 0.1) < 1e-9, `neighbours on the grid: ${values}`);
  assert.ok(steps(values[0]) < 0.9 && steps(values[1]) > 0.9, `${values} straddle 0.9`);
  for (const k of e.asked) assert.ok(Math.abs((k.ef as number) * 10 - Math.round((k.ef as number) * 10)) < 1e-9, `${k.ef} is on the 0.1 grid`);
  assert.ok(e.asked.length <= 8, `${e.asked.length} probes`);
});
