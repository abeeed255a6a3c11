// hnswlib-node participant, end to end on the harness's small synthetic set (real engine), with
// the contract suite on the same load: its reads first, these tests, then its writes and reopen.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { RowAttributes, RowBatch } from '../../src/contracts.ts';
import { ATTRIBUTES } from '../../src/contracts.ts';
import { passes } from '../../src/datasets/groups.ts';
import { loadParticipant, PARTICIPANTS_DIR } from '../../src/runner/participants.ts';
import { CONTRACT_QUERIES, CONTRACT_ROWS, contractSuite } from '../contract/suite.ts';
import { checkLadder, openOnSynthetic } from '../helpers/participant-harness.ts';

let opened: Awaited<ReturnType<typeof openOnSynthetic>>;

before(async () => {
  opened = await openOnSynthetic('hnswlib', { n: CONTRACT_ROWS, nq: CONTRACT_QUERIES });
});
after(async () => {
  await opened?.cleanup();
});

contractSuite('hnswlib', join(PARTICIPANTS_DIR, 'hnswlib'), { shared: () => opened, part: 'reads' });

function rows(ids: number[], idsAs?: number[]): RowBatch {
  const { data } = opened;
  const d = data.d;
  const vectors = new Float32Array(ids.length * d);
  ids.forEach((id, i) => vectors.set(data.base.subarray(id * d, (id + 1) * d), i * d));
  const attrs = Object.fromEntries(ATTRIBUTES.map((a) => [a, Int32Array.from(ids, (id) => data.attrs[a][id])])) as RowAttributes;
  return { ids: Int32Array.from(idsAs ?? ids), vectors, attrs };
}

const vectorOf = (id: number) => opened.data.base.slice(id * opened.data.d, (id + 1) * opened.data.d);

test('unfiltered k=10 reaches recall >= 0.95 and rises along the ladder', async () => {
  const pts = await checkLadder(opened, 'none', 10);
  assert.ok(pts.length >= 5, 'ladder has points');
  for (let i = 1; i < pts.length; i++) assert.ok(pts[i].recall >= pts[i - 1].recall - 0.02, `recall falls at ${JSON.stringify(pts[i].knobs)}`);
  assert.ok(pts[pts.length - 1].recall >= 0.95, `top recall ${pts[pts.length - 1].recall}`);
  for (const p of pts) assert.equal(p.unknownOrDuplicate, 0);
});

for (const filter of ['cat10', 'num1', 'cat10+num10', 'lang']) {
  test(`filter ${filter} at k=10: no violations, recall >= 0.9 at the top`, async () => {
    const pts = await checkLadder(opened, filter, 10);
    assert.ok(pts.length > 0);
    for (const p of pts) {
      assert.equal(p.violations, 0, `violations at ${JSON.stringify(p.knobs)}`);
      assert.equal(p.unknownOrDuplicate, 0, `unknown or duplicate ids at ${JSON.stringify(p.knobs)}`);
    }
    assert.ok(pts[pts.length - 1].recall >= 0.9, `top recall ${pts[pts.length - 1].recall}`);
  });
}

test('k=100 works, unfiltered and with cat10', async () => {
  for (const filter of ['none', 'cat10']) {
    const pts = await checkLadder(opened, filter, 100);
    assert.ok(pts.length > 0);
    const top = pts[pts.length - 1];
    assert.equal(top.violations, 0);
    assert.equal(top.unknownOrDuplicate, 0);
    assert.ok(top.recall >= 0.95, `${filter}/100 top recall ${top.recall}`);
  }
});

test('k larger than the index, and a filter keeping few rows, return short results without throwing', async () => {
  const { session, data } = opened;
  await session.setKnobs({ ef: 64 });
  const all = await session.search({ vector: vectorOf(0), k: data.n + 500, filter: null });
  assert.ok(all.length <= data.n && all.length > 0);
  // cat1000 keeps ~3 of 3,000 rows here.
  const filter = { op: 'eq', field: 'cat1000', value: data.attrs.cat1000[0] } as const;
  const got = Array.from(await session.search({ vector: vectorOf(0), k: 10, filter }));
  assert.ok(got.length < 10 && got.includes(0), `got ${got}`);
  for (const id of got) assert.ok(passes(filter, data.attrs, id));
});

test('writes: deleted ids never come back; reinserted and new ids are found', async () => {
  const { session, data } = opened;
  assert.ok(session.delete && session.insert && session.upsert);
  await session.setKnobs({ ef: 64 });
  const victims = [3, 17, 256, 1024, 2047, 2999];
  await session.delete(Int32Array.from(victims));
  for (const id of victims) {
    const got = Array.from(await session.search({ vector: vectorOf(id), k: 10, filter: null }));
    assert.equal(got.length, 10);
    for (const v of victims) assert.ok(!got.includes(v), `deleted id ${v} returned`);
    const f = { op: 'eq', field: 'cat10', value: data.attrs.cat10[id] } as const;
    const gotF = Array.from(await session.search({ vector: vectorOf(id), k: 10, filter: f }));
    for (const v of victims) assert.ok(!gotF.includes(v), `deleted id ${v} returned under a filter`);
  }
  // New ids beyond n take the deleted slots (replaceDeleted) and then grow the index.
  const fresh = Array.from({ length: 40 }, (_, i) => data.n + i);
  const sources = fresh.map((_, i) => 100 + i * 7);
  await session.insert(rows(sources, fresh));
  for (let i = 0; i < fresh.length; i += 9) {
    const got = Array.from(await session.search({ vector: vectorOf(sources[i]), k: 10, filter: null }));
    assert.ok(got.includes(fresh[i]), `new id ${fresh[i]} not found`);
  }
  // The deleted ids come back when inserted again, even after their slots were taken over.
  await session.insert(rows(victims));
  for (const id of victims) {
    const got = Array.from(await session.search({ vector: vectorOf(id), k: 10, filter: null }));
    assert.equal(got[0], id, `reinserted id ${id} is not its own top hit (got ${got})`);
  }
  for (let i = 0; i < fresh.length; i += 9) {
    const got = Array.from(await session.search({ vector: vectorOf(sources[i]), k: 10, filter: null }));
    assert.ok(got.includes(fresh[i]), `new id ${fresh[i]} lost after the reinsert`);
  }
  // Upsert moves a row: id 5 takes row 9's vector.
  await session.upsert(rows([9], [5]));
  const got = Array.from(await session.search({ vector: vectorOf(9), k: 2, filter: null }));
  assert.deepEqual(
    [...got].sort((a, b) => a - b),
    [5, 9],
  );
  assert.ok((await session.diskBytes!()) > data.n * data.d * 4);
  // Back to the base rows: the contract suite's write checks, later on this engine, judge the
  // ids a filter returns by the base rows' attributes.
  await session.delete(Int32Array.from(fresh));
  await session.upsert(rows([5]));
});

test('a bad index setting is rejected with a path naming the field', async () => {
  const p = await loadParticipant('hnswlib');
  const r = p.adapter.settingsSchema.safeParse({ M: -1 });
  assert.equal(r.success, false);
  assert.deepEqual(r.error!.issues[0].path, ['M']);
  const r2 = p.adapter.settingsSchema.safeParse({ efConstruction: 'big' });
  assert.equal(r2.success, false);
  assert.deepEqual(r2.error!.issues[0].path, ['efConstruction']);
  assert.match(await p.adapter.engineVersion(), /^\d+\.\d+\.\d+/);
});

// Last: the suite's write checks and its reopen, which closes the session.
contractSuite('hnswlib', join(PARTICIPANTS_DIR, 'hnswlib'), { shared: () => opened, part: 'writes' });
