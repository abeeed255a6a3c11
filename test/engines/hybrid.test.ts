import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { prepareDataset } from '../../src/prepare/registry.ts';
import type { Dataset } from '../../src/datasets/layout.ts';
import { DEBIAN_DATASET, DEBIAN_STATUS, debianCorpus, parseStatus } from '../../src/prepare/sources/debian-packages.ts';
import { Bm25Index } from '../../src/hybrid/bm25.ts';
import { readQualitySection, type QualitySection } from '../../src/hybrid/schema.ts';
import { runSteps } from '../../src/features.ts';
import { scoreRanking } from '../../src/metrics/quality.ts';
import { deriveQuality, renderQuality } from '../../src/report/quality.ts';
import { readResult, resultPath } from '../../src/results/store.ts';
import { ladderFor, loadParticipant } from '../../src/runner/participants.ts';
import { run } from '../../src/runner/run.ts';

const STATUS = `Package: libfoo1
Status: install ok installed
Section: libs
Installed-Size: 120
Architecture: amd64
Source: foo (1.2-3)
Description: library for frobnicating widgets
 The foo library frobnicates widgets quickly.
 .
 This package holds the shared library.

Package: libfoo1
Architecture: i386
Source: foo (1.2-3)
Description: library for frobnicating widgets
 The foo library frobnicates widgets quickly (32-bit build).

Package: foo-tools
Section: utils
Installed-Size: 88
Architecture: amd64
Source: foo
Description: command line tools for widgets
 Tools built on the foo library.

Package: bar
Architecture: all
Description: transitional package
 This is a dummy package; it can be removed.

Package: baz
Architecture: all
Description: transitional package
 Another dummy package.

Package: nolong
Architecture: all
Description: a package without a long description
`;

test('debian corpus: records, multi-arch ids, known-item graded labels, ambiguous synopses dropped', () => {
  const recs = parseStatus(STATUS);
  assert.equal(recs.length, 5, 'the record without a long description is left out');
  assert.deepEqual(recs[0], {
    name: 'libfoo1',
    arch: 'amd64',
    source: 'foo',
    synopsis: 'library for frobnicating widgets',
    long: 'The foo library frobnicates widgets quickly.\n\nThis package holds the shared library.',
    section: 'libs',
    installedKiB: 120,
  });
  assert.deepEqual([recs[1].section, recs[1].installedKiB], ['unknown', 0], 'a record without Section or Installed-Size');
  const c = debianCorpus(STATUS, 'fixture');
  assert.deepEqual(
    c.docs.map((d) => d.id),
    ['libfoo1:amd64', 'libfoo1:i386', 'foo-tools', 'bar', 'baz'],
  );
  // "transitional package" belongs to two sources: ambiguous, no query.
  assert.deepEqual(
    c.queries.map((q) => q.text),
    ['library for frobnicating widgets', 'command line tools for widgets'],
  );
  // Real attributes: the Section (by name, sorted) and the Installed-Size; a query carries its package's.
  assert.deepEqual(c.real, { labels: ['libs', 'unknown', 'utils'], measure: 'installed size, KiB' });
  assert.deepEqual(
    c.docs.map((d) => [d.label, d.measure]),
    [
      [0, 120],
      [1, 0],
      [2, 88],
      [1, 0],
      [1, 0],
    ],
  );
  assert.deepEqual(
    c.queries.map((q) => [q.label, q.measure]),
    [
      [0, 120],
      [2, 88],
    ],
  );
  assert.deepEqual([...c.qrels.get('q:libfoo1:amd64')!].sort(), [
    ['foo-tools', 1],
    ['libfoo1:amd64', 2],
    ['libfoo1:i386', 2],
  ]);
  assert.deepEqual([...c.qrels.get('q:foo-tools')!].sort(), [
    ['foo-tools', 2],
    ['libfoo1:amd64', 1],
    ['libfoo1:i386', 1],
  ]);
});

