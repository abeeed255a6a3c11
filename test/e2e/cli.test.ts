// End to end through the real command line: a small run with the reference and a real
// engine, the derived report, and the bad inputs of the core issue.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../bin/vecbench.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'vecbench-cli-'));
const data = join(dir, 'data');
const out = join(dir, 'results');
after(() => rmSync(dir, { recursive: true, force: true }));
/** The groups the runs measure: the fewest that still show every case (four measured, one not
 * asked, one cut short and resumed between finished ones). */
const GROUPS = ['--groups', 'none/10,none/100,none/1000,cat10/10,num10/10'];

function vecbench(...args: string[]) {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    encoding: 'utf8',
    env: { ...process.env, VECBENCH_QUIET: '1', VECBENCH_DATA: data },
    timeout: 600_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('vecbench run end to end', () => {
  test('runs exact and hnswlib, stores points and derives the table', () => {
    const r = vecbench('run', '--dataset', 'synthetic-3000', '--participants', 'exact,hnswlib', ...GROUPS, '--out', out, '--clients', '4');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /synthetic-3000: throughput \(QPS\) at target recall/);
    assert.match(r.stdout, /none\/10\s+0\.90/);
    // The run prepared its set and computed the ground truth of its own groups' filters only.
    const gt = JSON.parse(readFileSync(join(data, 'synthetic-3000', 'groundtruth', 'index.json'), 'utf8'));
    assert.deepEqual(Object.keys(gt.filters).sort(), ['cat10', 'none', 'num10']);

    const exact = JSON.parse(readFileSync(join(out, 'synthetic-3000', 'exact.json'), 'utf8'));
    assert.equal(exact.format, 'vecbench-result/1');
    assert.equal(exact.run.complete, true);
    const measured = exact.groups.filter((g: { status: string }) => g.status === 'measured');
    assert.ok(measured.length >= 4, `exact measured ${measured.length} groups`);
    for (const g of measured) {
      assert.equal(g.points.length, 2, `${g.key}: one ladder point, two views`);
      for (const p of g.points) {
        assert.equal(p.recall, 1, `exact recall in ${g.key}`);
        assert.equal(p.recall_strict, 1, `exact strict recall in ${g.key}`);
        assert.equal(p.filter_violations + p.unknown_ids + p.duplicate_ids + p.short_results, 0);
      }
      assert.ok(g.first_query_ms > 0);
    }
    // Groups whose filter keeps fewer than 10 x k rows are not asked.
    const k1000 = exact.groups.find((g: { key: string }) => g.key === 'none/1000');
    assert.equal(k1000.status, 'not_asked');

    const hnsw = JSON.parse(readFileSync(join(out, 'synthetic-3000', 'hnswlib.json'), 'utf8'));
    assert.ok(hnsw.load.ingest_s > 0);
    assert.match(hnsw.engine_version, /^\d+\.\d+\.\d+/);
    const none10 = hnsw.groups.find((g: { key: string }) => g.key === 'none/10');
    const slices = none10.points.map((p: { query_slice: number[] }) => p.query_slice.join('-'));
    assert.equal(new Set(slices).size, 1, 'every point of a warm group answers the same query set');

    const rep = vecbench('report', '--out', out, '--json');
    assert.equal(rep.code, 0, rep.stderr);
    const { cells } = JSON.parse(rep.stdout);
    const cell = cells.find(
      (c: { participant: string; group: string; target: number }) => c.participant === 'exact' && c.group === 'none/10' && c.target === 0.99,
    );
    assert.ok(['above', 'point'].includes(cell.status), `exact none/10 0.99: ${JSON.stringify(cell)}`);
    assert.equal(cell.max_recall, 1);
    for (const c of cells) {
      for (const key of ['dataset', 'participant', 'group', 'filter', 'k', 'target', 'status', 'value', 'lead', 'max_recall'])
        assert.ok(key in c, `cell lacks ${key}`);
    }
    const best = cells.filter((c: { group: string; target: number; lead: number | null }) => c.group === 'none/10' && c.target === 0.9 && c.lead !== null);
    assert.ok(
      best.some((c: { lead: number }) => c.lead === 1),
      'the best in a row has lead 1',
    );
  });
});

