// `vecbench import`: a VectorBench result JSON and ann-benchmarks HDF5 result files (both
// written here) become imported result files beside our own, and the tables read them with
// the same cell rule (src/metrics/frontier.ts readCell) as measured results.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { loadDataset, writePrepared, type Dataset } from '../../src/datasets/layout.ts';
import { generateSynthetic } from '../../src/prepare/synthetic.ts';
import { readCell, type CurvePoint } from '../../src/metrics/frontier.ts';
import { deriveCells, TARGETS, type DerivedCell } from '../../src/report/cells.ts';
import { renderPage } from '../../src/report/html.ts';
import { detectFormat, importResults } from '../../src/report/import.ts';
import { knobsFromName, renumberLadder } from '../../src/report/import/common.ts';
import type { ResultPoint } from '../../src/results/schema.ts';
import { readAllResults, readResult } from '../../src/results/store.ts';
import { AB_EXPECTED, AB_RUNS, HOSTILE, naiveTopK, vectorBenchFixture, writeAnnBenchmarksFixtures, writeJson } from '../helpers/import-fixtures.ts';

const BIN = fileURLToPath(new URL('../../bin/vecbench.js', import.meta.url));
const DS = 'abtest-3000';
const dir = mkdtempSync(join(tmpdir(), 'vecbench-import-'));
const data = join(dir, 'data');
const out = join(dir, 'results');
const files = join(dir, 'files');
mkdirSync(files, { recursive: true });
after(() => rmSync(dir, { recursive: true, force: true }));

