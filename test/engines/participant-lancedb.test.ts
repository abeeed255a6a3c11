// The LanceDB participant end to end on the harness's small synthetic set: the real embedded
// engine, its ladders, filters, writes and settings validation, with the contract suite on the
// same load: its reads first, these tests, then its writes and reopen.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { FilterExpr } from '../../src/contracts.ts';
import { passes } from '../../src/datasets/groups.ts';
import { ladderFor, PARTICIPANTS_DIR } from '../../src/runner/participants.ts';
import { CONTRACT_QUERIES, CONTRACT_ROWS, contractSuite } from '../contract/suite.ts';
import { checkLadder, openOnSynthetic, type PointCheck, assertClean, top, rowsOf, rowVector } from '../helpers/participant-harness.ts';

type Opened = Awaited<ReturnType<typeof openOnSynthetic>>;

function assertRising(points: PointCheck[]): void {
  for (let i = 1; i < points.length; i++) {
    assert.ok(
      points[i].recall >= points[i - 1].recall - 0.02,
      `recall falls along the ladder: ${points[i - 1].recall} at ${JSON.stringify(points[i - 1].knobs)} then ${points[i].recall} at ${JSON.stringify(points[i].knobs)}`,
    );
  }
}

/** The base vector of a row used as a query: its own row must come back first. */
describe('participant lancedb', () => {
  let o: Opened;
  before(async () => {
    o = await openOnSynthetic('lancedb', { n: CONTRACT_ROWS, nq: CONTRACT_QUERIES });
  });
  after(async () => {
    await o?.cleanup();
  });

  contractSuite('lancedb', join(PARTICIPANTS_DIR, 'lancedb'), { shared: () => o, part: 'reads' });

  test('reports the installed engine version', async () => {
    assert.match(await o.participant.adapter.engineVersion(), /^\d+\.\d+\.\d+/);
  });

  test('unfiltered k=10 reaches recall >= 0.95 and rises along the ladder', async () => {
    const points = await checkLadder(o, 'none', 10);
    // Four points: calibration measures each target recall between them.
    assert.ok(points.length >= 4, 'the k=10 ladder has at least 4 points');
    assertClean(points);
    assertRising(points);
    assert.ok(top(points).recall >= 0.95, `top of ladder recall ${top(points).recall}`);
    assert.equal(top(points).shortResults, 0);
  });

  for (const filter of ['cat10', 'num1', 'cat10+num10']) {
    test(`filter ${filter} at k=10: no violations, recall >= 0.9 at the top`, async () => {
      const points = await checkLadder(o, filter, 10);
      assert.ok(points.length > 0, `a ladder rule matches ${filter}/10`);
      assertClean(points);
      assertRising(points);
      assert.ok(top(points).recall >= 0.9, `${filter}: top of ladder recall ${top(points).recall}`);
    });
  }

  test('k=100 works', async () => {
    const points = await checkLadder(o, 'none', 100);
    assertClean(points);
    assert.ok(top(points).recall >= 0.95, `k=100 top of ladder recall ${top(points).recall}`);
    const filtered = await checkLadder(o, 'cat10', 100);
    assertClean(filtered);
    assert.ok(top(filtered).recall >= 0.9, `cat10/100 top of ladder recall ${top(filtered).recall}`);
  });

  test('the plan uses the IVF index and the scalar indexes', async () => {
    const session = o.session;
    await session.setKnobs(ladderFor(o.participant.settings, 'cat10', 10)[0]);
    const filter: FilterExpr = {
      op: 'and',
      args: [
        { op: 'eq', field: 'cat10', value: 3 },
        { op: 'range', field: 'num', gte: 0, lt: 500_000 },
      ],
    };
    const request = { vector: o.data.queries.slice(0, o.data.d), k: 10, filter };
    const plan = await session.explain!(request);
    assert.match(plan, /ANNIvfPartition/);
    assert.match(plan, /ScalarIndexQuery/);
    assert.match(plan, /cat10_idx\(Bitmap\)/);
    assert.match(plan, /num_idx\(BTree\)/);
    session.checkPlan!(plan, request);
    assert.throws(() => session.checkPlan!('KNNVectorDistance: metric=dot', request), /vector index/);
    assert.ok((await session.diskBytes!()) > o.data.n * o.data.d * 4, 'disk bytes cover at least the raw vectors');
  });

  test('overlapping searches (concurrentSearch) answer like sequential ones', async () => {
    assert.equal(o.participant.adapter.concurrentSearch, true);
    await o.session.setKnobs({ nprobes: 8 });
    const reqs = Array.from({ length: 24 }, (_, q) => ({
      vector: o.data.queries.slice(q * o.data.d, (q + 1) * o.data.d),
      k: 10,
      filter: q % 2 ? ({ op: 'eq', field: 'cat10', value: q % 10 } as const) : null,
    }));
    const sequential: number[][] = [];
    for (const r of reqs) sequential.push(Array.from(await o.session.search(r)));
    const overlapping = await Promise.all(reqs.map((r) => o.session.search(r)));
    overlapping.forEach((got, i) => assert.deepEqual(Array.from(got), sequential[i]));
  });

  test('unknown knobs are refused', async () => {
    await assert.rejects(o.session.setKnobs({ ef_search: 10 }), /unknown knob "ef_search"/);
  });

  test('writes: deleted ids never come back, reinserted and upserted rows are found', async () => {
    const s = o.session;
    const k = 10;
    await s.setKnobs({ nprobes: 1_000 }); // every partition: the index alone cannot hide a row
    const victims = [5, 17, 42, 99, 123, 640, 1500, 2999];
    const firstOf = async (id: number, filter: FilterExpr | null = null) => Array.from(await s.search({ vector: rowVector(o, id), k, filter }));
    for (const id of victims) assert.equal((await firstOf(id))[0], id, `row ${id} is its own nearest neighbour before the delete`);

    await s.delete!(Int32Array.from(victims));
    const gone = new Set(victims);
    const noneBack = async (when: string) => {
      for (const id of victims) {
        const got = await firstOf(id);
        assert.equal(got.length, k, `${when}: full result for ${id}`);
        for (const g of got) assert.ok(!gone.has(g), `${when}: deleted id ${g} came back`);
        const own = { op: 'eq', field: 'cat1000', value: o.data.attrs.cat1000[id] } as const;
        for (const g of await firstOf(id, own)) {
          assert.ok(!gone.has(g), `${when}: deleted id ${g} came back under a filter`);
          assert.ok(passes(own, o.data.attrs, g), `${when}: ${g} violates the filter`);
        }
      }
    };
    await noneBack('after delete');
    await s.compact!();
    await noneBack('after compact');

    // Rows added after the index was built are searched by a flat scan until compact().
    await s.insert!(rowsOf(o, victims.slice(0, 4)));
    for (const id of victims.slice(0, 4)) assert.equal((await firstOf(id))[0], id, `reinserted ${id} is found before compact`);
    const plan = await s.explain!({ vector: rowVector(o, victims[0]), k, filter: null });
    assert.match(plan, /KNNVectorDistance/, 'unindexed rows are scanned flat');
    await s.compact!();
    for (const id of victims.slice(0, 4)) assert.equal((await firstOf(id))[0], id, `reinserted ${id} is found after compact`);
    const afterCompact = await s.explain!({ vector: rowVector(o, victims[0]), k, filter: null });
    assert.doesNotMatch(afterCompact, /KNNVectorDistance/, 'compact() adds the new rows to the index');

    // Upsert: the other four come back through mergeInsert, and an existing row keeps one copy.
    await s.upsert!(rowsOf(o, [...victims.slice(4), 7]));
    for (const id of victims.slice(4)) assert.equal((await firstOf(id))[0], id, `upserted ${id} is found`);
    const seven = await firstOf(7);
    assert.equal(seven[0], 7);
    assert.equal(seven.filter((x) => x === 7).length, 1, 'an upserted existing row is not duplicated');
  });

  test('a bad index setting is rejected with a path naming the field', () => {
    const bad = o.participant.adapter.settingsSchema.safeParse({ m: -1 });
    assert.equal(bad.success, false);
    assert.deepEqual(bad.error!.issues[0].path, ['m']);
    const badType = o.participant.adapter.settingsSchema.safeParse({ index_type: 'HNSW' });
    assert.equal(badType.success, false);
    assert.deepEqual(badType.error!.issues[0].path, ['index_type']);
    const good = o.participant.adapter.settingsSchema.safeParse({});
    assert.equal(good.success, true);
  });

  // Last: the suite's write checks and its reopen, which closes the session. The writes above
  // leave the base rows in place (reinserted and upserted as they were).
  contractSuite('lancedb', join(PARTICIPANTS_DIR, 'lancedb'), { shared: () => o, part: 'writes' });
});
