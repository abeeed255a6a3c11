// The sqlite-vec participant end to end on the harness's small synthetic set: the real SQLite
// with the vec0 extension, its one-point ladder (an exact scan), filters and their plan,
// writes, FTS5 keyword and SQL-fused hybrid arms on a small text corpus, reopen without
// ingest, and settings validation. The contract suite runs on the same load: its reads first, the
// tests here, then its writes and reopen, then the reopen test here (on the file the suite's
// reopen left).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import type { EngineSession, FilterExpr, RowAttributes } from '../../src/contracts.ts';
import { ATTRIBUTES } from '../../src/contracts.ts';
import { passes } from '../../src/datasets/groups.ts';
import { ladderFor, loadParticipant, PARTICIPANTS_DIR } from '../../src/runner/participants.ts';
import { CONTRACT_QUERIES, CONTRACT_ROWS, contractSuite } from '../contract/suite.ts';
import { SHORT_RUNBOOK, checkShortRun } from '../helpers/churn-short.ts';
import { checkLadder, openOnSynthetic, type PointCheck, rowsOf, rowVector } from '../helpers/participant-harness.ts';

type Opened = Awaited<ReturnType<typeof openOnSynthetic>>;

function assertClean(points: PointCheck[]): void {
  for (const p of points) {
    assert.equal(p.violations, 0, `${p.filter}/${p.k}: filter violations`);
    assert.equal(p.unknownOrDuplicate, 0, `${p.filter}/${p.k}: unknown or duplicate ids`);
  }
}