function vecbench(...args: string[]) {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    encoding: 'utf8',
    env: { ...process.env, VECBENCH_QUIET: '1', VECBENCH_DATA: data },
    timeout: 300_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function cellsOf(stdout: string): DerivedCell[] {
  return (JSON.parse(stdout) as { cells: DerivedCell[] }).cells;
}

/** What the cell rule says for stored throughput points, computed here from the points. */
function expectedCells(points: CurvePoint[]) {
  return TARGETS.map((t) => ({ target: t, ...readCell(points, t, 'higher') }));
}

let ds: Dataset;
before(async () => {
  // A small prepared dataset of our own, made in-process (no registry needed).
  await writePrepared(data, DS, generateSynthetic(3000, 300, { clusters: 10 }));
  ds = await loadDataset(data, DS, { verify: false });
});

describe('helpers', () => {
  test('knobs are parsed from ann-benchmarks run names', () => {
    assert.deepEqual(knobsFromName('Annoy(n_trees=100,search_k=100)'), { n_trees: 100, search_k: 100 });
    assert.deepEqual(knobsFromName("hnswlib ({'M': 16, 'efConstruction': 500}, ef=10)"), { M: 16, efConstruction: 500, ef: 10 });
    assert.deepEqual(knobsFromName('BruteForce()'), {});
  });
  test('the ladder is renumbered in knob order, views sharing an index', () => {
    const p = (ef: number, view: 'latency' | 'throughput') => ({ knobs: { ef }, view, ladder_index: 9 }) as unknown as ResultPoint;
    const r = renumberLadder([p(40, 'throughput'), p(10, 'throughput'), p(10, 'latency'), p(20, 'throughput')]);
    assert.deepEqual(
      r.map((x) => [x.knobs.ef, x.view, x.ladder_index]),
      [
        [10, 'latency', 0],
        [10, 'throughput', 0],
        [20, 'throughput', 1],
        [40, 'throughput', 2],
      ],
    );
  });
  test('formats are told by content', () => {
    const j = writeJson(join(files, 'not-vb.json'), { hello: 1 });
    assert.throws(() => detectFormat(j), /not a VectorBench result file/);
    writeFileSync(join(files, 'garbage.bin'), 'not json at all');
    assert.throws(() => detectFormat(join(files, 'garbage.bin')), /neither HDF5 \(ann-benchmarks\) nor JSON \(VectorBench\)/);
  });
});

describe('VectorBench result JSON', () => {
  test('imports beside our own, marked imported, views and exact search mapped', async () => {
    const path = writeJson(join(files, 'qdrant.json'), vectorBenchFixture(DS));
    const r = await importResults(path, { outDir: out, dataDir: data });
    assert.equal(r.participant, 'qdrant-default@vectorbench');
    assert.equal(r.dataset, DS);
    const stored = readResult(r.path);
    assert.equal(stored.origin, 'imported');
    assert.equal(stored.engine, 'qdrant');
    assert.equal(stored.engine_version, `1.12.0 ${HOSTILE}`);
    // The prepared dataset's identity is recorded, so the imported file sits with our results.
    assert.equal(stored.dataset.hash, ds.hash);
    assert.equal(stored.dataset.n, 3000);
    const none10 = stored.groups.find((g) => g.key === 'none/10')!;
    assert.equal(none10.status, 'measured');
    const tp = none10.points.filter((p) => p.view === 'throughput');
    const lat = none10.points.filter((p) => p.view === 'latency');
    assert.equal(tp.length, 5, 'four ANN points and one exact-search point');
    assert.equal(lat.length, 4);
    const exact = tp.find((p) => p.flags.includes('exact-search'))!;
    assert.deepEqual(exact.knobs, { search: 'exact' });
    assert.equal(exact.ladder_index, 4, 'exact search follows the ANN ladder');
    assert.equal(tp[1].recall, 0.945, 'tie-aware recall kept');
    assert.equal(tp[1].recall_strict, 0.943, 'strict recall kept');
    assert.equal(tp[1].clients, 8);
    assert.equal(lat[0].clients, 1);
    assert.equal(tp[1].latency_ms.mean, 4000 / 3900);
    assert.equal(stored.groups.find((g) => g.key === 'lang/10')!.status, 'unsupported');
    const imp = stored.extra.import as { not_recorded: string[]; startup: unknown };
    assert.ok(imp.not_recorded.includes('recall_threshold'));
    assert.deepEqual(imp.startup, { 'none/10': { first_query_ms: 3.1 } });
  });

  test('importing again replaces the file; garbage is one clear line', async () => {
    const path = join(files, 'qdrant.json');
    await importResults(path, { outDir: out, dataDir: data });
    assert.equal(readAllResults(out).filter((r) => r.participant === 'qdrant-default@vectorbench').length, 1);
    const bad = writeJson(join(files, 'bad-vb.json'), { ...vectorBenchFixture(DS), groups: [{ key: 'none/10', points: [{ ladder_index: 0, qps: 'fast' }] }] });
    await assert.rejects(importResults(bad, { outDir: out, dataDir: data }), /bad-vb\.json: not a VectorBench result file: groups\.0\.points\.0\.\w+/);
  });
});

describe('ann-benchmarks HDF5 result files', () => {
  let paths: string[] = [];
  before(async () => {
    paths = await writeAnnBenchmarksFixtures(files, ds, naiveTopK(ds, 10));
  });

  test('an ann-benchmarks file needs --dataset (recall comes from its ground truth)', async () => {
    await assert.rejects(importResults(paths[0], { outDir: out, dataDir: data }), /pass --dataset NAME/);
  });

  test('each file is one point of none/10; recall is computed from the ground truth; QPS = 1 / mean time', async () => {
    for (const p of paths) await importResults(p, { outDir: out, dataDir: data, dataset: DS });
    // Importing a file a second time replaces its own point.
    const again = await importResults(paths[1], { outDir: out, dataDir: data, dataset: DS });
    assert.deepEqual(again.groups, [{ key: 'none/10', points: 4 }]);
    const stored = readResult(again.path);
    assert.equal(stored.participant, 'fakeann@ann-benchmarks');
    assert.equal(stored.origin, 'imported');
    const pts = stored.groups[0].points;
    assert.deepEqual(
      pts.map((p) => p.knobs),
      [
        { M: 16, ef: 10 },
        { M: 16, ef: 20 },
        { M: 16, ef: 40 },
        { M: 16, ef: 80 },
      ],
    );
    assert.deepEqual(
      pts.map((p) => p.ladder_index),
      [0, 1, 2, 3],
    );
    pts.forEach((p, i) => {
      assert.ok(Math.abs(p.recall - AB_EXPECTED[i].recall) < 1e-12, `run ${i}: recall ${p.recall}, expected ${AB_EXPECTED[i].recall}`);
      assert.ok(Math.abs(p.recall_strict - AB_EXPECTED[i].recall) < 1e-12);
      assert.ok(Math.abs(p.qps - AB_EXPECTED[i].qps) / AB_EXPECTED[i].qps < 1e-9, `run ${i}: qps ${p.qps}`);
      assert.equal(p.view, 'throughput');
      assert.equal(p.clients, 1);
      assert.ok(p.flags.includes('serial'));
      assert.equal(p.queries, ds.nq);
    });
    assert.equal(pts[0].short_results, 1, 'the -1 padded answer counts as short');
    const runs = (stored.extra.import as { runs: Record<string, { build_time: number }> }).runs;
    assert.equal(Object.keys(runs).length, 4);
    assert.equal(Object.values(runs)[0].build_time, 1.25);
  });

  test('an algo name that climbs out of --out is refused (issue 15, item 2)', async () => {
    const hostileDir = join(dir, 'hostile-ab');
    mkdirSync(hostileDir, { recursive: true });
    const [hostile] = await writeAnnBenchmarksFixtures(hostileDir, ds, naiveTopK(ds, 10), 10, AB_RUNS.slice(0, 1), '../../escaped-algo');
    const hostileOut = join(dir, 'hostile-ab-out');
    await assert.rejects(
      importResults(hostile, { outDir: hostileOut, dataDir: data, dataset: DS }),
      (e: Error) =>
        e.message ===
        `${hostile}: algo "../../escaped-algo" cannot be a name under --out: use letters, digits, '.', '_' and '-', starting with a letter or digit, at most 100 characters; correct it in the file`,
    );
    assert.equal(existsSync(hostileOut), false);
    assert.equal(existsSync(join(dir, 'escaped-algo@ann-benchmarks.json')), false);
  });

  test('a file for another dataset shape is refused with the fix', async () => {
    await writePrepared(data, 'tiny-100', generateSynthetic(1000, 100, { clusters: 5 }));
    await assert.rejects(
      importResults(paths[0], { outDir: out, dataDir: data, dataset: 'tiny-100' }),
      /300 queries, but dataset tiny-100 has 100; pass --dataset/,
    );
  });
});

describe('through the command line: tables read imported points with the cell rule', () => {
  test('vecbench import, then report --json and the page', async () => {
    const r = vecbench('import', join(files, 'qdrant.json'), join(files, 'fakeann-ef10.hdf5'), '--out', out, '--dataset', DS);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /VectorBench -> qdrant-default@vectorbench on abtest-3000/);
    assert.match(r.stdout, /ann-benchmarks -> fakeann@ann-benchmarks on abtest-3000: none\/10 \(4 points\)/);

    const bad = vecbench('import', join(files, 'fakeann-ef10.hdf5'), '--out', out);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /^vecbench: .*pass --dataset NAME/);
    assert.equal(bad.stderr.trim().split('\n').length, 1);

    const rep = vecbench('report', '--out', out, '--json');
    assert.equal(rep.code, 0, rep.stderr);
    const cells = cellsOf(rep.stdout);
    for (const participant of ['fakeann@ann-benchmarks', 'qdrant-default@vectorbench']) {
      const stored = readAllResults(out).find((x) => x.participant === participant)!;
      for (const g of stored.groups.filter((x) => x.status === 'measured')) {
        const pts: CurvePoint[] = g.points
          .filter((p) => p.view === 'throughput' && !p.flags.includes('exact-search'))
          .map((p) => ({ recall: p.recall, value: p.qps, knobs: p.knobs, ladderIndex: p.ladder_index }));
        for (const e of expectedCells(pts)) {
          const c = cells.find((x) => x.participant === participant && x.group === g.key && x.target === e.target);
          assert.ok(c, `${participant} ${g.key} ${e.target}: no cell`);
          assert.equal(c.origin, 'imported');
          assert.equal(c.status, e.status, `${participant} ${g.key} ${e.target}`);
          assert.equal(c.value, e.value);
        }
      }
    }
    // The ann-benchmarks curve: 0.80 / 0.94 / 0.96 / 1.00 at 1000 / 500 / 250 / 125 QPS.
    const ab = (t: number) => cells.find((x) => x.participant === 'fakeann@ann-benchmarks' && x.group === 'none/10' && x.target === t)!;
    assert.equal(ab(0.9).status, 'bracket_too_wide');
    assert.equal(ab(0.95).status, 'interpolated');
    assert.ok(Math.abs(ab(0.95).value! - Math.sqrt(AB_EXPECTED[1].qps * AB_EXPECTED[2].qps)) < 1e-6);
    assert.equal(ab(0.99).status, 'bracket_too_wide');
    const vbNone = (t: number) => cells.find((x) => x.participant === 'qdrant-default@vectorbench' && x.group === 'none/10' && x.target === t)!;
    assert.equal(vbNone(0.95).status, 'interpolated');
    assert.equal(cells.find((x) => x.participant === 'qdrant-default@vectorbench' && x.group === 'lang/10')!.status, 'unsupported');

    // The terminal table marks them.
    const table = vecbench('report', '--out', out);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /fakeann@ann-benchmarks \(imported\)/);

    // The page shows them, escaped, with the same numbers.
    const html = await renderPage(readAllResults(out));
    assert.match(html, /fakeann@ann-benchmarks<span class="badge imported">imported<\/span>/);
    assert.ok(!html.includes(HOSTILE), 'no live hostile markup');
    const v = ab(0.95).value!;
    assert.ok(html.includes(`data-participant="fakeann@ann-benchmarks" data-group="none/10" data-target="0.95" data-status="interpolated" data-value="${v}"`));
    assert.ok(existsSync(join(out, DS, 'fakeann@ann-benchmarks.json')));
    assert.ok(readFileSync(join(out, DS, 'qdrant-default@vectorbench.json'), 'utf8').includes('"origin": "imported"'));
  });
});

