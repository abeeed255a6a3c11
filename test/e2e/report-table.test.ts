// The terminal table: a failed group (e.g. its plan check) reads "failed" with its reason under
// the table, an unsupported one its reason; neither is only a blank or "none" cell. Exact-search
// points are a row of their own; the latency view has cells of its own (for --json).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { readCell } from '../../src/metrics/frontier.ts';
import { deriveCells, fmtMaxRecall, REPORT_VIEWS, type DerivedCell } from '../../src/report/cells.ts';
import { convertVectorBench } from '../../src/report/import/vectorbench.ts';
import { deriveGeneral, renderGeneral } from '../../src/report/general.ts';
import { renderTable } from '../../src/report/table.ts';
import { readAllResults, writeResult } from '../../src/results/store.ts';
import { emptyResources } from '../../src/runner/resources.ts';
import { vectorBenchFixture } from '../helpers/import-fixtures.ts';
import { HOSTILE, exactSearchFixture, fixtureResults } from '../helpers/report-fixtures.ts';

test('failed and unsupported groups say so, with their reasons, once per participant and group', () => {
  const text = renderTable(deriveCells(fixtureResults()));
  const rows = text.split('\n').filter((l) => l.startsWith('lang/10 '));
  assert.equal(rows.length, 3);
  for (const r of rows) assert.match(r, /\bfailed\s+unsupported$/);
  const notes = text.split('\n').filter((l) => /^(alpha|beta) lang\/10 /.test(l));
  assert.deepEqual(notes, [`alpha lang/10 failed: plan check: ${HOSTILE}`, 'beta lang/10 unsupported: filter field lang is not supported']);
  // Not-asked groups keep their one folded line.
  assert.match(text, /^not asked \(filter keeps fewer than 10 x k rows\): cat1000\/10$/m);
});

test('exact-search points are their own row: the index reads not reached where only the scan gets there', () => {
  const r = exactSearchFixture();
  const cells = deriveCells([r]);
  const at = (search: 'ann' | 'exact', group: string, target: number) => cells.find((c) => c.search === search && c.group === group && c.target === target);
  // The index never reaches 0.99; mixed with the scan it would be interpolated.
  assert.equal(at('ann', 'none/10', 0.99)!.status, 'not_reached');
  assert.equal(at('ann', 'none/10', 0.99)!.max_recall, 0.985);
  assert.equal(at('ann', 'none/10', 0.95)!.status, 'point');
  // The scan's row: every target is read above it, at the scan's own QPS.
  for (const t of [0.9, 0.95, 0.99]) {
    const c = at('exact', 'none/10', t)!;
    assert.equal(c.status, 'above');
    assert.equal(c.value, 400);
    assert.equal(c.participant, 'epsilon');
  }
  // A group without exact points has no exact row.
  assert.equal(at('exact', 'cat10/10', 0.9), undefined);
  const text = renderTable(cells);
  const header = text.split('\n')[1];
  assert.match(header, /^group\s+recall\s+epsilon\s+epsilon \(exact\)$/);
  const row = text.split('\n').find((l) => /^none\/10\s+0\.99 /.test(l))!;
  assert.match(row, /^none\/10\s+0\.99\s+max 0\.98\d\s+400\^ x1\.00$/);
  // Without the declaration the same points are one curve, as a participant without an exact path.
  const plain = deriveCells([{ ...r, settings: { ...r.settings, exact_search: undefined } }]);
  assert.ok(plain.every((c) => c.search === 'ann'));
  assert.equal(plain.find((c) => c.group === 'none/10' && c.target === 0.99)!.status, 'interpolated');
});

test('imported VectorBench exact-search runs are their own row too', () => {
  const file = vectorBenchFixture('synthetic-fixture');
  // The index's points stop at 0.962; the exact run reaches 1.0.
  file.groups[0].points = file.groups[0].points.slice(0, 3);
  const r = convertVectorBench(file, 'qdrant.json', { vecbenchVersion: '0.1.0' });
  const cells = deriveCells([r]);
  const ann = cells.find((c) => c.search === 'ann' && c.group === 'none/10' && c.target === 0.99)!;
  assert.equal(ann.status, 'not_reached');
  assert.equal(ann.max_recall, 0.962);
  const exact = cells.find((c) => c.search === 'exact' && c.group === 'none/10' && c.target === 0.99)!;
  assert.equal(exact.status, 'above');
  assert.equal(exact.value, 90);
  assert.match(renderTable(cells), /qdrant-default@vectorbench \(exact\) \(imported\)/);
});

