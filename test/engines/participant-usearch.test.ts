// usearch participant, end to end on the harness's small synthetic set (real engine), with the
// contract suite on the same load: its reads first, these tests, then its writes and reopen.
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { FilterExpr, RowAttributes, RowBatch } from '../../src/contracts.ts';
import { ATTRIBUTES } from '../../src/contracts.ts';
import { passes } from '../../src/datasets/groups.ts';
import { loadParticipant, PARTICIPANTS_DIR } from '../../src/runner/participants.ts';
import { CONTRACT_QUERIES, CONTRACT_ROWS, contractSuite } from '../contract/suite.ts';
import { checkLadder, openOnSynthetic } from '../helpers/participant-harness.ts';

let opened: Awaited<ReturnType<typeof openOnSynthetic>>;

before(async () => {
  opened = await openOnSynthetic('usearch', { n: CONTRACT_ROWS, nq: CONTRACT_QUERIES });
});
after(async () => {
  await opened?.cleanup();
});

contractSuite('usearch', join(PARTICIPANTS_DIR, 'usearch'), { shared: () => opened, part: 'reads' });

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
  test(`post-filter ${filter} at k=10: no violations, recall >= 0.9 at the top`, async () => {
    const pts = await checkLadder(opened, filter, 10);
    assert.ok(pts.length > 0);
    for (const p of pts) {
      assert.equal(p.violations, 0, `violations at ${JSON.stringify(p.knobs)}`);
      assert.equal(p.unknownOrDuplicate, 0, `unknown or duplicate ids at ${JSON.stringify(p.knobs)}`);
    }
    const top = pts[pts.length - 1];
    assert.ok(top.recall >= 0.9, `top recall ${top.recall}`);
    // Recall rises with the candidate count (allowing noise).
    for (let i = 1; i < pts.length; i++) assert.ok(pts[i].recall >= pts[i - 1].recall - 0.02);
  });
}

test('post-filter fails by returning short results, never other rows', async () => {
  const pts = await checkLadder(opened, 'cat100', 10);
  const low = pts[0];
  assert.ok(low.shortResults > 0, 'the smallest expansion should leave some queries short on a 1 % filter');
  for (const p of pts) assert.equal(p.violations, 0);
});

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

test('vectors given as subarrays of a larger buffer are read from their own offset', async () => {
  const { session, data } = opened;
  const d = data.d;
  await session.setKnobs({ expansion_search: 64 });
  // A query that is a view into the middle of the whole base matrix answers exactly as its copy
  // does (one search is deterministic); read from offset 0 it would be row 0's neighbours. Not
  // "the row finds itself": a parallel-built graph may leave a row unreachable at this beam.
  for (const id of [1, 777, 2500]) {
    const view = data.base.subarray(id * d, (id + 1) * d);
    assert.ok(view.byteOffset > 0);
    const viaView = Array.from(await session.search({ vector: view, k: 5, filter: null }));
    const viaCopy = Array.from(await session.search({ vector: vectorOf(id), k: 5, filter: null }));
    assert.deepEqual(viaView, viaCopy, `row ${id} through a subarray found ${viaView}, through a copy ${viaCopy}`);
  }
  const rowZero = Array.from(await session.search({ vector: vectorOf(0), k: 5, filter: null }));
  assert.notDeepEqual(rowZero, Array.from(await session.search({ vector: vectorOf(777), k: 5, filter: null })));
  // Rows whose vectors are views at an offset of a larger buffer (row 0's vector is first in it).
  const big = new Float32Array(4 * d);
  big.set(vectorOf(0), 0);
  big.set(vectorOf(42), 2 * d);
  const batch = rows([42], [data.n + 7]);
  batch.vectors = big.subarray(2 * d, 3 * d);
  await session.insert!(batch);
  // A beam wider than the index walks all of it, so the twin of row 42 is found if it holds 42's vector.
  await session.setKnobs({ expansion_search: data.n + 100 });
  const got = Array.from(await session.search({ vector: vectorOf(42), k: 2, filter: null }));
  assert.deepEqual(
    [...got].sort((a, b) => a - b),
    [42, data.n + 7],
  );
  await session.delete!(Int32Array.of(data.n + 7));
  await session.setKnobs({ expansion_search: 64 });
});

test('k larger than the index returns what exists without throwing', async () => {
  const { session, data } = opened;
  await session.setKnobs({ expansion: 5 });
  const all = await session.search({ vector: vectorOf(0), k: data.n + 500, filter: null });
  // A walk with a beam of n reaches all but (rarely) a few nodes of the parallel-built graph.
  assert.ok(all.length <= data.n && all.length >= data.n * 0.99, `got ${all.length} of ${data.n}`);
  assert.equal(new Set(Array.from(all)).size, all.length);
  const f: FilterExpr = { op: 'eq', field: 'cat1000', value: data.attrs.cat1000[0] };
  const got = Array.from(await session.search({ vector: vectorOf(0), k: 10, filter: f }));
  assert.ok(got.length < 10 && got[0] === 0, `got ${got}`);
  for (const id of got) assert.ok(passes(f, data.attrs, id));
});

