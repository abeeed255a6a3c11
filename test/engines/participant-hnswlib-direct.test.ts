// hnswlib-direct participant (hnswlib through vecbench's own addon), end to end on the harness's
// small synthetic set (real engine), with the contract suite on the same load: its reads first,
// these tests, then its writes and reopen. One test holds it to the `hnswlib` participant: the
// same library version reading the same index file must return the same top-k.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { FilterExpr, RowAttributes, RowBatch } from '../../src/contracts.ts';
import { ATTRIBUTES } from '../../src/contracts.ts';
import { passes, STANDARD_KINDS } from '../../src/datasets/groups.ts';
import { loadParticipant, PARTICIPANTS_DIR } from '../../src/runner/participants.ts';
import { CONTRACT_QUERIES, CONTRACT_ROWS, contractSuite } from '../contract/suite.ts';
import { checkLadder, openOnSynthetic } from '../helpers/participant-harness.ts';
import { ADDON } from '../../participants/hnswlib-direct/adapter.ts';
import { filterClauses } from '../../src/sdk/index.ts';

let opened: Awaited<ReturnType<typeof openOnSynthetic>>;

before(async () => {
  opened = await openOnSynthetic('hnswlib-direct', { n: CONTRACT_ROWS, nq: CONTRACT_QUERIES });
});
after(async () => {
  await opened?.cleanup();
});

contractSuite('hnswlib-direct', join(PARTICIPANTS_DIR, 'hnswlib-direct'), { shared: () => opened, part: 'reads' });

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

test('builds the same graph as the hnswlib participant: a byte-identical index file', async () => {
  // The same headers, settings, seed and insertion order, one thread: hnswlib is deterministic.
  const ref = await openOnSynthetic('hnswlib', { data: opened.data });
  try {
    const file = (dir: string) => readFileSync(join(dir, 'hnswlib.index'));
    assert.ok(file(opened.workDir).equals(file(ref.workDir)), 'hnswlib.index differs from the one hnswlib-node saved');
    assert.ok(readFileSync(join(opened.workDir, 'hnswlib.rows.bin')).equals(readFileSync(join(ref.workDir, 'hnswlib.rows.bin'))));
  } finally {
    await ref.cleanup();
  }
});

test('the same top-k as the hnswlib participant (hnswlib-node) reading the same index file', async () => {
  const { data, ctx, session } = opened;
  // The `hnswlib` participant reopens the files this session's buildIndex saved.
  const other = await loadParticipant('hnswlib');
  assert.ok(other.adapter.reopen);
  const theirs = await other.adapter.reopen({ ...ctx, settings: other.index });
  try {
    const filter = { op: 'eq', field: 'cat10', value: 3 } as const;
    let compared = 0;
    for (const f of [null, filter]) {
      for (const ef of [10, 32]) {
        await session.setKnobs({ ef });
        await theirs.setKnobs({ ef });
        for (let q = 0; q < Math.min(40, data.nq); q++) {
          const request = { vector: queryOf(q), k: 10, filter: f };
          const mine = Array.from(await session.search(request));
          const ref = Array.from(await theirs.search(request));
          assert.deepEqual(mine, ref, `query ${q}, ef ${ef}, filter ${JSON.stringify(f)}`);
          compared++;
        }
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
  // A query of the wrong length is refused in one line, as hnswlib-node refuses it.
  await assert.rejects(session.search({ vector: new Float32Array(data.d + 1), k: 10, filter: null }), /query has \d+ floats/);
});

test('filters become native clauses: eq as [v, v+1), range as given, and over their own columns', () => {
  const f = filterClauses(
    {
      op: 'and',
      args: [
        { op: 'eq', field: 'cat10', value: 4 },
        { op: 'range', field: 'num', gte: -5, lt: 2 ** 31 },
        { op: 'eq', field: 'cat10', value: 2.5 },
      ],
    },
    'hnswlib-direct',
  );
  assert.deepEqual(f.fields, ['cat10', 'num']);
  assert.deepEqual(Array.from(f.clauses), [0, 4, 5, 1, -5, 2 ** 31, 0, 1, 0]);
});

test('a pass timed in C++ (timedPass) answers each request as search() does, with a latency per query', async () => {
  const { session, data } = opened;
  assert.ok(session.timedPass, 'hnswlib-direct times its passes in C++');
  await session.setKnobs({ ef: 32 });
  const n = 40;
  const kind = (name: string) => STANDARD_KINDS.find((x) => x.name === name)!;
  const group = (name: string) => Array.from({ length: n }, (_, q) => kind(name).forQuery(q, data.queryAttrs) as FilterExpr | null);
  const cat100 = group('cat100');
  const kinds: (FilterExpr | null)[][] = [
    group('none'),
    // A query group's filters: the same fields, each query's own values.
    group('cat10'),
    group('cat10+num10'),
    // Fields that differ within a pass: searched one at a time from JavaScript.
    cat100.map((f, q) => (q % 2 ? null : f)),
  ];
  for (const filters of kinds) {
    const requests = filters.map((filter, q) => ({ vector: queryOf(q), k: 10, filter }));
    const pass = await session.timedPass(requests, 1);
    assert.equal(pass.results.length, n);
    assert.equal(pass.latenciesMs.length, n);
    assert.ok(pass.errors.every((e) => e === null));
    assert.ok(pass.wallS > 0);
    for (let q = 0; q < n; q++) {
      assert.ok(pass.latenciesMs[q] > 0 && pass.latenciesMs[q] < 1000, `latency ${pass.latenciesMs[q]} ms`);
      assert.deepEqual(Array.from(pass.results[q]), Array.from(await session.search(requests[q])), `query ${q}, filter ${JSON.stringify(filters[q])}`);
      if (filters[q]) for (const id of Array.from(pass.results[q])) assert.ok(passes(filters[q]!, data.attrs, id));
    }
  }
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

test('a bad index setting is rejected with a path naming the field; a missing addon is one line naming the build', async () => {
  const p = await loadParticipant('hnswlib-direct');
  const r = p.adapter.settingsSchema.safeParse({ M: -1 });
  assert.equal(r.success, false);
  assert.deepEqual(r.error!.issues[0].path, ['M']);
  const r2 = p.adapter.settingsSchema.safeParse({ efConstruction: 'big' });
  assert.equal(r2.success, false);
  assert.deepEqual(r2.error!.issues[0].path, ['efConstruction']);
  assert.match(await p.adapter.engineVersion(), /^\d+\.\d+\.\d+/);
  assert.ok(existsSync(ADDON.path), `${ADDON.path} is built`);
  const missing = ADDON.load(join(PARTICIPANTS_DIR, 'hnswlib-direct', 'native', 'no-such.node'));
  assert.ok(missing instanceof Error);
  assert.match(missing.message, /unavailable.*node scripts\/build-native\.mjs participants\/hnswlib-direct\/native/);
  assert.doesNotMatch(missing.message, /\n/);
});

// Last: the suite's write checks and its reopen, which closes the session.
contractSuite('hnswlib-direct', join(PARTICIPANTS_DIR, 'hnswlib-direct'), { shared: () => opened, part: 'writes' });
