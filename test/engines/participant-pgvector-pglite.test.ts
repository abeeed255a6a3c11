// pgvector in PGlite, end to end on the harness's small synthetic set (real engine, no mocks),
// with the contract suite on the same load (its reads first, the tests here, then its writes and
// reopen), plus the shared SQL module (participants/_shared/postgres-sql.ts) on literal inputs.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ATTRIBUTES, type EngineSession, type FilterExpr, type RowAttributes, type RowBatch } from '../../src/contracts.ts';
import { generateSynthetic } from '../../src/prepare/synthetic.ts';
import { filterKind } from '../../src/datasets/groups.ts';
import { loadParticipant, PARTICIPANTS_DIR } from '../../src/runner/participants.ts';
import { CONTRACT_QUERIES, CONTRACT_ROWS, contractSuite } from '../contract/suite.ts';
import { checkLadder, openOnSynthetic, type PointCheck } from '../helpers/participant-harness.ts';
import {
  checkPlanText,
  copyBinary,
  describePath,
  distanceOperator,
  filterToSql,
  planPath,
  planScans,
  searchStatement,
  vectorBinary,
} from '../../participants/_shared/postgres-sql.ts';

const NAME = 'pgvector-pglite';

// ---- literal EXPLAIN plans (PostgreSQL 18 + pgvector 0.8 text format) ----
const SEQ_SCAN_PLAN = `Limit  (cost=2111.19..2111.22 rows=10 width=12)
  ->  Sort  (cost=2111.19..2161.19 rows=20000 width=12)
        Sort Key: ((embedding <#> $1))
        ->  Seq Scan on items  (cost=0.00..1679.00 rows=20000 width=12)`;
const HNSW_PLAN = `Limit  (cost=241.84..248.84 rows=10 width=12)
  ->  Index Scan using items_embedding_hnsw on items  (cost=241.84..14244.00 rows=20000 width=12)
        Order By: (embedding <#> $1)`;
const HNSW_FILTERED_PLAN = `Limit  (cost=241.84..312.40 rows=10 width=12)
  ->  Index Scan using items_embedding_hnsw on items  (cost=241.84..14294.00 rows=1990 width=12)
        Order By: (embedding <#> $1)
        Filter: (cat10 = 3)`;
const BITMAP_PLAN = `Limit  (cost=395.60..395.62 rows=10 width=12)
  ->  Sort  (cost=395.60..396.10 rows=200 width=12)
        Sort Key: (((embedding <#> $1) + '0'::double precision)), id
        ->  Bitmap Heap Scan on items  (cost=6.05..391.28 rows=200 width=12)
              Recheck Cond: (cat100 = 7)
              ->  Bitmap Index Scan on items_cat100_idx  (cost=0.00..6.00 rows=200 width=0)
                    Index Cond: (cat100 = 7)`;
const BTREE_PLAN = `Limit  (cost=120.10..120.12 rows=10 width=12)
  ->  Sort  (cost=120.10..120.15 rows=20 width=12)
        Sort Key: ((embedding <#> $1))
        ->  Index Scan using items_cat1000_idx on items  (cost=0.29..119.67 rows=20 width=12)
              Index Cond: (cat1000 = 42)`;

