// The Orama participant end to end on the harness's small synthetic set: the real engine, its
// one-point ladder (exact search), filters, writes, its native keyword and hybrid arms on a
// small text corpus, reopen without ingest, and settings validation. The contract suite runs on
// the same load: its reads first, the tests here, then its writes and reopen, then the reopen
// test here (on the database the suite's reopen left).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import type { FilterExpr, RowAttributes } from '../../src/contracts.ts';
import { ATTRIBUTES } from '../../src/contracts.ts';
import { passes } from '../../src/datasets/groups.ts';
import { ladderFor, loadParticipant, PARTICIPANTS_DIR } from '../../src/runner/participants.ts';
import { CONTRACT_QUERIES, CONTRACT_ROWS, contractSuite } from '../contract/suite.ts';
import { SHORT_RUNBOOK, checkShortRun } from '../helpers/churn-short.ts';
import { checkLadder, openOnSynthetic, assertClean, rowsOf, rowVector } from '../helpers/participant-harness.ts';

type Opened = Awaited<ReturnType<typeof openOnSynthetic>>;

describe('participant orama', () => {
  let o: Opened;
  before(async () => {
    o = await openOnSynthetic('orama', { n: CONTRACT_ROWS, nq: CONTRACT_QUERIES });
  });
  after(async () => {
    await o?.cleanup();
  });

  contractSuite('orama', join(PARTICIPANTS_DIR, 'orama'), { shared: () => o, part: 'reads' });

  test('reports the installed engine version and one ladder point without knobs', async () => {
    assert.match(await o.participant.adapter.engineVersion(), /^3\.\d+\.\d+$/);
    assert.deepEqual(ladderFor(o.participant.settings, 'none', 10), [{}]);
    assert.equal(o.participant.settings.calibration, undefined, 'no knob: read on its ladder');
  });

  test('exact search: unfiltered recall 1.0 at k=10 and k=100', async () => {
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

  test('a knob is refused: the search has none', async () => {
    await assert.rejects(o.session.setKnobs({ ef: 10 }), /orama: unknown knob "ef"/);
    await o.session.setKnobs({});
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
    assert.ok((await s.diskBytes!()) > o.data.n * o.data.d * 4, 'the saved database holds at least the raw vectors');
    // Back to the base rows: the contract suite's write checks, later on this engine, judge the
    // ids a filter returns by the base rows' attributes.
    await s.delete!(Int32Array.from(fresh));
    await s.upsert!(rowsOf(o, [5]));
  });

  test('l2 datasets are refused before any work, and bad settings name the field', () => {
    const p = o.participant.adapter;
    assert.match(
      p.checkDataset!(p.settingsSchema.parse({}), { name: 'fashion', n: 1, d: 2, metric: 'l2', hasText: false }) ?? '',
      /cosine similarity only and fashion is an l2 dataset/,
    );
    assert.equal(p.checkDataset!(p.settingsSchema.parse({}), { name: 'glove', n: 1, d: 2, metric: 'cosine', hasText: false }), null);
    const bad = p.settingsSchema.safeParse({ similarity: 2 });
    assert.equal(bad.success, false);
    assert.deepEqual(bad.error!.issues[0].path, ['similarity']);
    const typo = p.settingsSchema.safeParse({ similarty: 0 });
    assert.equal(typo.success, false);
    assert.equal(p.settingsSchema.safeParse({}).success, true);
  });

  // The suite's write checks and its reopen, which closes the session: last on this engine (the
  // tests after this describe open engines of their own).
  contractSuite('orama', join(PARTICIPANTS_DIR, 'orama'), { shared: () => o, part: 'writes' });

  // After the suite's reopen check, which closed the loaded session: the session closed here is
  // one reopened, without ingest, on the database that check left, written to before the close.
  test('reopen: the saved database answers the same without ingest', async () => {
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
    const bytes = await live.diskBytes!();
    await live.close();
    const again = await participant.adapter.reopen!(ctx as never);
    try {
      for (let i = 0; i < requests.length; i++) assert.deepEqual(Array.from(await again.search(requests[i])), before[i]);
      assert.equal(await again.diskBytes!(), bytes);
      // The writes before the close are in the saved copy: row 5 holds row 9's vector.
      assert.deepEqual(
        Array.from(await again.search({ vector: rowVector(o, 9), k: 2, filter: null })).sort((a, b) => a - b),
        [5, 9],
      );
    } finally {
      await again.close();
    }
  });
});

// A small text corpus: each row's vector is a random unit vector, its text names a colour and
// an animal, so keyword hits are known exactly.
describe('participant orama: native keyword and hybrid arms', () => {
  const COLOURS = ['red', 'green', 'blue', 'yellow', 'purple'];
  const ANIMALS = ['foxes', 'otters', 'herons', 'badgers', 'lizards', 'moths'];
  const n = 300;
  const d = 16;
  let workDir: string;
  let session: Awaited<ReturnType<Awaited<ReturnType<typeof loadParticipant>>['adapter']['open']>>;
  const vectors = new Float32Array(n * d);
  const text: string[] = [];
  before(async () => {
    let seed = 7;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 1;
    for (let r = 0; r < n; r++) {
      let s = 0;
      for (let j = 0; j < d; j++) s += (vectors[r * d + j] = rnd()) ** 2;
      for (let j = 0; j < d; j++) vectors[r * d + j] /= Math.sqrt(s);
      text.push(`${COLOURS[r % 5]} ${ANIMALS[r % 6]} running`);
    }
    const p = await loadParticipant('orama');
    workDir = mkdtempSync(join(tmpdir(), 'vecbench-orama-text-'));
    session = await p.adapter.open({
      dataset: { name: 'text-test', n, d, metric: 'cosine', hasText: true },
      settings: p.index,
      workDir,
      maxConcurrency: 1,
      log: () => {},
    });
    const attrs = Object.fromEntries(ATTRIBUTES.map((a) => [a, Int32Array.from({ length: n }, (_, r) => (a === 'cat10' ? r % 10 : r))])) as RowAttributes;
    await session.ingest({ ids: Int32Array.from({ length: n }, (_, r) => r), vectors, attrs, text });
    await session.buildIndex();
  });
  after(async () => {
    await session?.close();
    rmSync(workDir, { recursive: true, force: true });
  });

  test('keywordSearch ranks the rows holding both terms first, honours filters and deletes', async () => {
    assert.ok(session.keywordSearch && session.hybridSearch, 'a text dataset gets both native arms');
    const p = await loadParticipant('orama');
    assert.match(p.adapter.keywordScoring ?? '', /BM25/);
    // "red otters": rows r with r % 5 == 0 and r % 6 == 1 (r % 30 == 25) hold both.
    const both = Array.from({ length: n }, (_, r) => r).filter((r) => r % 30 === 25);
    const got = Array.from(await session.keywordSearch!('red otters', both.length, null));
    assert.deepEqual(
      [...got].sort((a, b) => a - b),
      both,
    );
    // Stemming: "otter" finds "otters".
    const stem = Array.from(await session.keywordSearch!('otter', 100, null));
    assert.ok(stem.length > 0 && stem.every((r) => r % 6 === 1), `stemmed hits ${stem.slice(0, 5)}`);
    // A text without a word finds nothing (Orama alone would return every document).
    assert.equal((await session.keywordSearch!('', 5, null)).length, 0);
    assert.equal((await session.keywordSearch!(' ?! ', 5, null)).length, 0);
    const filter = { op: 'eq', field: 'cat10', value: 5 } as const;
    const filtered = Array.from(await session.keywordSearch!('red otters', 20, filter));
    assert.ok(filtered.length > 0 && filtered.every((r) => r % 10 === 5), `filtered ${filtered}`);
    await session.delete!(Int32Array.of(both[0]));
    assert.ok(!Array.from(await session.keywordSearch!('red otters', 20, null)).includes(both[0]));
    await session.insert!({
      ids: Int32Array.of(both[0]),
      vectors: vectors.slice(both[0] * d, (both[0] + 1) * d),
      attrs: Object.fromEntries(ATTRIBUTES.map((a) => [a, Int32Array.of(a === 'cat10' ? both[0] % 10 : both[0])])) as RowAttributes,
      text: [text[both[0]]],
    });
  });

  test('hybridSearch fuses both arms in one call: a row matching the text and the vector comes first', async () => {
    const target = 55; // red otters
    const request = { vector: vectors.slice(target * d, (target + 1) * d), k: 10, filter: null };
    const fused = Array.from(await session.hybridSearch!(request, 'red otters'));
    assert.equal(fused.length, 10);
    assert.equal(fused[0], target);
    // The text pulls other red otters above the vector's own neighbours.
    assert.ok(fused.filter((r) => r % 30 === 25).length >= 3, `fused ${fused}`);
    const filter = { op: 'range', field: 'cat10', gte: 0, lt: 5 } as const;
    const f = Array.from(await session.hybridSearch!({ ...request, filter }, 'red otters'));
    assert.ok(f.length > 0 && f.every((r) => r % 10 < 5), `filtered fused ${f}`);
    const p = await loadParticipant('orama');
    assert.match(p.adapter.fusionMethod ?? '', /hybrid/);
  });
});

// The short churn runbook every writing engine goes through, on the command line: freshness,
// reads under writes, delete + reinsert and upsert, no tombstone leak. An exact search keeps
// recall 1 throughout.
test('orama: the short churn runbook: every write visible, no leaks, exact recall after the cycle', () => {
  const dir = mkdtempSync(join(tmpdir(), 'vecbench-orama-churn-'));
  try {
    const runbook = join(dir, 'short.json');
    writeFileSync(runbook, JSON.stringify(SHORT_RUNBOOK));
    const bin = fileURLToPath(new URL('../../bin/vecbench.js', import.meta.url));
    const r = spawnSync(
      process.execPath,
      [bin, 'churn', '--dataset', 'synthetic-3000', '--participants', 'orama', '--runbook', runbook, '--out', join(dir, 'results')],
      {
        encoding: 'utf8',
        env: { ...process.env, VECBENCH_QUIET: '1', VECBENCH_DATA: join(dir, 'data') },
        timeout: 600_000,
      },
    );
    assert.equal(r.status, 0, r.stderr);
    checkShortRun(join(dir, 'results'), 'synthetic-3000', 3000, { orama: { minRecall: 0.999, minMixedRecall: 0.9 } });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