/** Every path under root, recursively (directories too). */
function allPaths(root: string): string[] {
  if (!existsSync(root)) return [];
  return readdirSync(root, { withFileTypes: true }).flatMap((e) => {
    const p = join(root, e.name);
    return e.isDirectory() ? [p, ...allPaths(p)] : [p];
  });
}

describe("names from an imported file go through the runner's rule (issue 15, item 2)", () => {
  // Outside the test's directory: where '../../../../tmp/...' from <dir>/hostile-out lands.
  const climbDir = `${basename(dir)}-escaped`;
  after(() => rmSync(join(tmpdir(), climbDir), { recursive: true, force: true }));
  const fixture = () => vectorBenchFixture(DS);
  const cases: { what: string; file: () => unknown; field: string; shown: string }[] = [
    {
      what: 'a dataset name that climbs out of --out',
      file: () => ({ ...fixture(), dataset: `../../../../tmp/${climbDir}/PWNED` }),
      field: 'dataset',
      shown: JSON.stringify(`../../../../tmp/${climbDir}/PWNED`),
    },
    {
      what: 'a dataset name (object form) climbing into the test directory',
      file: () => ({ ...fixture(), dataset: { name: '../escaped-ds', n: 3000 } }),
      field: 'dataset.name',
      shown: '"../escaped-ds"',
    },
    {
      what: 'an absolute dataset name',
      file: () => ({ ...fixture(), dataset: join(tmpdir(), climbDir, 'abs') }),
      field: 'dataset',
      shown: JSON.stringify(join(tmpdir(), climbDir, 'abs')),
    },
    {
      what: 'a participant name that climbs out',
      file: () => ({ ...fixture(), participant: '../../escaped-p' }),
      field: 'participant',
      shown: '"../../escaped-p"',
    },
    {
      what: 'a name (no participant) that is absolute',
      file: () => ({ ...fixture(), participant: undefined, name: `/tmp/${climbDir}/n` }),
      field: 'name',
      shown: JSON.stringify(`/tmp/${climbDir}/n`),
    },
    {
      what: 'a participant name with a NUL byte',
      file: () => ({ ...fixture(), participant: 'qdrant\u0000.json' }),
      field: 'participant',
      shown: '"qdrant\\u0000.json"',
    },
    {
      what: 'an overlong dataset name',
      file: () => ({ ...fixture(), dataset: 'd'.repeat(300) }),
      field: 'dataset',
      shown: `"${'d'.repeat(60)}"... (300 characters)`,
    },
    {
      what: "a group's filter that climbs out",
      file: () => ({ ...fixture(), groups: [{ ...fixture().groups[0], filter: '../../escaped-g' }] }),
      field: 'groups.0.filter',
      shown: '"../../escaped-g"',
    },
    {
      what: "a group key's filter that climbs out",
      file: () => ({ ...fixture(), groups: [{ ...fixture().groups[0], key: '../../escaped-k/10', filter: undefined }] }),
      field: 'groups.0.key',
      shown: '"../../escaped-k/10"',
    },
  ];
  let n = 0;
  for (const c of cases) {
    test(`${c.what}: refused in one line naming the field and the value, nothing written`, () => {
      const hostileOut = join(dir, 'hostile-out');
      const file = writeJson(join(files, `hostile-${n++}.json`), c.file());
      const before = allPaths(dir).sort();
      const r = vecbench('import', file, '--out', hostileOut);
      assert.equal(r.code, 2, r.stderr);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.ok(r.stderr.startsWith(`vecbench: ${file}: ${c.field} ${c.shown} cannot be a name under --out: use letters, digits`), r.stderr);
      assert.ok(!r.stderr.includes('\u0000'), 'the NUL is escaped, not printed');
      assert.deepEqual(allPaths(dir).sort(), before, 'nothing was written in the test directory');
      assert.equal(existsSync(join(tmpdir(), climbDir)), false, 'nothing was written outside it');
    });
  }
});