describe('pgvector sql module', () => {
  test('filters become WHERE text with positional parameters', () => {
    assert.deepEqual(filterToSql(null, 2), { sql: '', params: [], shape: '' });
    assert.deepEqual(filterToSql({ op: 'eq', field: 'cat10', value: 3 }, 2), { sql: 'cat10 = $2', params: [3], shape: 'cat10 = $2' });
    const and: FilterExpr = {
      op: 'and',
      args: [
        { op: 'eq', field: 'cat10', value: 1 },
        { op: 'range', field: 'num', gte: 100, lt: 200 },
      ],
    };
    const w = filterToSql(and, 2);
    assert.equal(w.sql, 'cat10 = $2 AND num >= $3 AND num < $4');
    assert.deepEqual(w.params, [1, 100, 200]);
    // Equal shapes share one statement text whatever the values.
    const w2 = filterToSql(
      {
        op: 'and',
        args: [
          { op: 'eq', field: 'cat10', value: 9 },
          { op: 'range', field: 'num', gte: 0, lt: 5 },
        ],
      },
      2,
    );
    assert.equal(w2.shape, w.shape);
    assert.throws(() => filterToSql({ op: 'eq', field: 'cat10; drop table items' as never, value: 1 }), /unknown filter field/);
    assert.throws(() => filterToSql({ op: 'eq', field: 'cat10', value: 1.5 }), /not a 32-bit integer/);
  });

  test('distance operator and statements per metric', () => {
    assert.equal(distanceOperator('ip'), '<#>');
    assert.equal(distanceOperator('cosine'), '<#>');
    assert.equal(distanceOperator('l2'), '<->');
    const plain = searchStatement('ip', 10, { op: 'eq', field: 'cat100', value: 4 });
    assert.equal(plain.text, 'SELECT id FROM items WHERE cat100 = $2 ORDER BY embedding <#> $1 LIMIT 10');
    assert.deepEqual(plain.params, [4]);
    const resorted = searchStatement('l2', 10, null, { resort: true, fetch: 30 });
    assert.match(resorted.text, /ORDER BY embedding <-> \$1 LIMIT 30\) AS nn ORDER BY dist \+ 0, id LIMIT 10$/);
    const exact = searchStatement('ip', 10, { op: 'eq', field: 'lang', value: 2 }, { exact: true });
    assert.match(exact.text, /ORDER BY \(embedding <#> \$1\) \+ 0, id LIMIT 10$/);
    assert.notEqual(plain.key, exact.key);
    assert.notEqual(plain.key, searchStatement('ip', 10, { op: 'eq', field: 'cat100', value: 4 }, { resort: true }).key);
  });

  test('binary encodings', () => {
    const v = vectorBinary(new Float32Array([1, -2]));
    assert.deepEqual(Array.from(v), [0, 2, 0, 0, 0x3f, 0x80, 0, 0, 0xc0, 0, 0, 0]);
    const attrs = Object.fromEntries(ATTRIBUTES.map((a) => [a, new Int32Array([1, 2])])) as RowAttributes;
    const copy = copyBinary({ ids: new Int32Array([5, 6]), vectors: new Float32Array(6), attrs }, 3);
    // signature + flags + extension, 2 rows of (field count, id, vector, the attributes), trailer
    assert.equal(copy.length, 19 + 2 * (2 + 8 + (8 + 12) + ATTRIBUTES.length * 8) + 2);
    assert.deepEqual(Array.from(copy.subarray(copy.length - 2)), [0xff, 0xff]);
  });

  test('plan parsing on literal plans', () => {
    assert.deepEqual(planScans(SEQ_SCAN_PLAN), [{ kind: 'Seq Scan', index: undefined, relation: 'items' }]);
    assert.deepEqual(planScans(HNSW_PLAN), [{ kind: 'Index Scan', index: 'items_embedding_hnsw', relation: 'items' }]);
    assert.deepEqual(planScans(BITMAP_PLAN), [
      { kind: 'Bitmap Heap Scan', index: undefined, relation: 'items' },
      { kind: 'Bitmap Index Scan', index: 'items_cat100_idx' },
    ]);
    assert.equal(planPath(SEQ_SCAN_PLAN), 'seq-scan');
    assert.equal(planPath(HNSW_PLAN), 'hnsw');
    assert.equal(planPath(HNSW_FILTERED_PLAN), 'hnsw');
    assert.equal(planPath(BITMAP_PLAN), 'exact-index');
    assert.equal(planPath(BTREE_PLAN), 'exact-index');
    assert.equal(planPath('Result  (cost=0.00..0.01 rows=1 width=4)'), 'unknown');
    assert.match(describePath(BITMAP_PLAN), /^path: exact-index .*Bitmap Index Scan using items_cat100_idx/);
  });

  test('checkPlan: an unfiltered seq scan fails its group, an HNSW scan passes', () => {
    assert.throws(
      () => checkPlanText(SEQ_SCAN_PLAN, { filter: null, k: 10 }),
      (e: Error) => /group none\/10/.test(e.message) && /HNSW index items_embedding_hnsw/.test(e.message),
    );
    assert.throws(() => checkPlanText(BITMAP_PLAN, { filter: null, k: 100 }), /group none\/100/);
    assert.equal(checkPlanText(HNSW_PLAN, { filter: null, k: 10 }), 'hnsw');
    const f: FilterExpr = { op: 'eq', field: 'cat100', value: 7 };
    assert.equal(checkPlanText(HNSW_FILTERED_PLAN, { filter: f, k: 10 }), 'hnsw');
    assert.equal(checkPlanText(BITMAP_PLAN, { filter: f, k: 10 }), 'exact-index');
    assert.equal(checkPlanText(BTREE_PLAN, { filter: f, k: 10 }), 'exact-index');
    assert.throws(() => checkPlanText(SEQ_SCAN_PLAN, { filter: f, k: 10 }), /group filtered \(cat100 =\)\/10/);
    assert.equal(checkPlanText(SEQ_SCAN_PLAN, { filter: f, k: 10, allowFilteredSeqScan: true }), 'seq-scan');
  });
});

describe('pgvector-pglite settings', () => {
  test('bad index settings are rejected with a path naming the field', async () => {
    const p = await loadParticipant(NAME);
    const r = p.adapter.settingsSchema.safeParse({ m: -1 });
    assert.equal(r.success, false);
    assert.deepEqual(r.error!.issues[0].path, ['m']);
    const r2 = p.adapter.settingsSchema.safeParse({ m: 48, ef_construction: 64 });
    assert.equal(r2.success, false);
    assert.deepEqual(r2.error!.issues[0].path, ['ef_construction']);
    const r3 = p.adapter.settingsSchema.safeParse({ storage: 'tape' });
    assert.deepEqual(r3.error!.issues[0].path, ['storage']);
  });
});

function assertClean(points: PointCheck[]): void {
  for (const p of points) {
    assert.equal(p.violations, 0, `${p.filter}/${p.k} ${JSON.stringify(p.knobs)}: filter violations`);
    assert.equal(p.unknownOrDuplicate, 0, `${p.filter}/${p.k} ${JSON.stringify(p.knobs)}: unknown or duplicate ids`);
  }
}

describe('pgvector-pglite on the small synthetic set', () => {
  let opened: Awaited<ReturnType<typeof openOnSynthetic>>;
  before(async () => {
    opened = await openOnSynthetic(NAME, { n: CONTRACT_ROWS, nq: CONTRACT_QUERIES });
  });
  after(async () => {
    await opened?.cleanup();
  });

  contractSuite(NAME, join(PARTICIPANTS_DIR, NAME), { shared: () => opened, part: 'reads' });

  test('engine version is read from the engine', async () => {
    const v = await opened.participant.adapter.engineVersion();
    assert.match(v, /^PGlite \d+\.\d+\.\d+ \(PostgreSQL 1\d\.\d+, pgvector 0\.\d+\.\d+\)$/);
  });

  test('unfiltered k=10: recall rises along the ladder and reaches 0.95', async () => {
    const points = await checkLadder(opened, 'none', 10);
    assertClean(points);
    assert.ok(points.length >= 5);
    for (let i = 1; i < points.length; i++) {
      assert.ok(
        points[i].recall >= points[i - 1].recall - 0.02,
        `recall fell from ${points[i - 1].recall} to ${points[i].recall} at ${JSON.stringify(points[i].knobs)}`,
      );
    }
    const top = points[points.length - 1];
    assert.ok(top.recall >= 0.95, `top recall ${top.recall}`);
    assert.equal(top.shortResults, 0);
  });

  test('filtered k=10 groups: no violations, recall >= 0.9 at the top', async () => {
    for (const filter of ['cat10', 'num1', 'cat100', 'lang']) {
      const points = await checkLadder(opened, filter, 10);
      assertClean(points);
      const top = points[points.length - 1];
      assert.ok(top.recall >= 0.9, `${filter}: top recall ${top.recall}`);
      assert.equal(top.shortResults, 0, `${filter}: short results at the top`);
    }
  });

  test('k=10 cat10 (10 %): iterative_scan off returns short results, relaxed_order fixes them', async () => {
    const points = await checkLadder(opened, 'cat10', 10);
    const at = (it: string, ef: number | string) => points.find((p) => p.knobs.iterative_scan === it && p.knobs.ef_search === ef)!;
    const off = at('off', 10);
    const relaxed = at('relaxed_order', 10);
    assert.ok(off.shortResults > 0, `off: ${off.shortResults} short results`);
    assert.equal(relaxed.shortResults, 0);
    assert.ok(relaxed.recall > off.recall + 0.3, `relaxed ${relaxed.recall} vs off ${off.recall}`);
    assert.equal(at('off', 'exact').recall, 1);
  });

  test('k=100 and k=1000 work', async () => {
    const p100 = await checkLadder(opened, 'none', 100);
    assertClean(p100);
    assert.ok(p100[p100.length - 1].recall >= 0.95, `k=100 top recall ${p100[p100.length - 1].recall}`);
    const f100 = await checkLadder(opened, 'cat10', 100);
    assertClean(f100);
    assert.ok(f100[f100.length - 1].recall >= 0.9);
    const p1000 = await checkLadder(opened, 'none', 1000);
    assertClean(p1000);
    assert.ok(p1000[p1000.length - 1].recall >= 0.95, `k=1000 top recall ${p1000[p1000.length - 1].recall}`);
  });

  test('explain names the path and checkPlan accepts the real plans', async () => {
    const { session, data } = opened;
    const vector = data.queries.slice(0, data.d);
    await session.setKnobs({ ef_search: 1000 });
    // At ef_search 1000 the planner would price a seq scan + sort below the HNSW scan; the
    // unfiltered statement must still scan the index.
    for (const k of [10, 1000]) {
      const plan = await session.explain!({ vector, k, filter: null });
      assert.match(plan, /^path: hnsw/, plan);
      assert.doesNotThrow(() => session.checkPlan!(plan, { vector, k, filter: null }));
      assert.deepEqual(session.strategy!({ vector, k, filter: null }, plan), { label: 'graph walk', observed: true });
    }
    await session.setKnobs({ ef_search: 40, iterative_scan: 'relaxed_order' });
    const filter = filterKind('cat100').forQuery(0, data.queryAttrs);
    const fplan = await session.explain!({ vector, k: 10, filter });
    assert.match(fplan, /^path: (hnsw|exact-index)/, fplan);
    assert.match(fplan, /iterative_scan=relaxed_order/);
    assert.doesNotThrow(() => session.checkPlan!(fplan, { vector, k: 10, filter }));
    // The strategy each plan shows: the HNSW walk with iterative scan (or the planner's exact
    // index path), then, at ef_search "exact", the exact scan of the matches: a flip between knobs.
    const walked = session.strategy!({ vector, k: 10, filter }, fplan);
    assert.equal(walked.observed, true);
    assert.equal(walked.label, fplan.startsWith('path: hnsw') ? 'iterative scan' : 'exact scan of matches');
    await session.setKnobs({ ef_search: 'exact' });
    const eplan = await session.explain!({ vector, k: 10, filter });
    assert.match(eplan, /^path: exact-index/, eplan);
    assert.deepEqual(session.strategy!({ vector, k: 10, filter }, eplan), { label: 'exact scan of matches', observed: true });
    await session.setKnobs({ ef_search: 40, iterative_scan: 'off' });
    const offPlan = await session.explain!({ vector, k: 10, filter: filterKind('cat10').forQuery(0, data.queryAttrs) });
    if (offPlan.startsWith('path: hnsw'))
      assert.equal(session.strategy!({ vector, k: 10, filter: filterKind('cat10').forQuery(0, data.queryAttrs) }, offPlan).label, 'graph walk + post-filter');
    await assert.rejects(session.setKnobs({ ef: 10 }), /unknown knob "ef"/);
    await assert.rejects(session.setKnobs({ iterative_scan: 'sometimes' }), /iterative_scan must be one of/);
  });

  test('unfiltered searches started beside other calls under way answer as they do alone', async () => {
    const { session, data } = opened;
    const d = data.d;
    await session.setKnobs({ ef_search: 100 });
    const q = (i: number) => data.queries.slice(i * d, (i + 1) * d);
    const alone: number[][] = [];
    for (let i = 0; i < 20; i++) alone.push(Array.from(await session.search({ vector: q(i), k: 10, filter: null })));
    // A query under way (the table's size) when each search starts, a few more turns of the
    // microtask queue into it each time, so some searches start between the query's own
    // protocol messages: they must wait their turn, not put theirs in between.
    for (let i = 0; i < 20; i++) {
      const other = session.diskBytes!();
      for (let turn = 0; turn < i * 3; turn++) await Promise.resolve();
      const got = await session.search({ vector: q(i), k: 10, filter: null });
      await other;
      assert.deepEqual(Array.from(got), alone[i], `query ${i}, ${i * 3} microtasks into the other call`);
    }
    // The search first, then the other call.
    const first = await Promise.all(
      Array.from({ length: 20 }, (_, i) => Promise.all([session.search({ vector: q(i), k: 10, filter: null }), session.diskBytes!()])),
    );
    assert.deepEqual(
      first.map(([r]) => Array.from(r)),
      alone,
    );
  });

  test('writes: deleted ids never come back, re-inserted and upserted rows are found', async () => {
    const { session, data } = opened;
    const d = data.d;
    await session.setKnobs({ ef_search: 100 });
    const before = await session.diskBytes!();
    assert.ok(before > data.n * d * 4, `disk bytes ${before}`);
    const q = (i: number) => data.queries.slice(i * d, (i + 1) * d);
    // Delete the current top 5 of the first 10 queries.
    const victims = new Set<number>();
    for (let i = 0; i < 10; i++) for (const id of Array.from(await session.search({ vector: q(i), k: 5, filter: null }))) victims.add(id);
    const ids = Int32Array.from(victims);
    await session.delete!(ids);
    for (let i = 0; i < 10; i++) {
      for (const filter of [null, filterKind('cat10').forQuery(i, data.queryAttrs)]) {
        const got = Array.from(await session.search({ vector: q(i), k: 10, filter }));
        assert.equal(got.length, 10);
        for (const id of got) assert.ok(!victims.has(id), `deleted id ${id} came back`);
      }
    }
    await session.compact!();
    for (let i = 0; i < 10; i++) {
      for (const id of Array.from(await session.search({ vector: q(i), k: 10, filter: null })))
        assert.ok(!victims.has(id), `deleted id ${id} came back after VACUUM`);
    }
    // Insert them again: the top of each query is back.
    await session.insert!(rowsOf(data, ids));
    for (let i = 0; i < 10; i++) {
      const got = new Set(Array.from(await session.search({ vector: q(i), k: 10, filter: null })));
      assert.ok(
        [...victims].some((id) => got.has(id)),
        `query ${i}: none of the re-inserted rows found`,
      );
    }
    // Upsert: row 7 takes query 20's vector and category; it becomes the best match.
    const row = rowsOf(data, Int32Array.from([7]));
    row.vectors.set(q(20));
    row.attrs.cat10[0] = 9;
    await session.upsert!(row);
    await session.upsert!(row); // twice: an upsert of an existing row must not fail
    assert.equal((await session.search({ vector: q(20), k: 1, filter: null }))[0], 7);
    assert.equal((await session.search({ vector: q(20), k: 1, filter: { op: 'eq', field: 'cat10', value: 9 } }))[0], 7);
    const notNine = Array.from(
      await session.search({ vector: q(20), k: 10, filter: { op: 'eq', field: 'cat10', value: data.attrs.cat10[7] === 9 ? 0 : data.attrs.cat10[7] } }),
    );
    assert.ok(!notNine.includes(7), 'the upserted row still matches its old category');
    // Back to the base rows: the contract suite's write checks, later on this engine, judge the
    // ids a filter returns by the base rows' attributes.
    await session.upsert!(rowsOf(data, Int32Array.from([7])));
  });

  // Last: the suite's write checks and its reopen, which closes the session.
  contractSuite(NAME, join(PARTICIPANTS_DIR, NAME), { shared: () => opened, part: 'writes' });
});

function rowsOf(data: ReturnType<typeof generateSynthetic>, ids: Int32Array): RowBatch {
  const d = data.d;
  const vectors = new Float32Array(ids.length * d);
  ids.forEach((id, i) => vectors.set(data.base.subarray(id * d, (id + 1) * d), i * d));
  const attrs = Object.fromEntries(Object.entries(data.attrs).map(([k, col]) => [k, Int32Array.from(ids, (id) => col[id])])) as RowAttributes;
  return { ids: Int32Array.from(ids), vectors, attrs };
}

describe('pgvector-pglite forced onto the HNSW path at 1 % selectivity', () => {
  // With btree indexes (the default) the planner answers 1 % filters exactly through them, and
  // without them it prefers a sequential scan at this size, so neither shows the post-filter
  // problem. Without btrees and with sequential scans off for filtered statements, HNSW is the
  // only path: pgvector then filters the ef_search candidates and returns too few rows unless
  // hnsw.iterative_scan keeps walking the graph.
  let session: EngineSession;
  let workDir: string;
  const data = generateSynthetic(3000, 60, { clusters: 10 });
  before(async () => {
    const p = await loadParticipant(NAME);
    const settings = p.adapter.settingsSchema.parse({ ...(p.index as object), filter_indexes: false, filtered_seqscan: false });
    workDir = mkdtempSync(join(tmpdir(), 'vecbench-pgvector-pglite-forced-'));
    session = await p.adapter.open({
      dataset: { name: 'synthetic-test', n: data.n, d: data.d, metric: data.metric, hasText: false },
      settings,
      workDir,
      maxConcurrency: 1,
      log: () => {},
    });
    await session.ingest(
      rowsOf(
        data,
        Int32Array.from({ length: data.n }, (_, i) => i),
      ),
    );
    await session.buildIndex();
  });
  after(async () => {
    await session?.close();
    rmSync(workDir, { recursive: true, force: true });
  });

  test('cat100 and num1 at k=10: off returns short results, relaxed_order fixes them', async () => {
    const p = await loadParticipant(NAME);
    const opened = {
      data,
      session,
      participant: { ...p, settings: { ...p.settings, ladders: [{ knobs: { iterative_scan: ['off', 'relaxed_order'], ef_search: [40] } }] } },
    } as unknown as Awaited<ReturnType<typeof openOnSynthetic>>;
    for (const filter of ['cat100', 'num1']) {
      const [off, relaxed] = await checkLadder(opened, filter, 10);
      assertClean([off, relaxed]);
      assert.ok(off.shortResults > 0, `${filter} off: ${off.shortResults} short results of ${data.nq}`);
      assert.ok(off.recall < 0.5, `${filter} off: recall ${off.recall}`);
      assert.equal(relaxed.shortResults, 0, `${filter} relaxed_order: short results`);
      assert.ok(relaxed.recall >= 0.9, `${filter} relaxed_order: recall ${relaxed.recall}`);
      const vector = data.queries.slice(0, data.d);
      const f = filterKind(filter).forQuery(0, data.queryAttrs);
      const plan = await session.explain!({ vector, k: 10, filter: f });
      assert.match(plan, /^path: hnsw/, plan);
    }
  });

  test('reopen: the data a closed session left answers again without ingest', async () => {
    const p = await loadParticipant(NAME);
    const settings = p.adapter.settingsSchema.parse({ ...(p.index as object), filter_indexes: false, filtered_seqscan: false });
    const request = { vector: data.queries.slice(0, data.d), k: 10, filter: null };
    await session.setKnobs({ ef_search: 40 });
    const before = Array.from(await session.search(request));
    const bytes = await session.diskBytes!();
    await session.close();
    session = await p.adapter.reopen!({
      dataset: { name: 'synthetic-test', n: data.n, d: data.d, metric: data.metric, hasText: false },
      settings,
      workDir,
      maxConcurrency: 1,
      log: () => {},
    });
    await session.setKnobs({ ef_search: 40 });
    assert.deepEqual(Array.from(await session.search(request)), before);
    assert.equal(await session.diskBytes!(), bytes);
    assert.match(await session.explain!(request), /^path: hnsw/);
  });
});
