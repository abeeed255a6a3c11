// The zvec participant end to end on the harness's small synthetic set: the real embedded
// engine, its ladders, its prefilter, writes, reopen and settings validation, with the contract
// suite on the same load: its reads first, these tests, then its writes and reopen, then the
// reopen test here (on the collection the suite's reopen left).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { FilterExpr } from '../../src/contracts.ts';
import { passes } from '../../src/datasets/groups.ts';
import { loadParticipant, PARTICIPANTS_DIR } from '../../src/runner/participants.ts';
import { CONTRACT_QUERIES, CONTRACT_ROWS, contractSuite } from '../contract/suite.ts';
import { checkLadder, openOnSynthetic, assertClean, assertRising, top, rowsOf, rowVector } from '../helpers/participant-harness.ts';

type Opened = Awaited<ReturnType<typeof openOnSynthetic>>;

describe('participant zvec', () => {
  let o: Opened;
  before(async () => {
    o = await openOnSynthetic('zvec', { n: CONTRACT_ROWS, nq: CONTRACT_QUERIES });
  });
  after(async () => {
    await o?.cleanup();
  });

  contractSuite('zvec', join(PARTICIPANTS_DIR, 'zvec'), { shared: () => o, part: 'reads' });

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

  for (const filter of ['cat10', 'num1', 'cat10+num10', 'lang', 'farcluster']) {
    test(`prefilter ${filter} at k=10: no violations, recall >= 0.9 at the top`, async () => {
      const points = await checkLadder(o, filter, 10);
      assert.ok(points.length > 0, `a ladder rule matches ${filter}/10`);
      assertClean(points);
      assert.ok(top(points).recall >= 0.9, `${filter}: top recall ${top(points).recall}`);
    });
  }

  test('k=100 works, unfiltered and with cat10', async () => {
    for (const filter of ['none', 'cat10']) {
      const points = await checkLadder(o, filter, 100);
      assertClean(points);
      assert.ok(top(points).recall >= 0.95, `${filter}/100 top recall ${top(points).recall}`);
    }
  });

  test('a filter keeping few rows returns only matching rows, short when fewer exist', async () => {
    const { session, data } = o;
    await session.setKnobs({ ef: 64 });
    const f: FilterExpr = { op: 'eq', field: 'cat1000', value: data.attrs.cat1000[0] };
    const got = Array.from(await session.search({ vector: rowVector(o, 0), k: 10, filter: f }));
    const matching = Array.from({ length: data.n }, (_, i) => i).filter((i) => passes(f, data.attrs, i));
    assert.ok(got.length <= matching.length && got[0] === 0, `got ${got}, ${matching.length} rows match`);
    for (const id of got) assert.ok(passes(f, data.attrs, id), `${id} violates the filter`);
  });

  test('unknown knobs and bad values are refused', async () => {
    await assert.rejects(o.session.setKnobs({ ef_search: 10 }), /zvec: unknown knob "ef_search"/);
    await assert.rejects(o.session.setKnobs({ ef: 0 }), /zvec: knob ef must be a positive integer/);
  });

  test('writes: deleted ids never come back (also after compact); reinserted, new and upserted rows are found', async () => {
    const s = o.session;
    const { data } = o;
    assert.ok(s.delete && s.insert && s.upsert && s.compact);
    await s.setKnobs({ ef: 64 });
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
    await s.compact();
    await noneBack('after compact');

    // New ids past n are found at once (brute force over the unindexed segment) and after compact.
    const fresh = Array.from({ length: 40 }, (_, i) => data.n + i);
    const sources = fresh.map((_, i) => 100 + i * 7);
    await s.insert(rowsOf(o, sources, fresh));
    const findFresh = async (when: string) => {
      for (let i = 0; i < fresh.length; i += 9) {
        const got = Array.from(await s.search({ vector: rowVector(o, sources[i]), k: 10, filter: null }));
        assert.ok(got.includes(fresh[i]), `${when}: new id ${fresh[i]} not found (got ${got})`);
      }
    };
    await findFresh('before compact');
    // The deleted ids come back when inserted again.
    await s.insert(rowsOf(o, victims));
    for (const id of victims) assert.equal((await s.search({ vector: rowVector(o, id), k: 10, filter: null }))[0], id, `reinserted ${id}`);
    await s.compact();
    await findFresh('after compact');
    // Upsert replaces a live row: id 5 takes row 9's vector, and its old vector is gone.
    await s.upsert(rowsOf(o, [9], [5]));
    const got = Array.from(await s.search({ vector: rowVector(o, 9), k: 2, filter: null }));
    assert.deepEqual(
      [...got].sort((a, b) => a - b),
      [5, 9],
    );
    assert.notEqual((await s.search({ vector: rowVector(o, 5), k: 1, filter: null }))[0], 5, 'the old vector of id 5 is gone');
    assert.ok((await s.diskBytes!()) > data.n * data.d * 4, 'disk bytes cover at least the raw vectors');
    // Back to the base rows: the contract suite's write checks, later on this engine, judge the
    // ids a filter returns by the base rows' attributes.
    await s.delete(Int32Array.from(fresh));
    await s.upsert(rowsOf(o, [5]));
  });

  test('a bad index setting is rejected with a path naming the field', async () => {
    const p = await loadParticipant('zvec');
    const r = p.adapter.settingsSchema.safeParse({ m: -1 });
    assert.equal(r.success, false);
    assert.deepEqual(r.error!.issues[0].path, ['m']);
    const r2 = p.adapter.settingsSchema.safeParse({ quantize: 'int4' });
    assert.equal(r2.success, false);
    assert.deepEqual(r2.error!.issues[0].path, ['quantize']);
    const r3 = p.adapter.settingsSchema.safeParse({ ef: 10 });
    assert.equal(r3.success, false, 'unknown settings are refused');
  });

  // The suite's write checks and its reopen, which closes the session.
  contractSuite('zvec', join(PARTICIPANTS_DIR, 'zvec'), { shared: () => o, part: 'writes' });

  // After the suite's reopen check, which closed the loaded session: the session closed here is
  // one reopened, without ingest, on the collection that check left.
  test('reopen: the collection a closed session left answers again without ingest', async () => {
    const { data, participant, workDir } = o;
    const ctx = {
      dataset: { name: 'synthetic-test', n: data.n, d: data.d, metric: data.metric, hasText: false },
      settings: participant.index,
      workDir,
      maxConcurrency: 1,
      log: () => {},
    };
    const live = await participant.adapter.reopen!(ctx);
    await live.setKnobs({ ef: 32 });
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
      await session.setKnobs({ ef: 32 });
      for (let i = 0; i < requests.length; i++) assert.deepEqual(Array.from(await session.search(requests[i])), before[i], `query ${i} after reopen`);
    } finally {
      await session.close();
    }
  });
});
