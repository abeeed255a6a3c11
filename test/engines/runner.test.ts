import assert from 'node:assert/strict';
import { test } from 'node:test';
import { planSlices, queryOrder } from '../../src/runner/query-order.ts';
import { checkExactSearch, ladderFor, loadParticipant, settingsFileSchema } from '../../src/runner/participants.ts';

test('query order is a fixed permutation', () => {
  const a = queryOrder(1000);
  assert.deepEqual(a, queryOrder(1000));
  assert.deepEqual(
    [...a].sort((x, y) => x - y),
    Array.from({ length: 1000 }, (_, i) => i),
  );
  assert.notDeepEqual(
    Array.from(a.slice(0, 20)),
    Array.from({ length: 20 }, (_, i) => i),
  );
});

test('slices never repeat a query within a group and respect the caps', () => {
  for (const [nq, k, slots] of [
    [2000, 10, 28],
    [2000, 100, 20],
    [2000, 1000, 16],
    [10000, 10, 4],
    [200, 10, 50],
  ] as const) {
    const { first, slices } = planSlices(nq, k, slots);
    assert.equal(slices.length, slots);
    const per = slices[0][1] - slices[0][0];
    assert.ok(per <= { 10: 1000, 100: 500, 1000: 200 }[k]!);
    const seen = new Set<number>([first]);
    if (per * slots + 1 <= nq) {
      for (const [from, to] of slices)
        for (let i = from; i < to; i++) {
          assert.ok(!seen.has(i % nq), `query position ${i} twice (nq ${nq}, slots ${slots})`);
          seen.add(i % nq);
        }
    }
  }
});

test('ladders: first matching rule wins and knobs expand as a product', () => {
  const settings = settingsFileSchema.parse({
    index: {},
    ladders: [
      { k: [10], filters: ['cat10'], knobs: { a: [1, 2], b: ['x', 'y'] } },
      { k: [10], knobs: { ef: [10, 20, 40] } },
    ],
  });
  assert.deepEqual(ladderFor(settings, 'cat10', 10), [
    { a: 1, b: 'x' },
    { a: 1, b: 'y' },
    { a: 2, b: 'x' },
    { a: 2, b: 'y' },
  ]);
  assert.deepEqual(ladderFor(settings, 'none', 10), [{ ef: 10 }, { ef: 20 }, { ef: 40 }]);
  assert.deepEqual(ladderFor(settings, 'none', 100), []);
});

test('exact_search must name a knob value some ladder measures', async () => {
  const settings = settingsFileSchema.parse({ index: {}, ladders: [{ knobs: { ef_search: [10, 40, 'exact'] } }], exact_search: { ef_search: 'exact' } });
  checkExactSearch('p', settings);
  assert.throws(
    () => checkExactSearch('p', { ...settings, exact_search: { ef_search: 'exakt' } }),
    /^UserError: participant p: settings\.json exact_search\.ef_search: no ladder lists ef_search "exakt"; add it to a ladder or correct exact_search$/,
  );
  assert.throws(() => checkExactSearch('p', { ...settings, exact_search: { ef: 'exact' } }), /no ladder lists ef "exact"/);
  // pgvector-pglite declares its exact scan.
  assert.deepEqual((await loadParticipant('pgvector-pglite')).settings.exact_search, { ef_search: 'exact' });
});