describe('participant sqlite-vec', () => {
  let o: Opened;
  before(async () => {
    o = await openOnSynthetic('sqlite-vec', { n: CONTRACT_ROWS, nq: CONTRACT_QUERIES });
  });
  after(async () => {
    await o?.cleanup();
  });

  contractSuite('sqlite-vec', join(PARTICIPANTS_DIR, 'sqlite-vec'), { shared: () => o, part: 'reads' });

  test('reports the loaded versions and one ladder point without knobs', async () => {
    assert.match(await o.participant.adapter.engineVersion(), /^0\.1\.\d+ \(vec_version v0\.1\.\d+, SQLite 3\.\d+\.\d+, better-sqlite3 12\.\d+\.\d+\)$/);
    assert.deepEqual(ladderFor(o.participant.settings, 'none', 10), [{}]);
    assert.equal(o.participant.settings.calibration, undefined, 'no knob: read on its ladder');
  });

  test('exact scan: unfiltered recall 1.0 at k=10 and k=100', async () => {
    for (const k of [10, 100]) {
      const [p] = await checkLadder(o, 'none', k);
      assertClean([p]);
      assert.ok(p.recall >= 0.999, `none/${k} recall ${p.recall}`);
      assert.equal(p.shortResults, 0);
    }
  });

  for (const filter of ['cat10', 'cat1000', 'num1', 'cat10+num10', 'cluster', 'farcluster', 'lang']) {
    test(`filter ${filter} at k=10: no violations, exact recall`, async () => {
      const points = await checkLadder(o, filter, 10);
      assert.equal(points.length, 1);
      assertClean(points);
      assert.ok(points[0].recall >= 0.999, `${filter}: recall ${points[0].recall}`);
    });
  }

  test('the plan is vec0 KNN with the filter inside the scan; a knob is refused', async () => {
    const s = o.session;
    const filter: FilterExpr = {
      op: 'and',
      args: [
        { op: 'eq', field: 'cat10', value: 3 },
        { op: 'range', field: 'num', gte: 0, lt: 500_000 },
      ],
    };
    const request = { vector: o.data.queries.slice(0, o.data.d), k: 10, filter };
    const plan = await s.explain!(request);
    assert.match(plan, /VIRTUAL TABLE INDEX \d+:3\{/);
    s.checkPlan!(plan, request);
    assert.throws(() => s.checkPlan!('SCAN vectors VIRTUAL TABLE INDEX 0:3{___}___', request), /not evaluated inside vec0/);
    assert.throws(() => s.checkPlan!('SCAN vectors', { ...request, filter: null }), /does not use vec0's KNN scan/);
    await assert.rejects(s.setKnobs({ ef: 10 }), /sqlite-vec: unknown knob "ef"/);
    // k above vec0's limit (4096) is clamped: short results, no error.
    assert.equal((await s.search({ vector: rowVector(o, 0), k: 10_000, filter: null })).length, o.data.n);
  });

  test('writes: deleted ids never come back; reinserted, new and upserted rows are found', async () => {
    const s = o.session;
    const k = 10;
    const first = async (id: number, filter: FilterExpr | null = null) => Array.from(await s.search({ vector: rowVector(o, id), k, filter }));
    const victims = [3, 17, 256, 1024, 2047, 2999];
    await s.delete!(Int32Array.from(victims));
    const gone = new Set(victims);
    for (const id of victims) {
      const got = await first(id);
      assert.equal(got.length, k);
      for (const g of got) assert.ok(!gone.has(g), `deleted id ${g} returned`);
      const own = { op: 'eq', field: 'cat100', value: o.data.attrs.cat100[id] } as const;
      for (const g of await first(id, own)) {
        assert.ok(!gone.has(g), `deleted id ${g} returned under a filter`);
        assert.ok(passes(own, o.data.attrs, g), `${g} violates the filter`);
      }
    }
    await s.insert!(rowsOf(o, victims));
    for (const id of victims) assert.equal((await first(id))[0], id, `reinserted ${id} is its own top hit`);
    const fresh = [o.data.n, o.data.n + 1];
    await s.insert!(rowsOf(o, [100, 200], fresh));
    assert.deepEqual(
      (await first(100)).slice(0, 2).sort((a, b) => a - b),
      [100, fresh[0]],
    );
    // Upsert moves a row: id 5 takes row 9's vector, and is not duplicated.
    await s.upsert!(rowsOf(o, [9], [5]));
    const nine = await first(9);
    assert.deepEqual(
      nine.slice(0, 2).sort((a, b) => a - b),
      [5, 9],
    );
    assert.equal(nine.filter((x) => x === 5).length, 1);
    const bytes = await s.diskBytes!();
    assert.ok(bytes > o.data.n * o.data.d * 4, 'the database file holds at least the raw vectors');
    assert.equal(bytes, statSync(join(o.workDir, 'sqlite-vec.db')).size, 'diskBytes is the database file');
    // Back to the base rows: the contract suite's write checks, later on this engine, judge the
    // ids a filter returns by the base rows' attributes.
    await s.delete!(Int32Array.from(fresh));
    await s.upsert!(rowsOf(o, [5]));
  });

  test('bad settings name the field', () => {
    const p = o.participant.adapter;
    const bad = p.settingsSchema.safeParse({ chunk_size: 100 });
    assert.equal(bad.success, false);
    assert.deepEqual(bad.error!.issues[0].path, ['chunk_size']);
    const dist = p.settingsSchema.safeParse({ ip_distance: 'dot' });
    assert.equal(dist.success, false);
    assert.deepEqual(dist.error!.issues[0].path, ['ip_distance']);
    assert.equal(p.settingsSchema.safeParse({ chunck_size: 8 }).success, false);
    assert.equal(p.settingsSchema.safeParse({}).success, true);
  });

  // The suite's write checks and its reopen, which closes the session: last on this engine (the
  // tests after this describe open engines of their own).
  contractSuite('sqlite-vec', join(PARTICIPANTS_DIR, 'sqlite-vec'), { shared: () => o, part: 'writes' });

  // After the suite's reopen check, which closed the loaded session: the first connection here
  // is one reopened, without ingest, on the file that check left, written to before it closes.
  test('reopen: the database file answers the same without ingest', async () => {
    const { data, participant } = o;
    const ctx = {
      dataset: { name: 'synthetic-test', n: data.n, d: data.d, metric: data.metric, hasText: false },
      settings: participant.index,
      workDir: o.workDir,
      maxConcurrency: 1,
      log: () => {},
    };
    const live = await participant.adapter.reopen!(ctx as never);
    // Row 5 takes row 9's vector (the writes test moved it back to the base row).
    await live.upsert!(rowsOf(o, [9], [5]));
    const requests = [null, { op: 'range', field: 'num', gte: 0, lt: 300_000 } as const, { op: 'eq', field: 'cat10', value: 4 } as const].map((filter, q) => ({
      vector: data.queries.slice(q * data.d, (q + 1) * data.d),
      k: 10,
      filter,
    }));
    const before = [];
    for (const r of requests) before.push(Array.from(await live.search(r)));
    // A second connection while the first is open (the throughput view's threads), then after it closed.
    const side = await participant.adapter.reopen!(ctx as never);
    for (let i = 0; i < requests.length; i++) assert.deepEqual(Array.from(await side.search(requests[i])), before[i]);
    await side.close();
    const bytes = await live.diskBytes!();
    await live.close();
    const again = await participant.adapter.reopen!(ctx as never);
    try {
      for (let i = 0; i < requests.length; i++) assert.deepEqual(Array.from(await again.search(requests[i])), before[i]);
      assert.equal(await again.diskBytes!(), bytes);
      assert.deepEqual(
        Array.from(await again.search({ vector: rowVector(o, 9), k: 2, filter: null })).sort((a, b) => a - b),
        [5, 9],
      );
    } finally {
      await again.close();
    }
    const empty = mkdtempSync(join(tmpdir(), 'vecbench-sqlite-vec-empty-'));
    try {
      await assert.rejects(participant.adapter.reopen!({ ...ctx, workDir: empty } as never));
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});

// A small text corpus: each row's vector is a random unit vector, its text names a colour and
// an animal, so keyword hits are known exactly.
describe('participant sqlite-vec: FTS5 keyword and SQL-fused hybrid arms', () => {
  const COLOURS = ['red', 'green', 'blue', 'yellow', 'purple'];
  const ANIMALS = ['foxes', 'otters', 'herons', 'badgers', 'lizards', 'moths'];
  const n = 300;
  const d = 16;
  let workDir: string;
  let session: EngineSession;
  const vectors = new Float32Array(n * d);
  const text: string[] = [];
  const attrsOf = (ids: number[]) => Object.fromEntries(ATTRIBUTES.map((a) => [a, Int32Array.from(ids, (r) => (a === 'cat10' ? r % 10 : r))])) as RowAttributes;
  before(async () => {
    let seed = 11;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 1;
    for (let r = 0; r < n; r++) {
      let s = 0;
      for (let j = 0; j < d; j++) s += (vectors[r * d + j] = rnd()) ** 2;
      for (let j = 0; j < d; j++) vectors[r * d + j] /= Math.sqrt(s);
      text.push(`${COLOURS[r % 5]} ${ANIMALS[r % 6]} running`);
    }
    const p = await loadParticipant('sqlite-vec');
    workDir = mkdtempSync(join(tmpdir(), 'vecbench-sqlite-vec-text-'));
    session = await p.adapter.open({
      dataset: { name: 'text-test', n, d, metric: 'cosine', hasText: true },
      settings: p.index,
      workDir,
      maxConcurrency: 1,
      log: () => {},
    });
    const ids = Array.from({ length: n }, (_, r) => r);
    await session.ingest({ ids: Int32Array.from(ids), vectors, attrs: attrsOf(ids), text });
    await session.buildIndex();
  });
  after(async () => {
    await session?.close();
    rmSync(workDir, { recursive: true, force: true });
  });

  test('keywordSearch ranks the rows holding both terms first, honours filters and deletes', async () => {
    assert.ok(session.keywordSearch && session.hybridSearch, 'a text dataset gets both native arms');
    const p = await loadParticipant('sqlite-vec');
    assert.match(p.adapter.keywordScoring ?? '', /BM25/);
    const both = Array.from({ length: n }, (_, r) => r).filter((r) => r % 30 === 25);
    const got = Array.from(await session.keywordSearch!('Red otters!', both.length, null));
    assert.deepEqual(
      [...got].sort((a, b) => a - b),
      both,
    );
    const stem = Array.from(await session.keywordSearch!('otter', 100, null));
    assert.ok(stem.length > 0 && stem.every((r) => r % 6 === 1), `stemmed hits ${stem.slice(0, 5)}`);
    // FTS5 operators in the text are words, not syntax.
    assert.ok((await session.keywordSearch!('NOT AND "red', 5, null)).length > 0);
    assert.equal((await session.keywordSearch!('?!', 5, null)).length, 0);
    const filter = { op: 'eq', field: 'cat10', value: 5 } as const;
    const filtered = Array.from(await session.keywordSearch!('red otters', 20, filter));
    assert.ok(filtered.length > 0 && filtered.every((r) => r % 10 === 5), `filtered ${filtered}`);
    await session.delete!(Int32Array.of(both[0]));
    assert.ok(!Array.from(await session.keywordSearch!('red otters', 20, null)).includes(both[0]));
    await session.insert!({
      ids: Int32Array.of(both[0]),
      vectors: vectors.slice(both[0] * d, (both[0] + 1) * d),
      attrs: attrsOf([both[0]]),
      text: [text[both[0]]],
    });
    assert.ok(Array.from(await session.keywordSearch!('red otters', 20, null)).includes(both[0]));
  });

  test('hybridSearch fuses both arms in one call: a row matching the text and the vector comes first', async () => {
    const target = 55; // red otters
    const request = { vector: vectors.slice(target * d, (target + 1) * d), k: 10, filter: null };
    const fused = Array.from(await session.hybridSearch!(request, 'red otters'));
    assert.equal(fused.length, 10);
    assert.equal(fused[0], target);
    assert.equal(new Set(fused).size, fused.length, 'no id twice');
    assert.ok(fused.filter((r) => r % 30 === 25).length >= 3, `fused ${fused}`);
    const filter = { op: 'range', field: 'cat10', gte: 0, lt: 5 } as const;
    const f = Array.from(await session.hybridSearch!({ ...request, filter }, 'red otters'));
    assert.ok(f.length > 0 && f.every((r) => r % 10 < 5), `filtered fused ${f}`);
    const p = await loadParticipant('sqlite-vec');
    assert.match(p.adapter.fusionMethod ?? '', /RRF, k = 60/);
  });
});

// The short churn runbook every writing engine goes through, on the command line: freshness,
// reads under writes, delete + reinsert and upsert, no tombstone leak. An exact search keeps
// recall 1 throughout.
test('sqlite-vec: the short churn runbook: every write visible, no leaks, exact recall after the cycle', () => {
  const dir = mkdtempSync(join(tmpdir(), 'vecbench-sqlite-vec-churn-'));
  try {
    const runbook = join(dir, 'short.json');
    writeFileSync(runbook, JSON.stringify(SHORT_RUNBOOK));
    const bin = fileURLToPath(new URL('../../bin/vecbench.js', import.meta.url));
    const r = spawnSync(
      process.execPath,
      [bin, 'churn', '--dataset', 'synthetic-3000', '--participants', 'sqlite-vec', '--runbook', runbook, '--out', join(dir, 'results')],
      {
        encoding: 'utf8',
        env: { ...process.env, VECBENCH_QUIET: '1', VECBENCH_DATA: join(dir, 'data') },
        timeout: 600_000,
      },
    );
    assert.equal(r.status, 0, r.stderr);
    checkShortRun(join(dir, 'results'), 'synthetic-3000', 3000, { 'sqlite-vec': { minRecall: 0.999, minMixedRecall: 0.9 } });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
