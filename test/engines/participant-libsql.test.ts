// The libSQL participant end to end on the harness's small synthetic set: the real embedded
// engine (DiskANN), its ladders, the post-filter and the exact path, writes, reopen and settings
// validation, with the contract suite on the same load: its reads first, these tests, then its
// writes and reopen, then the reopen test here (on the database the suite's reopen left).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { FilterExpr } from '../../src/contracts.ts';
import { passes } from '../../src/datasets/groups.ts';
import { loadParticipant, PARTICIPANTS_DIR } from '../../src/runner/participants.ts';
import { CONTRACT_QUERIES, CONTRACT_ROWS, contractSuite } from '../contract/suite.ts';
import { checkLadder, openOnSynthetic, assertClean, assertRising, top, rowsOf, rowVector } from '../helpers/participant-harness.ts';

type Opened = Awaited<ReturnType<typeof openOnSynthetic>>;

describe('participant libsql', () => {
  let o: Opened;
  before(async () => {
    o = await openOnSynthetic('libsql', { n: CONTRACT_ROWS, nq: CONTRACT_QUERIES });
  });
  after(async () => {
    await o?.cleanup();
  });

  contractSuite('libsql', join(PARTICIPANTS_DIR, 'libsql'), { shared: () => o, part: 'reads' });

  test('reports the installed engine version', async () => {
    assert.match(await o.participant.adapter.engineVersion(), /^\d+\.\d+\.\d+/);
  });

  test('unfiltered k=10 reaches recall >= 0.95 and rises along the ladder', async () => {
    const points = await checkLadder(o, 'none', 10);
    assert.ok(points.length >= 5, 'ladder has points');
    assertClean(points);
    assertRising(points);
    assert.ok(top(points).recall >= 0.95, `top recall ${top(points).recall}`);
    assert.equal(top(points).shortResults, 0);
  });

  for (const filter of ['cat10', 'num1', 'lang']) {
    test(`post-filter ${filter} at k=10: no violations, recall >= 0.9 at the top index point, exact at the end`, async () => {
      const points = await checkLadder(o, filter, 10);
      assert.ok(points.length > 1, `a ladder rule matches ${filter}/10`);
      assertClean(points);
      const exact = top(points);
      assert.equal(exact.knobs.search_l, 'exact');
      assert.ok(exact.recall >= 0.999 && exact.shortResults === 0, `${filter}: exact recall ${exact.recall}`);
      const index = points.filter((p) => p.knobs.search_l !== 'exact');
      assertRising(index);
      assert.ok(top(index).recall >= 0.9, `${filter}: top index recall ${top(index).recall}`);
    });
  }

  test('the post-filter fails by returning short results, never other rows', async () => {
    const points = await checkLadder(o, 'cat100', 10);
    assertClean(points);
    assert.ok(points[0].shortResults > 0, 'the smallest search_l leaves queries short on a 1 % filter');
  });

  test('k=100 works, unfiltered and with cat10', async () => {
    for (const filter of ['none', 'cat10']) {
      const points = await checkLadder(o, filter, 100);
      assertClean(points);
      assert.ok(top(points).recall >= 0.95, `${filter}/100 top recall ${top(points).recall}`);
    }
  });

  test('plans: vector_top_k with the join by id, or the exact scan; checkPlan refuses a plan without the index', async () => {
    const s = o.session;
    const vector = o.data.queries.slice(0, o.data.d);
    const filter: FilterExpr = {
      op: 'and',
      args: [
        { op: 'eq', field: 'cat10', value: 3 },
        { op: 'range', field: 'num', gte: 0, lt: 500_000 },
      ],
    };
    await s.setKnobs({ search_l: 37 });
    const plain = await s.explain!({ vector, k: 10, filter: null });
    assert.match(plain, /search_l=37/);
    assert.match(plain, /VIRTUAL TABLE/);
    s.checkPlan!(plain, { vector, k: 10, filter: null });
    const filtered = await s.explain!({ vector, k: 10, filter });
    assert.match(filtered, /post-filter/);
    s.checkPlan!(filtered, { vector, k: 10, filter });
    assert.throws(() => s.checkPlan!('SCAN items', { vector, k: 10, filter: null }), /does not read vector_top_k/);
    // After ANALYZE on a larger table SQLite may look candidates up through an attribute's
    // covering index (value, rowid) instead of the primary key: still a lookup by rowid.
    s.checkPlan!('SCAN v VIRTUAL TABLE INDEX 1:\nSEARCH t USING COVERING INDEX items_cat10 (cat10=? AND rowid=?)', { vector, k: 10, filter });
    assert.throws(() => s.checkPlan!('SCAN v VIRTUAL TABLE INDEX 1:\nSCAN t', { vector, k: 10, filter }), /does not look the candidates up by rowid/);
    await s.setKnobs({ search_l: 'exact' });
    const exact = await s.explain!({ vector, k: 10, filter });
    assert.match(exact, /^exact/);
    assert.doesNotMatch(exact, /VIRTUAL TABLE/);
    s.checkPlan!(exact, { vector, k: 10, filter });
  });

  test('a filter keeping few rows returns only matching rows, short when fewer exist', async () => {
    const { session, data } = o;
    await session.setKnobs({ search_l: 64 });
    const f: FilterExpr = { op: 'eq', field: 'cat1000', value: data.attrs.cat1000[0] };
    const got = Array.from(await session.search({ vector: rowVector(o, 0), k: 10, filter: f }));
    const matching = Array.from({ length: data.n }, (_, i) => i).filter((i) => passes(f, data.attrs, i));
    assert.ok(got.length <= matching.length && got[0] === 0, `got ${got}, ${matching.length} rows match`);
    for (const id of got) assert.ok(passes(f, data.attrs, id), `${id} violates the filter`);
  });

  test('unknown knobs and bad values are refused', async () => {
    await assert.rejects(o.session.setKnobs({ ef_search: 10 }), /libsql: unknown knob "ef_search"/);
    await assert.rejects(o.session.setKnobs({ search_l: 0 }), /libsql: knob search_l must be an integer/);
    await assert.rejects(o.session.setKnobs({ search_l: 'exakt' }), /libsql: knob search_l must be an integer 1..100000 or "exact"/);
  });

  test('writes: deleted ids never come back; reinserted, new and upserted rows are found', async () => {
    const s = o.session;
    const { data } = o;
    assert.ok(s.delete && s.insert && s.upsert);
    await s.setKnobs({ search_l: 64 });
    const victims = [3, 17, 256, 1024, 2047, 2999];
    for (const id of victims) assert.equal((await s.search({ vector: rowVector(o, id), k: 1, filter: null }))[0], id);
    await s.delete(Int32Array.from(victims));
    const noneBack = async (when: string) => {
      for (const id of victims) {
        const got = Array.from(await s.search({ vector: rowVector(o, id), k: 10, filter: null }));
        assert.equal(got.length, 10, `${when}: full result for ${id}`);
        for (const v of victims) assert.ok(!got.includes(v), `${when}: deleted id ${v} returned`);
        const f: FilterExpr = { op: 'eq', field: 'cat10', value: data.attrs.cat10[id] };
        for (const g of Array.from(await s.search({ vector: rowVector(o, id), k: 10, filter: f }))) {
          assert.ok(!victims.includes(g), `${when}: deleted id ${g} returned under a filter`);
          assert.ok(passes(f, data.attrs, g), `${when}: ${g} violates the filter`);
        }
      }
    };
    await noneBack('after delete');
    await s.setKnobs({ search_l: 'exact' });
    await noneBack('after delete, exact path');
    await s.setKnobs({ search_l: 64 });

    // New ids past n are in the index as soon as the insert returns.
    const fresh = Array.from({ length: 40 }, (_, i) => data.n + i);
    const sources = fresh.map((_, i) => 100 + i * 7);
    await s.insert(rowsOf(o, sources, fresh));
    const findFresh = async (when: string) => {
      for (let i = 0; i < fresh.length; i += 9) {
        const got = Array.from(await s.search({ vector: rowVector(o, sources[i]), k: 10, filter: null }));
        assert.ok(got.includes(fresh[i]), `${when}: new id ${fresh[i]} not found (got ${got})`);
      }
    };
    await findFresh('after insert');
    // The deleted ids come back when inserted again.
    await s.insert(rowsOf(o, victims));
    for (const id of victims) assert.equal((await s.search({ vector: rowVector(o, id), k: 10, filter: null }))[0], id, `reinserted ${id}`);
    await findFresh('after the reinsert');
    // Upsert replaces a live row: id 5 takes row 9's vector. The row holds the new vector (the
    // exact path no longer finds id 5 by its old one); through the index, neighbours' stale
    // copies of the old vector may still reach it (README, "Writes"), so that is not asserted.
    await s.upsert(rowsOf(o, [9], [5]));
    const got = Array.from(await s.search({ vector: rowVector(o, 9), k: 2, filter: null }));
    assert.deepEqual(
      [...got].sort((a, b) => a - b),
      [5, 9],
    );
    await s.setKnobs({ search_l: 'exact' });
    assert.notEqual((await s.search({ vector: rowVector(o, 5), k: 1, filter: null }))[0], 5, 'the row of id 5 no longer holds its old vector');
    await s.setKnobs({ search_l: 64 });
    assert.ok((await s.diskBytes!()) > data.n * data.d * 4, 'disk bytes cover at least the raw vectors');
    // Back to the base rows: the contract suite's write checks, later on this engine, judge the
    // ids a filter returns by the base rows' attributes.
    await s.delete(Int32Array.from(fresh));
    await s.upsert(rowsOf(o, [5]));
  });

  test('a bad index setting is rejected with a path naming the field', async () => {
    const p = await loadParticipant('libsql');
    const r = p.adapter.settingsSchema.safeParse({ max_neighbors: -1 });
    assert.equal(r.success, false);
    assert.deepEqual(r.error!.issues[0].path, ['max_neighbors']);
    const r2 = p.adapter.settingsSchema.safeParse({ compress_neighbors: 'int4' });
    assert.equal(r2.success, false);
    assert.deepEqual(r2.error!.issues[0].path, ['compress_neighbors']);
    const r3 = p.adapter.settingsSchema.safeParse({ ef: 10 });
    assert.equal(r3.success, false, 'unknown settings are refused');
  });

  // The suite's write checks and its reopen, which closes the session.
  contractSuite('libsql', join(PARTICIPANTS_DIR, 'libsql'), { shared: () => o, part: 'writes' });

  // After the suite's reopen check, which closed the loaded session: the session closed here is
  // one reopened, without ingest, on the database that check left.
  test('reopen: the database a closed session left answers again without ingest', async () => {
    const { data, participant, workDir } = o;
    const ctx = {
      dataset: { name: 'synthetic-test', n: data.n, d: data.d, metric: data.metric, hasText: false },
      settings: participant.index,
      workDir,
      maxConcurrency: 1,
      log: () => {},
    };
    const live = await participant.adapter.reopen!(ctx);
    await live.setKnobs({ search_l: 32 });
    const bytes = await live.diskBytes!();
    const requests = Array.from({ length: 10 }, (_, q) => ({
      vector: data.queries.slice(q * data.d, (q + 1) * data.d),
      k: 10,
      filter: q % 2 ? ({ op: 'eq', field: 'cat10', value: q } as const) : null,
    }));
    const before: number[][] = [];
    for (const r of requests) before.push(Array.from(await live.search(r)));
    await live.close();
    const session = await participant.adapter.reopen!(ctx);
    try {
      await session.setKnobs({ search_l: 32 });
      // libSQL starts each DiskANN search at a random node, so answers may differ in a row or
      // two between searches; the reopened index must hold the same rows and answer as well.
      let same = 0;
      for (let i = 0; i < requests.length; i++) {
        const got = Array.from(await session.search(requests[i]));
        same += got.filter((id) => before[i].includes(id)).length;
      }
      assert.ok(same >= 0.9 * before.flat().length, `${same} of ${before.flat().length} ids agree after reopen`);
      assert.match(await session.explain!(requests[0]), /search_l=32/);
      const recall = await checkLadder({ ...o, session }, 'none', 10);
      assert.ok(top(recall).recall >= 0.95, `top recall after reopen ${top(recall).recall}`);
      assert.ok((await session.diskBytes!()) >= bytes * 0.9, 'the reopened database holds the data');
    } finally {
      await session.close();
    }
  });
});