test('client-side BM25: ranks by term rarity and respects a row filter', () => {
  const bm = new Bm25Index(['the quick brown fox', 'a lazy dog sleeps', 'quick quick dogs run', 'brown bread and butter']);
  // "dog" stems match rows 1 and 2; "lazy" only row 1.
  assert.deepEqual(bm.search('lazy dogs', 10), [1, 2]);
  assert.deepEqual(
    bm.search('lazy dogs', 10, (row) => row !== 1),
    [2],
  );
  assert.deepEqual(bm.search('zebra', 10), []);
  assert.deepEqual(bm.search('brown', 1).length, 1);
});

// The real run: the built-in corpus of this machine, exact and hnswlib, all three arms.
const dataDir = mkdtempSync(join(tmpdir(), 'vecbench-hybrid-data-'));
const outDir = mkdtempSync(join(tmpdir(), 'vecbench-hybrid-out-'));
after(() => {
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(outDir, { recursive: true, force: true });
});
let ds: Dataset;
const sections: Record<string, QualitySection> = {};

before(async () => {
  assert.ok(existsSync(DEBIAN_STATUS), `${DEBIAN_STATUS} is on every Debian machine`);
  process.env.VECBENCH_QUIET = '1';
  ds = await prepareDataset(dataDir, DEBIAN_DATASET);
  await run({
    dataset: DEBIAN_DATASET,
    participants: ['exact', 'hnswlib'],
    outDir,
    dataDir,
    clients: 4,
    groups: [{ filter: 'none', k: 10 }],
    pointTimeoutS: 600,
    loadTimeoutS: 600,
    steps: await runSteps({ quality: true }),
  });
  for (const p of ['exact', 'hnswlib']) sections[p] = readQualitySection(readResult(resultPath(outDir, DEBIAN_DATASET, p)).extra, p)!;
});

test('the built-in corpus is a labelled text dataset', () => {
  assert.ok(ds.n >= 100, `only ${ds.n} packages`);
  assert.ok(ds.labels && ds.text && ds.labels.queryText.length === ds.nq);
  assert.equal(ds.d, 100);
  for (const judged of ds.labels.qrels.values()) assert.ok([...judged.values()].includes(2), 'every query has its known item');
});

test("the built-in corpus carries real attributes: each package's Section and Installed-Size", () => {
  const recs = parseStatus(readFileSync(DEBIAN_STATUS, 'utf8'));
  assert.ok(ds.real?.labels.includes('libs'), `sections: ${ds.real?.labels.join(', ')}`);
  const byName = new Map(recs.map((r) => [r.name, r]));
  for (let row = 0; row < ds.n; row += 37) {
    // Multi-arch copies (libc6:amd64, libc6:i386) may differ in size: only single copies here.
    if (ds.labels!.docIds[row].includes(':')) continue;
    const r = byName.get(ds.labels!.docIds[row])!;
    assert.equal(ds.real!.labels[ds.attrs.label[row]], r.section, ds.labels!.docIds[row]);
    assert.equal(ds.attrs.measure[row], r.installedKiB, ds.labels!.docIds[row]);
  }
  // A query's label is its known item's (the synopsis' own package).
  for (let q = 0; q < ds.nq; q += 11) {
    const item = [...ds.labels!.qrels.get(q)!].find(([, rel]) => rel === 2)![0];
    assert.equal(ds.queryAttrs.label[q], ds.attrs.label[ds.labels!.docIds.indexOf(item)], `query ${q}`);
  }
});