test('writes: deleted ids never come back (also after a knob reload); reinserted and new ids are found', async () => {
  const { session, data } = opened;
  assert.ok(session.delete && session.insert && session.upsert);
  await session.setKnobs({ expansion_search: 64, expansion: 20 });
  const victims = [3, 17, 256, 1024, 2047, 2999];
  await session.delete(Int32Array.from(victims));
  const checkGone = async () => {
    for (const id of victims) {
      const got = Array.from(await session.search({ vector: vectorOf(id), k: 10, filter: null }));
      assert.equal(got.length, 10);
      for (const v of victims) assert.ok(!got.includes(v), `deleted id ${v} returned`);
      const f: FilterExpr = { op: 'eq', field: 'cat10', value: data.attrs.cat10[id] };
      const gotF = Array.from(await session.search({ vector: vectorOf(id), k: 10, filter: f }));
      for (const v of victims) assert.ok(!gotF.includes(v), `deleted id ${v} returned under a filter`);
    }
  };
  await checkGone();
  // A new expansion_search reloads the index from the saved file: the removals must survive.
  await session.setKnobs({ expansion_search: 48, expansion: 20 });
  await checkGone();
  const fresh = Array.from({ length: 40 }, (_, i) => data.n + i);
  const sources = fresh.map((_, i) => 100 + i * 7);
  await session.insert(rows(sources, fresh));
  for (let i = 0; i < fresh.length; i += 9) {
    const got = Array.from(await session.search({ vector: vectorOf(sources[i]), k: 10, filter: null }));
    assert.ok(got.includes(fresh[i]), `new id ${fresh[i]} not found`);
  }
  // A removed key can be added again.
  await session.insert(rows(victims));
  for (const id of victims) {
    const got = Array.from(await session.search({ vector: vectorOf(id), k: 10, filter: null }));
    assert.equal(got[0], id, `reinserted id ${id} is not its own top hit (got ${got})`);
  }
  // Upsert of a live key replaces it: id 5 takes row 9's vector.
  await session.upsert(rows([9], [5]));
  // Rows 5 and 9 now hold the same vector: both are at distance 0 from it, one of them first. A
  // graph built on several threads differs from run to run, and an approximate search need not
  // rank two exact duplicates as its top two, so the pair is looked for among the top 10.
  const got = Array.from(await session.search({ vector: vectorOf(9), k: 10, filter: null }));
  assert.ok(
    got.includes(5) && got.includes(9) && (got[0] === 5 || got[0] === 9),
    `the moved row 5 and row 9 among the top hits of row 9's vector (got ${got})`,
  );
  const gone = Array.from(await session.search({ vector: vectorOf(5), k: 10, filter: null }));
  assert.ok(gone[0] !== 5, 'the old vector of id 5 is gone');
  assert.ok((await session.diskBytes!()) > data.n * data.d * 4);
  // Back to the base rows: the contract suite's write checks, later on this engine, judge the
  // ids a filter returns by the base rows' attributes.
  await session.delete(Int32Array.from(fresh));
  await session.upsert(rows([5]));
});

test('a bad index setting is rejected with a path naming the field', async () => {
  const p = await loadParticipant('usearch');
  const r = p.adapter.settingsSchema.safeParse({ connectivity: -1 });
  assert.equal(r.success, false);
  assert.deepEqual(r.error!.issues[0].path, ['connectivity']);
  const r2 = p.adapter.settingsSchema.safeParse({ expansion_add: 1.5 });
  assert.equal(r2.success, false);
  assert.deepEqual(r2.error!.issues[0].path, ['expansion_add']);
  assert.match(await p.adapter.engineVersion(), /^\d+\.\d+\.\d+/);
});

test('a knob change frees the replaced index: resident memory does not grow by a copy per ladder point', async () => {
  // expansion_search is applied by loading the saved index into a new Index; the binding has
  // no close, so without an explicit release every old copy stays resident until a GC.
  const big = await openOnSynthetic('usearch', { n: 30_000, nq: 10 });
  try {
    await big.session.setKnobs({ expansion_search: 500 });
    const copy = statSync(join(big.workDir, 'usearch.index')).size;
    const before = process.memoryUsage().rss;
    for (let i = 0; i < 12; i++) await big.session.setKnobs({ expansion_search: 20 + i });
    const grown = process.memoryUsage().rss - before;
    assert.ok(
      grown < 3 * copy,
      `resident memory grew ${(grown / 2 ** 20).toFixed(0)} MiB over 12 knob changes; one index is ${(copy / 2 ** 20).toFixed(0)} MiB`,
    );
    const ids = await big.session.search({ vector: big.data.queries.subarray(0, big.data.d), k: 10, filter: null });
    assert.equal(ids.length, 10);
  } finally {
    await big.cleanup();
  }
});

test('the view layout (usearch-disk): once built, the index is searched from its file, mapped; a write loads it, the next build maps it again', async () => {
  const disk = await openOnSynthetic('usearch-disk', { n: CONTRACT_ROWS, nq: 10 });
  const file = join(disk.workDir, 'usearch.index');
  const mapped = () => readFileSync('/proc/self/maps', 'utf8').includes(file);
  try {
    const ask = async () => Array.from(await disk.session.search({ vector: disk.data.queries.subarray(0, disk.data.d), k: 10, filter: null }));
    assert.ok(mapped(), `${file} is mapped into the process after the build`);
    await disk.session.setKnobs({ expansion_search: 200 });
    assert.ok(mapped(), 'a knob change maps the file again');
    const viewed = await ask();
    assert.equal(viewed.length, 10);
    await disk.session.delete!(Int32Array.from([viewed[0]]));
    assert.ok(!mapped(), 'a write loads the index into memory (a view is read-only)');
    assert.ok(!(await ask()).includes(viewed[0]), 'the deleted row is gone');
    await disk.session.buildIndex();
    assert.ok(mapped(), 'the next build maps the saved file again');
    const after = await ask();
    assert.equal(after.length, 10);
    assert.ok(!after.includes(viewed[0]), 'the mapped file holds the write');
  } finally {
    await disk.cleanup();
  }
});

// Last: the suite's write checks and its reopen, which closes the session.
contractSuite('usearch', join(PARTICIPANTS_DIR, 'usearch'), { shared: () => opened, part: 'writes' });