describe('vecbench participants', () => {
  test('lists every participant with the version its engine reports and where it runs', () => {
    const r = vecbench('participants', '--json');
    assert.equal(r.code, 0, r.stderr);
    const rows = JSON.parse(r.stdout) as { participant: string; engine: string; version: string; runs: string; default_run: boolean; filters: string }[];
    const names = rows.map((x) => x.participant);
    for (const name of [
      'exact',
      'hnswlib',
      'usearch',
      'lancedb',
      'pgvector-pglite',
      'faiss',
      'orama',
      'sqlite-vec',
      'libsql',
      'zvec',
      'pgvector',
      'redis',
      'chroma',
    ])
      assert.ok(names.includes(name), `${name} is listed`);
    for (const x of rows) {
      assert.ok(x.engine.length > 0 && x.filters.length > 0, `${x.participant}: engine and filter strategy`);
      assert.ok(x.runs === 'server' || x.runs === 'in process');
      assert.ok(!x.version.includes('\n'), `${x.participant}: the version is one line`);
    }
    // In-process engines installed by npm ci report a real version number, read from the engine.
    for (const name of ['hnswlib', 'usearch', 'lancedb', 'pgvector-pglite', 'orama', 'sqlite-vec', 'libsql', 'zvec'])
      assert.match(rows.find((x) => x.participant === name)!.version, /\d+\.\d+/, name);
    assert.deepEqual(
      rows.filter((x) => x.default_run).map((x) => x.participant),
      ['exact', 'hnswlib', 'lancedb', 'pgvector-pglite', 'usearch'],
    );
    const text = vecbench('participants');
    assert.equal(text.code, 0);
    assert.match(text.stdout, /^hnswlib +hnswlib-node +in process +default run +\d+\.\d+\.\d+$/m);
  });
});

describe('resume', () => {
  test('a complete result is kept; an interrupted one resumes at its first unfinished point', () => {
    const path = join(out, 'synthetic-3000', 'hnswlib.json');
    const full = JSON.parse(readFileSync(path, 'utf8'));
    // Rerunning the same command measures nothing again.
    let r = vecbench('run', '--dataset', 'synthetic-3000', '--participants', 'hnswlib', ...GROUPS, '--out', out, '--clients', '4');
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(readFileSync(path, 'utf8')).groups, full.groups);

    // Cut the file back as if the run had been killed in the middle of a group (a warm group's
    // points are stored together when it ends, so an unfinished one is measured whole again).
    const cut = JSON.parse(JSON.stringify(full));
    const g = cut.groups.find((x: { key: string }) => x.key === 'cat10/10');
    const removed = g.points.splice(3);
    g.complete = false;
    const later = cut.groups.findIndex((x: { key: string }) => x.key === 'cat10/10');
    cut.groups = cut.groups.slice(0, later + 1);
    cut.run.complete = false;
    writeFileSync(path, JSON.stringify(cut));
    r = vecbench('run', '--dataset', 'synthetic-3000', '--participants', 'hnswlib', ...GROUPS, '--out', out, '--clients', '4');
    assert.equal(r.code, 0, r.stderr);
    const resumed = JSON.parse(readFileSync(path, 'utf8'));
    assert.equal(resumed.run.complete, true);
    assert.equal(resumed.run.resumed, 1);
    assert.equal(resumed.load.reloads.length, 1, 'the reload of the engine is recorded');
    const key = (p: { ladder_index: number; view: string; query_slice: number[]; queries: number }) =>
      `${p.ladder_index}/${p.view}/${p.query_slice}/${p.queries}`;
    const rg = resumed.groups.find((x: { key: string }) => x.key === 'cat10/10');
    const fullCat10 = full.groups.find((x: { key: string }) => x.key === 'cat10/10');
    assert.deepEqual(rg.points.map(key), fullCat10.points.map(key), 'same points, same queries, none twice');
    assert.ok(removed.length > 0);
    // Finished groups are not measured again.
    for (const done of cut.groups.filter((x: { key: string; complete: boolean }) => x.complete)) {
      const now = resumed.groups.find((x: { key: string }) => x.key === done.key);
      assert.deepEqual(
        now.points.map((p: { qps: number }) => p.qps),
        done.points.map((p: { qps: number }) => p.qps),
        `${done.key} kept`,
      );
    }
    assert.deepEqual(
      resumed.groups.map((x: { key: string }) => x.key),
      full.groups.map((x: { key: string }) => x.key),
    );
  });
});