test('every arm is measured: keyword once, dense and hybrid at every ladder point', async () => {
  const hnsw = await loadParticipant('hnswlib');
  const ladder = ladderFor(hnsw.settings, 'none', 100);
  const q = sections.hnswlib;
  assert.equal(q.status, 'measured');
  assert.equal(q.queries, ds.nq);
  assert.equal(q.points.filter((p) => p.arm === 'keyword').length, 1);
  assert.deepEqual(
    q.points.filter((p) => p.arm === 'dense').map((p) => p.knobs),
    ladder,
  );
  assert.deepEqual(
    q.points.filter((p) => p.arm === 'hybrid').map((p) => p.knobs),
    ladder,
  );
  assert.equal(q.keyword?.where, 'client-side');
  assert.match(q.keyword!.scoring, /BM25/);
  for (const p of q.points) {
    assert.equal(p.round_trips, p.arm === 'hybrid' ? 2 : 1);
    assert.equal(p.errors + p.unknown_ids + p.duplicate_ids, 0);
    assert.ok(p.views[0].qps > 0 && p.views[0].latency_ms.p50 > 0);
    for (const v of [p.metrics.ndcg10, p.metrics.mrr10, p.metrics.hit10, p.metrics.recall100!]) assert.ok(v >= 0 && v <= 1);
    assert.ok(p.metrics.ndcg10_ci[0] <= p.metrics.ndcg10 && p.metrics.ndcg10 <= p.metrics.ndcg10_ci[1]);
    assert.ok(p.metrics.hit10 >= p.metrics.mrr10);
  }
});

test('the keyword arm scores what BM25 returns, the same for every participant', () => {
  const bm = new Bm25Index(ds.text!);
  const labels = ds.labels!;
  const queries = [...labels.qrels.keys()].sort((a, b) => a - b);
  const mean =
    queries.reduce(
      (a, q) =>
        a +
        scoreRanking(
          bm.search(labels.queryText[q], 100).map((r) => labels.docIds[r]),
          labels.qrels.get(q)!,
        ).ndcg10,
      0,
    ) / queries.length;
  for (const p of ['exact', 'hnswlib']) {
    const kw = sections[p].points.find((x) => x.arm === 'keyword')!;
    assert.ok(Math.abs(kw.metrics.ndcg10 - mean) < 1e-12, `${p}: ${kw.metrics.ndcg10} vs ${mean}`);
  }
  // Known-item search on package descriptions: BM25 finds most known items.
  assert.ok(mean > 0.3, `keyword nDCG@10 ${mean}`);
});

test('oracle and Delta bridge: exact search is the oracle; hybrid lifts are paired', () => {
  const exact = sections.exact;
  const dense = exact.points.find((p) => p.arm === 'dense')!;
  assert.ok(Math.abs(dense.delta_ndcg10!) < 0.01, `exact delta ${dense.delta_ndcg10}`);
  assert.ok(Math.abs(dense.metrics.ndcg10 - exact.oracle!.dense.ndcg10) < 0.01);
  for (const q of [exact, sections.hnswlib]) {
    for (const p of q.points) {
      if (p.arm === 'keyword') {
        assert.equal(p.delta_ndcg10, null);
        continue;
      }
      const oracle = p.arm === 'dense' ? q.oracle!.dense.ndcg10 : q.oracle!.hybrid!.ndcg10;
      assert.ok(Math.abs(p.delta_ndcg10! - (oracle - p.metrics.ndcg10)) < 1e-9);
      if (p.arm === 'hybrid') {
        const denseHere = q.points.find((x) => x.arm === 'dense' && x.ladder_index === p.ladder_index)!;
        const kw = q.points.find((x) => x.arm === 'keyword')!;
        const lift = p.lift_ndcg10!;
        assert.ok(Math.abs(lift.over_dense.estimate - (p.metrics.ndcg10 - denseHere.metrics.ndcg10)) < 1e-9);
        assert.ok(Math.abs(lift.over_keyword.estimate - (p.metrics.ndcg10 - kw.metrics.ndcg10)) < 1e-9);
        assert.ok(lift.over_dense.low <= lift.over_dense.estimate && lift.over_dense.estimate <= lift.over_dense.high);
      }
    }
  }
});

