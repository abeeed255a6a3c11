// usearch-direct participant (USearch through vecbench's own addon), end to end on the harness's
// small synthetic set (real engine), with the contract suite on the same load: its reads first,
// these tests, then its writes and reopen. One test holds it to the `usearch` participant: the
// same library version reading the same index file must return the same top-k.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { FilterExpr, RowAttributes, RowBatch } from '../../src/contracts.ts';
import { ATTRIBUTES } from '../../src/contracts.ts';
import { passes, STANDARD_KINDS } from '../../src/datasets/groups.ts';
import { loadParticipant, PARTICIPANTS_DIR } from '../../src/runner/participants.ts';
import { CONTRACT_QUERIES, CONTRACT_ROWS, contractSuite } from '../contract/suite.ts';
import { checkLadder, openOnSynthetic } from '../helpers/participant-harness.ts';
import { ADDON } from '../../participants/usearch-direct/adapter.ts';

let opened: Awaited<ReturnType<typeof openOnSynthetic>>;

before(async () => {
  opened = await openOnSynthetic('usearch-direct', { n: CONTRACT_ROWS, nq: CONTRACT_QUERIES });
});
after(async () => {
  await opened?.cleanup();
});

contractSuite('usearch-direct', join(PARTICIPANTS_DIR, 'usearch-direct'), { shared: () => opened, part: 'reads' });

function rows(ids: number[], idsAs?: number[]): RowBatch {
  const { data } = opened;
  const d = data.d;
  const vectors = new Float32Array(ids.length * d);
  ids.forEach((id, i) => vectors.set(data.base.subarray(id * d, (id + 1) * d), i * d));
  const attrs = Object.fromEntries(ATTRIBUTES.map((a) => [a, Int32Array.from(ids, (id) => data.attrs[a][id])])) as RowAttributes;
  return { ids: Int32Array.from(idsAs ?? ids), vectors, attrs };
}

const vectorOf = (id: number) => opened.data.base.slice(id * opened.data.d, (id + 1) * opened.data.d);
const queryOf = (q: number) => opened.data.queries.subarray(q * opened.data.d, (q + 1) * opened.data.d);

test('the same top-k as the usearch participant (the npm binding) reading the same index file', async () => {
  const { data, ctx, session } = opened;
  // The `usearch` participant reopens the files this session's buildIndex saved.
  const other = await loadParticipant('usearch');
  assert.ok(other.adapter.reopen);
  const theirs = await other.adapter.reopen({ ...ctx, settings: other.index });
  try {
    let compared = 0;
    for (const ef of [10, 32]) {
      await session.setKnobs({ expansion_search: ef });
      await theirs.setKnobs({ expansion_search: ef });
      for (let q = 0; q < Math.min(40, data.nq); q++) {
        const request = { vector: queryOf(q), k: 10, filter: null };
        assert.deepEqual(Array.from(await session.search(request)), Array.from(await theirs.search(request)), `query ${q}, expansion_search ${ef}`);
        compared++;
      }
    }
    assert.ok(compared >= 40);
  } finally {
    await theirs.close();
  }
});

test('unfiltered k=10 reaches recall >= 0.95 and rises along the ladder', async () => {
  const pts = await checkLadder(opened, 'none', 10);
  assert.ok(pts.length >= 5, 'ladder has points');
  for (let i = 1; i < pts.length; i++) assert.ok(pts[i].recall >= pts[i - 1].recall - 0.02, `recall falls at ${JSON.stringify(pts[i].knobs)}`);
  assert.ok(pts[pts.length - 1].recall >= 0.95, `top recall ${pts[pts.length - 1].recall}`);
  for (const p of pts) assert.equal(p.unknownOrDuplicate, 0);
});