describe('bad input: one clear line, non-zero exit, finished work kept', () => {
  const oneLine = (s: string) => s.trim().split('\n').length === 1;

  test('unknown dataset', () => {
    const r = vecbench('run', '--dataset', 'nope', '--out', out);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^vecbench: unknown dataset "nope"; known datasets: synthetic-<N>/);
    assert.ok(oneLine(r.stderr), r.stderr);
  });

  test('unknown participant', () => {
    const r = vecbench('run', '--dataset', 'synthetic-3000', '--participants', 'exact,nosuch', '--out', out);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^vecbench: unknown participant "nosuch"; known participants: .*exact/);
    assert.ok(oneLine(r.stderr), r.stderr);
  });

  test('settings that do not validate name the field', () => {
    const bad = join(dir, 'bad-settings.json');
    writeFileSync(bad, JSON.stringify({ index: { M: -1 }, ladders: [{ knobs: { ef: [10, 20] } }] }));
    const r = vecbench('run', '--dataset', 'synthetic-3000', '--participants', 'hnswlib', '--settings', `hnswlib=${bad}`, '--out', out);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^vecbench: participant hnswlib: .*bad-settings\.json does not validate: index\.M: /);
    assert.ok(oneLine(r.stderr), r.stderr);
  });

  test('a ladder that is not sorted, and one that is empty', () => {
    const unsorted = join(dir, 'unsorted.json');
    writeFileSync(unsorted, JSON.stringify({ index: {}, ladders: [{ knobs: { ef: [10, 40, 20] } }] }));
    let r = vecbench('run', '--dataset', 'synthetic-3000', '--participants', 'hnswlib', '--settings', `hnswlib=${unsorted}`, '--out', out);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /ladders\.0\.knobs\.ef is not sorted ascending \(40 then 20\)/);
    const empty = join(dir, 'empty.json');
    writeFileSync(empty, JSON.stringify({ index: {}, ladders: [{ knobs: { ef: [] } }] }));
    r = vecbench('run', '--dataset', 'synthetic-3000', '--participants', 'hnswlib', '--settings', `hnswlib=${empty}`, '--out', out);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /ladders\.0\.knobs\.ef: a ladder knob needs at least one value/);
  });

  test('unknown group', () => {
    const r = vecbench('run', '--dataset', 'synthetic-3000', '--groups', 'none/10,bogus/10', '--out', out);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /unknown filter "bogus"/);
  });

  test('a results directory with a file of another version', () => {
    const other = join(dir, 'other');
    const path = join(other, 'synthetic-3000', 'x.json');
    spawnSync('mkdir', ['-p', join(other, 'synthetic-3000')]);
    writeFileSync(path, JSON.stringify({ format: 'vecbench-result/0' }));
    const r = vecbench('report', '--out', other);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /has format "vecbench-result\/0", this vecbench reads vecbench-result\/1/);
  });

  test('finished results survive the failures above', () => {
    assert.ok(existsSync(join(out, 'synthetic-3000', 'exact.json')));
    const rep = vecbench('report', '--out', out);
    assert.equal(rep.code, 0);
  });
});