test('report: quality rows per participant and arm, and a terminal section', () => {
  const results = ['exact', 'hnswlib'].map((p) => readResult(resultPath(outDir, DEBIAN_DATASET, p)));
  const rows = deriveQuality(results);
  assert.deepEqual([...new Set(rows.map((r) => `${r.participant}/${r.arm}`))].sort(), [
    'exact/dense',
    'exact/hybrid',
    'exact/keyword',
    'hnswlib/dense',
    'hnswlib/hybrid',
    'hnswlib/keyword',
  ]);
  const text = renderQuality(rows);
  assert.match(text, /answer quality on debian-packages/);
  assert.match(text, /nDCG@10 \[95% CI\]/);
  // Print the figures the issue asks for (visible in the test log).
  const best = (arm: string) => rows.filter((r) => r.participant === 'exact' && r.arm === arm)[0];
  const h = best('hybrid');
  process.stderr.write(
    `built-in corpus (${ds.n} docs, ${ds.nq} queries), exact: nDCG@10 dense ${best('dense').ndcg10.toFixed(3)}, keyword ${best('keyword').ndcg10.toFixed(3)}, hybrid ${h.ndcg10.toFixed(3)}; lift vs dense ${h.lift_over_dense!.toFixed(3)} [${h.lift_over_dense_ci_low!.toFixed(3)}, ${h.lift_over_dense_ci_high!.toFixed(3)}], vs keyword ${h.lift_over_keyword!.toFixed(3)} [${h.lift_over_keyword_ci_low!.toFixed(3)}, ${h.lift_over_keyword_ci_high!.toFixed(3)}]\n`,
  );
});

for (const [name, scoring] of [
  ['lancedb', /BM25/],
  ['pgvector-pglite', /ts_rank: not BM25, no IDF/],
] as const)
  test(`${name}: its native keyword arm answers the labelled queries and honours filters`, async () => {
    const p = await loadParticipant(name);
    const workDir = mkdtempSync(join(tmpdir(), `vecbench-${name}-fts-`));
    const session = await p.adapter.open({
      dataset: { name: ds.name, n: ds.n, d: ds.d, metric: ds.metric, hasText: true },
      settings: p.index,
      workDir,
      maxConcurrency: 2,
      log: () => {},
    });
    try {
      assert.ok(session.keywordSearch, 'a text dataset gets the native keyword arm');
      assert.match(p.adapter.keywordScoring ?? '', scoring);
      const ids = Int32Array.from({ length: ds.n }, (_, i) => i);
      await session.ingest({ ids, vectors: ds.base, attrs: ds.attrs, text: ds.text });
      await session.buildIndex();
      const labels = ds.labels!;
      const queries = [...labels.qrels.keys()].sort((a, b) => a - b);
      let ndcg = 0;
      for (const q of queries) {
        const got = Array.from(await session.keywordSearch!(labels.queryText[q], 10, null));
        assert.ok(got.length <= 10 && got.every((id) => id >= 0 && id < ds.n));
        ndcg += scoreRanking(
          got.map((r) => labels.docIds[r]),
          labels.qrels.get(q)!,
        ).ndcg10;
      }
      ndcg /= queries.length;
      assert.ok(ndcg > 0.3, `native keyword nDCG@10 ${ndcg}`);
      const filter = { op: 'eq' as const, field: 'cat10' as const, value: 3 };
      const filtered = Array.from(await session.keywordSearch!(labels.queryText[queries[0]], 50, filter));
      assert.ok(filtered.length > 0 && filtered.every((id) => ds.attrs.cat10[id] === 3), 'rows come back, and every one passes the filter');
      // A deleted row is never returned again.
      const victim = filtered[0];
      await session.delete!(Int32Array.of(victim));
      assert.ok(!Array.from(await session.keywordSearch!(labels.queryText[queries[0]], 50, filter)).includes(victim));
    } finally {
      await session.close();
      rmSync(workDir, { recursive: true, force: true });
    }
  });