describe('VectorBench groups it did not ask and points without recall (issue 15, items 10 and 12)', () => {
  test('an n/a group is not_asked with its reason, not unsupported', async () => {
    const reason = 'median 999 matching rows < 1000';
    const f = vectorBenchFixture(DS);
    const path = writeJson(join(files, 'na.json'), {
      ...f,
      participant: 'qdrant-na',
      groups: [...f.groups, { key: 'cat1000/10', filter: 'cat1000', k: 10, exact: false, view: 'throughput', clients: 8, status: 'n/a', reason, points: [] }],
    });
    const stored = readResult((await importResults(path, { outDir: join(dir, 'na-out'), dataDir: data })).path);
    const g = stored.groups.find((x) => x.key === 'cat1000/10')!;
    assert.equal(g.status, 'not_asked');
    assert.equal(g.reason, reason);
    const cells = deriveCells([stored]).filter((c) => c.group === 'cat1000/10');
    assert.equal(cells.length, TARGETS.length);
    for (const c of cells) {
      assert.equal(c.status, 'not_asked');
      assert.equal(c.reason, reason);
    }
    // An engine's own "unsupported" stays so.
    assert.equal(stored.groups.find((x) => x.key === 'lang/10')!.status, 'unsupported');
  });

  test('a point whose recall is null is skipped with a note, printed and recorded; the rest is imported', () => {
    const f = vectorBenchFixture(DS);
    const none10 = f.groups[0];
    const nulled = { ...none10, points: none10.points.map((p, i) => (i === 1 ? { ...p, recall: null } : p)) };
    const path = writeJson(join(files, 'null-recall.json'), { ...f, participant: 'qdrant-null', groups: [nulled, ...f.groups.slice(1)] });
    const nullOut = join(dir, 'null-out');
    const r = vecbench('import', path, '--out', nullOut, '--dataset', DS);
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      /null-recall\.json: note: none\/10 \(throughput view\): recall is null in the imported file; the point is skipped, as VectorBench skips it\n/,
    );
    const stored = readResult(join(nullOut, DS, 'qdrant-null@vectorbench.json'));
    const g = stored.groups.find((x) => x.key === 'none/10')!;
    assert.equal(g.status, 'measured');
    const tp = g.points.filter((p) => p.view === 'throughput' && !p.flags.includes('exact-search'));
    assert.deepEqual(
      tp.map((p) => p.ladder_index),
      [0, 2, 3],
      'the null point is left out',
    );
    assert.equal(g.points.filter((p) => p.view === 'latency').length, 4, 'the latency view keeps all its points');
    assert.deepEqual(
      g.skipped.map((s) => [s.ladder_index, s.knobs]),
      [[1, { hnsw_ef: 32 }]],
    );
    assert.equal(stored.groups.length, 3, 'the other groups are imported');
  });
});