test('the latency view has cells of its own, read by the same rule with lower is better', () => {
  const [alpha, beta] = fixtureResults();
  const cells = deriveCells([alpha, beta], REPORT_VIEWS);
  const latency = cells.filter((c) => c.view === 'latency');
  const throughput = cells.filter((c) => c.view === 'throughput');
  assert.equal(latency.length, throughput.length, 'a latency cell per throughput cell');
  assert.deepEqual(deriveCells([alpha, beta]), throughput, 'throughput cells are unchanged');
  for (const c of latency) {
    const g = [alpha, beta].find((r) => r.participant === c.participant)!.groups.find((x) => x.key === c.group)!;
    const pts = g.points
      .filter((p) => p.view === 'latency')
      .map((p) => ({ recall: p.recall, value: p.latency_ms.p50, knobs: p.knobs, ladderIndex: p.ladder_index }));
    if (g.status !== 'measured') continue;
    const want = readCell(pts, c.target, 'lower');
    assert.equal(c.status, want.status, `${c.participant} ${c.group} ${c.target}`);
    assert.equal(c.value, want.value, `${c.participant} ${c.group} ${c.target}`);
  }
  // Lower is better: the row's best is the lowest latency, with lead 1, the others above 1.
  const row = latency.filter((c) => c.group === 'none/100' && c.target === 0.9 && c.value !== null);
  assert.equal(row.length, 2);
  const best = row.reduce((a, b) => (a.value! < b.value! ? a : b));
  assert.equal(best.lead, 1);
  for (const c of row) if (c !== best) assert.ok(c.lead! > 1, String(c.lead));
  // A group not asked or unsupported says so in the latency view too.
  assert.equal(latency.find((c) => c.participant === 'beta' && c.group === 'lang/10')!.status, 'unsupported');
});

