// Ladder rules matched by dataset (docs/contracts.md, settings.json): a rule naming `datasets`
// applies to those sets only, and the participants' real-data rules load and resolve.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ladderFor, laddersForDataset, listParticipants, loadParticipant, settingsFileSchema } from '../../src/runner/participants.ts';

describe('ladder rules with a datasets matcher', () => {
  const settings = settingsFileSchema.parse({
    index: {},
    ladders: [
      { k: [10], filters: ['none'], datasets: ['glove-100-angular'], knobs: { ef: [50, 100, 200] } },
      { k: [10], datasets: ['glove-100-angular', 'fashion-mnist-784-euclidean'], knobs: { ef: [64] } },
      { k: [10], knobs: { ef: [10, 20] } },
    ],
  });

  test('a rule naming datasets applies to them only; other datasets fall through to the general rules', () => {
    assert.deepEqual(ladderFor(settings, 'none', 10, 'glove-100-angular'), [{ ef: 50 }, { ef: 100 }, { ef: 200 }]);
    assert.deepEqual(ladderFor(settings, 'cat10', 10, 'glove-100-angular'), [{ ef: 64 }]);
    assert.deepEqual(ladderFor(settings, 'none', 10, 'fashion-mnist-784-euclidean'), [{ ef: 64 }]);
    assert.deepEqual(ladderFor(settings, 'none', 10, 'synthetic-20k'), [{ ef: 10 }, { ef: 20 }]);
    // Without a dataset, dataset rules never match.
    assert.deepEqual(ladderFor(settings, 'none', 10), [{ ef: 10 }, { ef: 20 }]);
  });

  test('resolving for a dataset keeps its rules and the general ones, without the matcher', () => {
    const glove = laddersForDataset(settings.ladders, 'glove-100-angular');
    assert.equal(glove.length, 3);
    assert.ok(glove.every((r) => !('datasets' in r)));
    assert.deepEqual(ladderFor({ ...settings, ladders: glove }, 'none', 10), [{ ef: 50 }, { ef: 100 }, { ef: 200 }]);
    const synth = laddersForDataset(settings.ladders, 'synthetic-20k');
    assert.deepEqual(synth, [{ k: [10], knobs: { ef: [10, 20] } }]);
  });

  test('an empty datasets list is refused', () => {
    assert.equal(settingsFileSchema.safeParse({ index: {}, ladders: [{ datasets: [], knobs: { ef: [1] } }] }).success, false);
  });

  test("every participant's settings load for the real datasets and ask unfiltered k = 10", async () => {
    for (const name of listParticipants()) {
      for (const dataset of ['glove-100-angular', 'fashion-mnist-784-euclidean', 'synthetic-20k']) {
        const p = await loadParticipant(name, undefined, dataset);
        assert.ok(
          p.settings.ladders.every((r) => !('datasets' in r)),
          `${name} ${dataset}: matcher removed`,
        );
        assert.ok(ladderFor(p.settings, 'none', 10).length > 0, `${name} ${dataset}: none/10 has a ladder`);
      }
    }
  });
});
