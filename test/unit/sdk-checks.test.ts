// Checks the SDK does for every adapter that needs them (src/adapters/kit.ts, knobs.ts): the
// first row whose vector is not unit length, for engines that serve ip as another distance; the
// search knobs a participant declares, checked in settings.json and before every setKnobs.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { knobProblem, withCheckedKnobs } from '../../src/adapters/knobs.ts';
import { loadParticipant } from '../../src/runner/participants.ts';
import { UserError } from '../../src/util/errors.ts';
import { choiceKnob, firstNonUnitRow, intKnob, type Knobs, type RowBatch } from '../../src/sdk/index.ts';

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

// Knobs are declared once per participant (Participant.knobs) and checked by the harness.
test('knobProblem names an unknown knob with the declared ones, and a bad value with what it must be', () => {
  const spec = { ef: intKnob(1, 1000, "the engine's range"), mode: choiceKnob(['fast', 'exact']) };
  assert.equal(knobProblem('eng', spec, { ef: 10, mode: 'fast' }), null);
  assert.equal(knobProblem('eng', spec, {}), null);
  assert.equal(knobProblem('eng', spec, { eff: 10 }), 'eng: unknown knob "eff"; its knobs are ef, mode');
  assert.equal(knobProblem('eng', spec, { ef: 0 }), `eng: knob ef must be an integer 1..1000 (the engine's range), got 0`);
  assert.equal(knobProblem('eng', spec, { ef: 2.5 }), `eng: knob ef must be an integer 1..1000 (the engine's range), got 2.5`);
  assert.equal(knobProblem('eng', spec, { ef: '10' }), `eng: knob ef must be an integer 1..1000 (the engine's range), got "10"`);
  assert.equal(knobProblem('eng', spec, { mode: 'slow' }), 'eng: knob mode must be one of fast, exact, got "slow"');
  // A name on Object's prototype is not a declared knob.
  assert.equal(knobProblem('eng', spec, { toString: 1 }), 'eng: unknown knob "toString"; its knobs are ef, mode');
  assert.equal(knobProblem('eng', {}, { ef: 1 }), 'eng: unknown knob "ef"; it has no search knob (its ladders are { "knobs": {} })');
  assert.equal(knobProblem('eng', { r: intKnob(0) }, { r: -1 }), 'eng: knob r must be an integer >= 0, got -1');
});

test('withCheckedKnobs refuses before the session sees the knobs, and passes valid ones through', async () => {
  const seen: Knobs[] = [];
  const session = withCheckedKnobs('eng', { ef: intKnob(1) }, { setKnobs: async (k: Knobs) => void seen.push(k) });
  await assert.rejects(session.setKnobs({ ef: -3 }), (e) => e instanceof UserError && e.message === 'eng: knob ef must be a positive integer, got -3');
  await assert.rejects(session.setKnobs({ ef: 8, probes: 2 }), /^UserError: eng: unknown knob "probes"; its knobs are ef$/);
  assert.deepEqual(seen, []);
  await session.setKnobs({ ef: 8 });
  await session.setKnobs({});
  assert.deepEqual(seen, [{ ef: 8 }, {}]);
});

test('settings.json naming an undeclared knob or a bad value is refused when it is read, naming where', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'vecbench-knobs-'));
  try {
    const settings = (over: object) => {
      const path = join(dir, `s${Math.random().toString(36).slice(2)}.json`);
      writeFileSync(path, JSON.stringify({ index: {}, ladders: [{ k: [10], knobs: { ef: [10, 20] } }], ...over }));
      return path;
    };
    await loadParticipant('hnswlib', settings({}));
    await assert.rejects(
      loadParticipant('hnswlib', settings({ ladders: [{ knobs: { ef: [10] } }, { k: [100], knobs: { eff: [100] } }] })),
      (e) => e instanceof UserError && e.message === 'participant hnswlib: settings.json ladders.1.knobs: unknown knob "eff"; its knobs are ef',
    );
    await assert.rejects(
      loadParticipant('hnswlib', settings({ ladders: [{ knobs: { ef: [0, 10] } }] })),
      (e) => e instanceof UserError && e.message === 'participant hnswlib: settings.json ladders.0.knobs: knob ef must be a positive integer, got 0',
    );
    await assert.rejects(
      loadParticipant('hnswlib', settings({ calibration: { knob: 'ef_search' } })),
      /participant hnswlib: settings.json calibration.knob: no knob of "ef_search" is one it takes; its knobs are ef$/,
    );
    // Knobs that depend on the index settings: faiss's HNSW takes efSearch, not nprobe.
    await assert.rejects(
      loadParticipant('faiss', settings({ index: { type: 'hnsw' }, ladders: [{ knobs: { nprobe: [1] } }] })),
      /participant faiss: settings.json ladders.0.knobs: unknown knob "nprobe"; its knobs are efSearch$/,
    );
    await loadParticipant('faiss', settings({ index: { type: 'ivfpq', nlist: 16, pq_m: 8 }, ladders: [{ knobs: { nprobe: [1, 2], k_factor: [1] } }] }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