test('report --json prints latency-view cells beside the throughput ones, each naming its view', () => {
  const dir = mkdtempSync(join(tmpdir(), 'vecbench-json-'));
  try {
    for (const r of [...fixtureResults(), exactSearchFixture()]) writeResult(dir, r);
    const bin = fileURLToPath(new URL('../../bin/vecbench.js', import.meta.url));
    const run = spawnSync(process.execPath, [bin, 'report', '--out', dir, '--json'], { encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    const cells = (JSON.parse(run.stdout) as { cells: DerivedCell[] }).cells;
    const want = deriveCells(readAllResults(dir), REPORT_VIEWS);
    assert.deepEqual(cells, JSON.parse(JSON.stringify(want)));
    const latency = cells.filter((c) => c.view === 'latency');
    assert.ok(
      latency.some((c) => c.value !== null),
      'latency cells with values',
    );
    assert.ok(
      latency.some((c) => c.search === 'exact'),
      'the exact row in the latency view too',
    );
    assert.ok(cells.every((c) => c.view === 'throughput' || c.view === 'latency'));
    // The throughput cells keep their shape.
    assert.deepEqual(
      cells.filter((c) => c.view === 'throughput'),
      JSON.parse(JSON.stringify(deriveCells(readAllResults(dir)))),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a real run records the settings.json exact_search declaration, and its points become the exact row', () => {
  const dir = mkdtempSync(join(tmpdir(), 'vecbench-exact-run-'));
  try {
    // hnswlib at ef 2000 on 2,000 rows visits every row: an exact scan, declared as such here.
    const settings = join(dir, 'hnswlib.json');
    writeFileSync(
      settings,
      JSON.stringify({ index: { M: 16, efConstruction: 100 }, ladders: [{ knobs: { ef: [10, 20, 2000] } }], exact_search: { ef: 2000 } }),
    );
    const bin = fileURLToPath(new URL('../../bin/vecbench.js', import.meta.url));
    const env = { ...process.env, VECBENCH_QUIET: '1' };
    const out = join(dir, 'out');
    const ran = spawnSync(
      process.execPath,
      [
        bin,
        'run',
        '--dataset',
        'synthetic-2k',
        '--participants',
        'hnswlib',
        '--groups',
        'none/10',
        '--settings',
        `hnswlib=${settings}`,
        '--out',
        out,
        '--data',
        join(dir, 'data'),
        '--builds',
        '1',
        // What is read here is which points make the exact row, not the machine's load: a pass
        // judged busy would flag the scan and leave its cells unread.
        '--busy-cores',
        '64',
      ],
      { encoding: 'utf8', env, timeout: 600_000 },
    );
    assert.equal(ran.status, 0, `${ran.stderr}\n${ran.stdout}`);
    assert.match(ran.stdout, /^group\s+recall\s+hnswlib\s+hnswlib \(exact\)$/m);
    const [stored] = readAllResults(out);
    assert.deepEqual(stored.settings.exact_search, { ef: 2000 });
    const cells = deriveCells([stored]);
    const exact = cells.filter((c) => c.search === 'exact');
    assert.equal(exact.length, 3);
    const scan = stored.groups[0].points.find((p) => p.view === 'throughput' && p.knobs.ef === 2000)!;
    for (const c of exact) assert.deepEqual(c.read_recall, [scan.recall], `${c.status} at ${c.target}; the scan's flags: ${scan.flags.join(', ') || 'none'}`);
    // (Which of the index's points its cells read depends on the flags of a fast engine's
    // points, e.g. harness-overhead; the fixtures above check that they never read the scan.)
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a best recall short of a target never prints as the target (0.987 is not "max 0.99")', () => {
  assert.equal(fmtMaxRecall(0.987), 'max 0.987');
  assert.equal(fmtMaxRecall(0.9899), 'max 0.989');
  assert.equal(fmtMaxRecall(0.93), 'max 0.930');
});

test('a group under recall 0.5 at every knob reads collapsed with its short share; the shares stand beside the cells', () => {
  const [r] = fixtureResults();
  const src = r.groups.find((g) => g.key === 'none/10')!;
  // The same curve at 0.4 x its recall (all below 0.5), 85 of 100 queries short, 90 % under 0.5.
  const collapsed = {
    ...structuredClone(src),
    key: 'sel1-scattered/10',
    filter: 'sel1-scattered',
    points: src.points.map((p) => ({ ...p, recall: p.recall * 0.4, short_results: 85, low_recall_share: 0.9 })),
  };
  // The curve as it is, with a few short answers and low-recall queries at every point.
  const shares = {
    ...structuredClone(src),
    key: 'sel1-clustered/10',
    filter: 'sel1-clustered',
    points: src.points.map((p) => ({ ...p, short_results: 4, low_recall_share: 0.12 })),
  };
  const cells = deriveCells([{ ...r, groups: [collapsed, shares] }]);
  const gone = cells.filter((c) => c.group === 'sel1-scattered/10');
  assert.equal(gone.length, 3);
  for (const c of gone) {
    assert.equal(c.status, 'collapsed');
    assert.equal(c.value, null);
    assert.equal(c.short_share, 0.85);
    assert.equal(c.low_recall_share, 0.9);
  }
  const kept = cells.filter((c) => c.group === 'sel1-clustered/10');
  assert.ok(kept.every((c) => c.short_share === 0.04 && c.low_recall_share === 0.12));
  const text = renderTable(cells);
  assert.match(text, /^sel1-scattered\/10\s+0\.90\s+collapsed, short 85% low 90%$/m);
  assert.match(text, /^sel1-clustered\/10\s+0\.90\s+\S+ .* short 4% low 12%$/m);
});

test('a share the registry carries into cells: empty answers shown where they are worth a look, absent in results from before it', () => {
  const [r] = fixtureResults();
  const src = r.groups.find((g) => g.key === 'none/10')!;
  assert.ok(
    src.points.every((p) => p.empty_results === undefined),
    'the fixture predates empty_results',
  );
  const before = deriveCells([{ ...r, groups: [src] }]);
  assert.ok(before.every((c) => c.empty_share === null));
  // 6 of 100 queries short, 5 of them with no id at all.
  const empty = { ...structuredClone(src), points: src.points.map((p) => ({ ...p, queries: 100, short_results: 6, empty_results: 5, low_recall_share: 0 })) };
  const cells = deriveCells([{ ...r, groups: [empty] }]).filter((c) => c.value !== null);
  assert.ok(cells.length > 0);
  for (const c of cells) {
    assert.equal(c.empty_share, 0.05);
    assert.equal(c.short_share, 0.06);
  }
  assert.match(renderTable(cells), /^none\/10\s+0\.\d\d\s+\S.* short 6% empty 5% low 0%$/m);
});

test('bytes read from storage per query stand beside the cells that measured them, and the header says what they are', () => {
  const r = exactSearchFixture();
  const src = r.groups.find((g) => g.key === 'none/10')!;
  // Every point read 3 MiB a query from storage (a budget or the cold protocol made it read).
  const read = { ...structuredClone(src), points: src.points.map((p) => ({ ...p, io: { read_bytes_per_query: 3 * 2 ** 20, major_faults_per_query: 1 } })) };
  const cells = deriveCells([{ ...r, groups: [read] }]).filter((c) => c.search === 'ann');
  assert.ok(cells.some((c) => c.value !== null));
  for (const c of cells) assert.equal(c.read_bytes_per_query, c.status === 'none' ? null : 3 * 2 ** 20, `${c.target} ${c.status}`);
  const text = renderTable(cells);
  assert.match(text, /MiB\/q: bytes the engine read from storage per query/);
  assert.match(text, /^none\/10\s+0\.90\s+\S.* 3\.0 MiB\/q$/m);
  // In RAM, nothing of it is shown.
  const warm = renderTable(deriveCells([{ ...r, groups: [src] }]));
  assert.doesNotMatch(warm, /MiB\/q/);
});

test('how each participant answered: the strategy of the points the cells were read on, per group, the targets where it differs', () => {
  const r = exactSearchFixture();
  const cat = r.groups.find((g) => g.key === 'cat10/10')!;
  const none = r.groups.find((g) => g.key === 'none/10')!;
  for (const p of none.points) p.strategy = p.knobs.ef_search === 10 ? { label: 'graph walk', observed: true } : { label: 'exact scan', observed: true };
  for (const p of cat.points) p.strategy = { label: 'pre-filter + graph walk', observed: false };
  const cells = deriveCells([r]);
  const at = (group: string, target: number) => cells.find((c) => c.search === 'ann' && c.group === group && c.target === target)!;
  assert.equal(at('none/10', 0.9).strategy, 'graph walk');
  assert.equal(at('none/10', 0.95).strategy, 'exact scan');
  assert.equal(at('cat10/10', 0.9).strategy, 'pre-filter + graph walk (declared)');
  // A cell read at no point (too wide, not reached) has no strategy.
  assert.equal(at('none/10', 0.99).strategy, null);
  const line = renderTable(cells)
    .split('\n')
    .find((l) => l.startsWith('epsilon: how it answered:'));
  assert.equal(line, 'epsilon: how it answered: none/10 graph walk (0.90), exact scan (0.95); cat10/10 pre-filter + graph walk (declared)');
});

test('the general table names a probe answered only with empty lists, not as recall 0.00', () => {
  const probe = (recall: number, short: number) => ({ queries: 20, answered: true, knobs: {}, recall, short_results: short, latency_ms_p50: 0.4, error: null });
  const [a, b] = fixtureResults();
  const empty = { ...a, resources: { ...emptyResources('host'), probe: probe(0, 20) } };
  const some = { ...b, resources: { ...emptyResources('host'), probe: probe(0.9, 3) } };
  const lines = renderGeneral(deriveGeneral([empty, some])).split('\n');
  const line = (name: string) => lines.find((l) => l.startsWith(`${name} `)) ?? '';
  assert.match(line(a.participant), /\bempty \(20 of 20 short\)/);
  assert.doesNotMatch(line(a.participant), /0\.00 @/);
  assert.match(line(b.participant), /0\.90 @ 0\.4 ms, 3 short/);
});

test('a participant the run stopped is named in the general table with why (an engine that does not fit its budget)', () => {
  const [a, b] = fixtureResults();
  const why = 'participant alpha does not fit in 1.00 GiB: the kernel killed it at its memory budget (limit 1.03 GiB, peak 1.03 GiB, 1 OOM kill)';
  const stopped = { ...a, extra: { ...a.extra, stopped: `${why}\nmore detail` } };
  const rows = deriveGeneral([stopped, b]);
  assert.equal(rows.find((r) => r.participant === a.participant)!.stopped, `${why}\nmore detail`);
  assert.equal(rows.find((r) => r.participant === b.participant)!.stopped, null);
  const lines = renderGeneral(rows).split('\n');
  assert.ok(lines.includes(`  ${a.participant}: stopped: ${why}`), lines.join('\n'));
  assert.ok(!lines.some((l) => l.includes(`${b.participant}: stopped`)));
});

test('bytes read per query stand beside the cells only where some cell of the dataset read any', async () => {
  const { cell } = await import('../helpers/derived-cell.ts');
  const inRam = [
    { ...cell('a', 1000, 900, 1100), lead: 1, lead_ci: [1, 1] as [number, number] },
    { ...cell('b', 500, 450, 550), lead: 0.5, lead_ci: [0.45, 0.55] as [number, number] },
  ].map((c) => ({ ...c, read_bytes_per_query: 0 }));
  const table = renderTable(inRam);
  assert.doesNotMatch(table, /MiB\/q/, 'an in-RAM run prints no column of zeros');
  const onDisk = [{ ...inRam[0], read_bytes_per_query: 3 * 1048576 }, inRam[1]];
  const disk = renderTable(onDisk);
  assert.match(disk, /3\.0 MiB\/q/);
  assert.match(disk, /0\.000 MiB\/q/, 'once any cell read, every measured cell says what it read, zero included');
  assert.match(disk, /MiB\/q: bytes the engine read from storage per query/);
});