for (const filter of ['cat10', 'num1', 'cat10+num10', 'lang']) {
  test(`filter ${filter} at k=10, judged during the walk: no violations, recall >= 0.9 at the top`, async () => {
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
  await session.setKnobs({ expansion_search: 64 });
  const all = await session.search({ vector: vectorOf(0), k: data.n + 500, filter: null });
  assert.ok(all.length <= data.n && all.length > 0);
  // cat1000 keeps ~3 of 3,000 rows here.
  const filter = { op: 'eq', field: 'cat1000', value: data.attrs.cat1000[0] } as const;
  const got = Array.from(await session.search({ vector: vectorOf(0), k: 10, filter }));
  assert.ok(got.length < 10 && got.includes(0), `got ${got}`);
  for (const id of got) assert.ok(passes(filter, data.attrs, id));
  await assert.rejects(session.search({ vector: new Float32Array(data.d + 1), k: 10, filter: null }), /query has \d+ floats/);
});

test('a pass timed in C++ (timedPass) answers each request as search() does, with a latency per query', async () => {
  const { session, data } = opened;
  assert.ok(session.timedPass, 'usearch-direct times its passes in C++');
  await session.setKnobs({ expansion_search: 32 });
  const n = 40;
  const kind = (name: string) => STANDARD_KINDS.find((x) => x.name === name)!;
  const group = (name: string) => Array.from({ length: n }, (_, q) => kind(name).forQuery(q, data.queryAttrs) as FilterExpr | null);
  const cat100 = group('cat100');
  // Unfiltered, a query group's filters (the same fields, each query's own values), and fields
  // that differ within a pass (searched one at a time from JavaScript).
  for (const filters of [group('none'), group('cat10'), group('cat10+num10'), cat100.map((f, q) => (q % 2 ? null : f))]) {
    const requests = filters.map((filter, q) => ({ vector: queryOf(q), k: 10, filter }));
    const pass = await session.timedPass(requests, 1);
    assert.equal(pass.results.length, n);
    assert.ok(pass.errors.every((e) => e === null));
    for (let q = 0; q < n; q++) {
      assert.ok(pass.latenciesMs[q] > 0 && pass.latenciesMs[q] < 1000, `latency ${pass.latenciesMs[q]} ms`);
      assert.deepEqual(Array.from(pass.results[q]), Array.from(await session.search(requests[q])), `query ${q}, filter ${JSON.stringify(filters[q])}`);
      if (filters[q]) for (const id of Array.from(pass.results[q])) assert.ok(passes(filters[q]!, data.attrs, id));
    }
  }
});

test('writes: deleted ids never come back; reinserted and new ids are found; upsert moves a row', async () => {
  const { session, data } = opened;
  assert.ok(session.delete && session.insert && session.upsert);
  await session.setKnobs({ expansion_search: 64 });
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
  const fresh = Array.from({ length: 40 }, (_, i) => data.n + i);
  const sources = fresh.map((_, i) => 100 + i * 7);
  await session.insert(rows(sources, fresh));
  for (let i = 0; i < fresh.length; i += 9) {
    const got = Array.from(await session.search({ vector: vectorOf(sources[i]), k: 10, filter: null }));
    assert.ok(got.includes(fresh[i]), `new id ${fresh[i]} not found`);
  }
  await session.insert(rows(victims));
  for (const id of victims) {
    const got = Array.from(await session.search({ vector: vectorOf(id), k: 10, filter: null }));
    assert.equal(got[0], id, `reinserted id ${id} is not its own top hit (got ${got})`);
  }
  // Upsert moves a row: id 5 takes row 9's vector.
  await session.upsert(rows([9], [5]));
  // Rows 5 and 9 now hold the same vector: both are at distance 0 from it, one of them first. A
  // graph built on several threads differs from run to run, and an approximate search need not
  // rank two exact duplicates as its top two, so the pair is looked for among the top 10.
  const got = Array.from(await session.search({ vector: vectorOf(9), k: 10, filter: null }));
  assert.ok(
    got.includes(5) && got.includes(9) && (got[0] === 5 || got[0] === 9),
    `the moved row 5 and row 9 among the top hits of row 9's vector (got ${got})`,
  );
  assert.ok((await session.diskBytes!()) > data.n * data.d * 4);
  // Back to the base rows for the contract suite's write checks.
  await session.delete(Int32Array.from(fresh));
  await session.upsert(rows([5]));
});

test('a bad index setting is rejected with a path naming the field; a missing addon is one line naming the build', async () => {
  const p = await loadParticipant('usearch-direct');
  const r = p.adapter.settingsSchema.safeParse({ connectivity: 1 });
  assert.equal(r.success, false);
  assert.deepEqual(r.error!.issues[0].path, ['connectivity']);
  assert.match(await p.adapter.engineVersion(), /^\d+\.\d+\.\d+/);
  assert.ok(existsSync(ADDON.path), `${ADDON.path} is built`);
  const missing = ADDON.load(join(PARTICIPANTS_DIR, 'usearch-direct', 'native', 'no-such.node'));
  assert.ok(missing instanceof Error);
  assert.match(missing.message, /unavailable.*node scripts\/build-native\.mjs participants\/usearch-direct\/native/);
  assert.doesNotMatch(missing.message, /\n/);
});

// Last: the suite's write checks and its reopen, which closes the session.
contractSuite('usearch-direct', join(PARTICIPANTS_DIR, 'usearch-direct'), { shared: () => opened, part: 'writes' });
