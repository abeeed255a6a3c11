// The drift two participants' speeds take apart over a run (src/metrics/window-drift.ts), on
// synthetic passes whose truth is known: a drift both share is not counted, one that falls on one
// participant alone is, at about its size, and the passes' own noise is taken out.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Sample } from '../../src/metrics/paired.ts';
import { mulberry32 } from '../../src/metrics/stats.ts';
import { centredPasses, windowDrift } from '../../src/metrics/window-drift.ts';

function normal(rand: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
}

/** 600 s of passes, one every 2 s for each of two points of each participant; the machine's
 * speed (shared) and participant A's own speed each step to a new level every 30 s window. */
function run(seed: number, shared: number, ownA: number, noise: number) {
  const rand = mulberry32(seed);
  const windows = 20;
  const machine = Array.from({ length: windows }, () => shared * normal(rand));
  const aOwn = Array.from({ length: windows }, () => ownA * normal(rand));
  const points = (own: number[], base: number): Sample[][] =>
    [base, base * 3].map((speed) =>
      Array.from({ length: 300 }, (_, i) => {
        const t = 1000 + i * 2;
        const w = Math.floor(i / 15);
        return { t, v: speed * Math.exp(machine[w] + own[w] + noise * normal(rand)) };
      }),
    );
  const zeros = new Array<number>(windows).fill(0);
  return { a: centredPasses(points(aOwn, 500)), b: centredPasses(points(zeros, 2000)) };
}

test('a drift both participants share is not counted; one on a single participant is, at its size', () => {
  const sharedOnly = run(1, 0.2, 0, 0.1);
  const d0 = windowDrift(sharedOnly.a, sharedOnly.b, 30)!;
  assert.equal(d0.windows, 20);
  assert.ok(d0.excess < 0.03, `shared drift alone: excess ${d0.excess}`);
  const ownDrift = run(2, 0.2, 0.1, 0.1);
  const d1 = windowDrift(ownDrift.a, ownDrift.b, 30)!;
  assert.ok(d1.excess > 0.06 && d1.excess < 0.15, `a drift of 0.1 on A alone: excess ${d1.excess}`);
  // The passes' noise is what the windows' own spread explains: with no drift, near nothing.
  const noiseOnly = run(3, 0, 0, 0.3);
  const d2 = windowDrift(noiseOnly.a, noiseOnly.b, 30)!;
  assert.ok(d2.sd > 0.05, `pass noise moves the window means (${d2.sd})`);
  assert.ok(d2.excess < 0.04, `and is taken out (${d2.excess})`);
});

test('each point is centred on its own mean, so points of different speeds mix; too few windows give null', () => {
  const c = centredPasses([
    [
      { t: 0, v: 100 },
      { t: 1, v: 400 },
    ],
    [
      { t: 0, v: 10 },
      { t: 1, v: 40 },
    ],
    [{ t: 0, v: 5 }],
  ]);
  assert.equal(c.length, 4, 'a point of one pass has no mean to centre on');
  assert.ok(Math.abs(c[0].v + Math.log(2)) < 1e-12 && Math.abs(c[3].v - Math.log(2)) < 1e-12);
  const few = [0, 1, 2, 3, 40, 41, 42, 43].map((t) => ({ t, v: 0 }));
  assert.equal(windowDrift(few, few, 30), null, 'two windows are not enough');
  assert.throws(() => windowDrift(few, few, 0), /windowS must be > 0/);
});
