// Issue 15 items 8 and 9: what `vecbench run` refuses up front (a dataset of a few queries, a
// bad stored result of another participant), clear settings messages, engine output kept out
// of the run's stdout, and result writes that cost the same per point however long the ladder.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Participant } from '../../src/contracts.ts';
import type { Dataset } from '../../src/datasets/layout.ts';
import { prepareDataset } from '../../src/prepare/registry.ts';
import { ResultWriter, foldJournal } from '../../src/results/journal.ts';
import { RESULT_FORMAT, type ResultFile } from '../../src/results/schema.ts';
import { readResult } from '../../src/results/store.ts';
import type { GroupEngine } from '../../src/runner/group-run.ts';
import { measureColdGroup } from '../../src/runner/measure-group.ts';
import { loadParticipant, settingsFileSchema, type LoadedParticipant } from '../../src/runner/participants.ts';
import { prepareGroups, type AskedGroup } from '../../src/runner/points.ts';
import type { HostRequest } from '../../src/runner/protocol.ts';
import type { PointReply } from '../../src/runner/point-reply.ts';
import { emptyGroup, onePassRun } from '../helpers/fake-result.ts';

const BIN = fileURLToPath(new URL('../../bin/vecbench.js', import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'vecbench-run-inputs-'));
after(() => rmSync(root, { recursive: true, force: true }));
const data = join(root, 'data');
const D = 8;

function vecbench(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 600_000, maxBuffer: 64 << 20 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function writeFvecs(path: string, rows: number, seed: number): void {
  const buf = Buffer.alloc(rows * (4 + 4 * D));
  let x = seed;
  for (let i = 0; i < rows; i++) {
    buf.writeInt32LE(D, i * (4 + 4 * D));
    for (let j = 0; j < D; j++) {
      x = (x * 1103515245 + 12345) % 2147483648;
      buf.writeFloatLE(x / 2147483648 - 0.5, i * (4 + 4 * D) + 4 + 4 * j);
    }
  }
  writeFileSync(path, buf);
}

/** Prepares a custom l2 set of 300 rows and `nq` queries. */
function prepareSet(name: string, nq: number): void {
  writeFvecs(join(root, `${name}-base.fvecs`), 300, 1);
  writeFvecs(join(root, `${name}-queries.fvecs`), nq, 2);
  const r = vecbench([
    'prepare',
    'custom',
    '--name',
    name,
    '--base',
    join(root, `${name}-base.fvecs`),
    '--queries',
    join(root, `${name}-queries.fvecs`),
    '--metric',
    'l2',
    '--data',
    data,
  ]);
  assert.equal(r.code, 0, r.stderr);
}

before(() => {
  prepareSet('three', 3);
  prepareSet('small', 40);
});

const runArgs = (dataset: string, out: string, more: string[] = []) => [
  'run',
  '--dataset',
  dataset,
  '--participants',
  'exact',
  '--groups',
  'none/10',
  '--data',
  data,
  '--out',
  out,
  ...more,
];

/** Exit 2 and one line on stderr matching `message`. */
function expectRefused(r: ReturnType<typeof vecbench>, message: RegExp): void {
  assert.equal(r.code, 2, r.stderr);
  const lines = r.stderr.trim().split('\n');
  assert.equal(lines.length, 1, r.stderr);
  assert.match(lines[0], message);
}

test('a 3-query dataset and --queries below the minimum are refused before any work', () => {
  const out = join(root, 'out-three');
  expectRefused(
    vecbench(runArgs('three', out), { VECBENCH_QUIET: '1' }),
    /^vecbench: dataset three has 3 queries, vecbench run needs at least 10 .*; prepare it with more queries$/,
  );
  assert.ok(!existsSync(join(out, 'three', 'exact.json')), 'nothing measured');
  expectRefused(
    vecbench(runArgs('small', out, ['--queries', '3']), { VECBENCH_QUIET: '1' }),
    /^vecbench: --queries 3 is below the 10 queries a point needs at least; pass --queries 40 \(or all\)$/,
  );
  assert.ok(!existsSync(join(out, 'small', 'exact.json')), 'nothing measured');
});

test('a bad stored result of another participant is refused before anything is measured', () => {
  const out = join(root, 'out-bad-stored');
  mkdirSync(join(out, 'small'), { recursive: true });
  const bad = join(out, 'small', 'hnswlib.json');
  writeFileSync(bad, JSON.stringify({ format: RESULT_FORMAT, participant: 'hnswlib', bogus: 1 }));
  const r = vecbench(runArgs('small', out), { VECBENCH_QUIET: '1' });
  expectRefused(r, new RegExp(`^vecbench: result file ${bad.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} does not validate: `));
  assert.ok(!existsSync(join(out, 'small', 'exact.json')), 'exact was not measured first');
  assert.ok(!existsSync(join(out, '.engines')), 'no engine was started');
});

test("engine output goes to the participant log file, named once, never to the run's stdout; points below the minimum query count are flagged", () => {
  const out = join(root, 'out-chatty');
  // A chatty engine: every engine process (a child with an IPC channel) prints 1 MB on start.
  const chatty = join(root, 'chatty.mjs');
  writeFileSync(chatty, 'if (process.send) process.stdout.write("chatty engine line\\n".repeat(55000));\n');
  // 20 of the 40 queries: fewer than a point needs (all 40), so every point says so.
  const r = vecbench(runArgs('small', out, ['--queries', '20']), { NODE_OPTIONS: `--import=${pathToFileURL(chatty).href}` });
  assert.equal(r.code, 0, r.stderr);
  assert.doesNotMatch(r.stdout, /chatty engine line/);
  assert.doesNotMatch(r.stderr, /chatty engine line/);
  const logFile = join(out, 'logs', 'small', 'exact.log');
  const named = r.stderr.split('\n').filter((l) => l.includes(logFile));
  assert.equal(named.length, 1, `the log file is named once:\n${r.stderr}`);
  assert.match(readFileSync(logFile, 'utf8'), /chatty engine line/);
  assert.match(r.stdout, /none\/10/, 'the table is on stdout');
  const points = readResult(join(out, 'small', 'exact.json')).groups.flatMap((g) => g.points);
  assert.ok(points.length > 0 && points.every((p) => p.queries === 20 && p.flags.includes('few-queries')), 'points of 20 queries are flagged few-queries');
});

test('settings messages: an unknown key is named by its path, a repeated ladder value is called a duplicate', async () => {
  const file = (name: string, content: unknown) => {
    const path = join(root, `${name}.json`);
    writeFileSync(path, JSON.stringify(content));
    return path;
  };
  await assert.rejects(loadParticipant('hnswlib', file('top-key', { index: {}, ladders: [{ knobs: { ef: [10] } }], bogus: 1 })), (e: Error) => {
    assert.match(e.message, /top-key\.json does not validate: bogus: unknown key \(remove it, or check the spelling\)$/);
    assert.doesNotMatch(e.message, /: :/);
    return true;
  });
  await assert.rejects(
    loadParticipant('hnswlib', file('index-key', { index: { efConstruction: 100, efConstrution: 5 }, ladders: [{ knobs: { ef: [10] } }] })),
    /index-key\.json does not validate: index\.efConstrution: unknown key/,
  );
  await assert.rejects(
    loadParticipant('hnswlib', file('dup', { index: {}, ladders: [{ knobs: { ef: [10, 10, 20] } }] })),
    /ladders\.0\.knobs\.ef lists 10 twice; list each value once, in ascending order$/,
  );
});

// ---- the result journal ----

let ds: Dataset;
let g: AskedGroup;
before(async () => {
  ds = await prepareDataset(join(root, 'synthetic'), 'synthetic-2000');
  [g] = prepareGroups(ds, [{ filter: 'none', k: 10 }]);
});

/** An engine answering every query exactly (the ground truth), instantly. */
const exactEngine: GroupEngine = {
  async beforeGroup() {},
  loadPids: () => ({ engine: undefined, engineTree: false, host: undefined }),
  async request(req: HostRequest) {
    if (req.type === 'explain') return { type: 'explained', plan: null, planError: null } as never;
    if (req.type !== 'point') throw new Error(`unexpected ${req.type}`);
    const n = req.queries.length;
    const offsets = new Int32Array(n + 1);
    const ids: number[] = [];
    req.queries.forEach((q, i) => {
      for (let j = 0; j < req.k; j++) ids.push(g.gt.ids[q * g.gt.depth + j]);
      offsets[i + 1] = ids.length;
    });
    const reply: PointReply = {
      ids: Int32Array.from(ids),
      offsets,
      latenciesMs: new Float64Array(n).fill(0.01),
      wallS: n * 1e-5,
      errors: new Array(n).fill(null),
    };
    return { type: 'point', reply } as never;
  },
};

function participant(efs: number[]): LoadedParticipant {
  const settings = settingsFileSchema.parse({ index: {}, ladders: [{ knobs: { ef: efs } }] });
  const adapter = { engine: 'fake', concurrentSearch: false, filters: null, filterStrategy: 'none' } as unknown as Participant<unknown>;
  return { name: 'fake', dir: root, adapter, settings, index: {}, settingsPath: join(root, 'settings.json') };
}

function emptyResult(): ResultFile {
  return {
    format: RESULT_FORMAT,
    participant: 'fake',
    engine: 'fake',
    engine_version: '1',
    origin: 'measured',
    dataset: { name: ds.name, n: ds.n, d: ds.d, nq: ds.nq, metric: ds.metric, hash: ds.hash },
    settings: { index: {}, ladders: [] },
    filter_strategy: 'none',
    hardware: { cpu: 'x', cores: 2, memory_bytes: 1, os: 'x', node: 'x' },
    run: { vecbench_version: '0', started: 'x', updated: 'x', query_seed: 1, clients: 1, complete: false, resumed: 0, protocol: 'cold' },
    load: null,
    groups: [],
    extra: {},
  } as ResultFile;
}

/** Measures one cold group with a ladder of `points` knob values through a real writer; returns
 * the bytes written for each point, the writer and the result. */
async function coldRun(out: string, points: number, stopAfter = Infinity) {
  const result = emptyResult();
  const group = emptyGroup(g);
  result.groups.push(group);
  const writer = new ResultWriter(out, () => result);
  writer.save();
  const perPoint: number[] = [];
  let before = writer.bytesWritten;
  const measured = () => {
    perPoint.push(writer.bytesWritten - before);
    before = writer.bytesWritten;
    if (perPoint.length >= stopAfter) throw new Error('killed');
  };
  const run = onePassRun({
    engine: exactEngine,
    p: participant(Array.from({ length: points }, (_, i) => i + 1)),
    ds,
    g,
    group,
    onProgress: measured,
    save: () => {
      writer.save();
      // Only the points count: the save after the group's first query comes before them.
      if (perPoint.length === 0) before = writer.bytesWritten;
    },
    append: (entry) => writer.append(entry),
  });
  await measureColdGroup(run).catch((e: Error) => {
    if (e.message !== 'killed') throw e;
  });
  return { perPoint, writer, result };
}

test('a long cold ladder writes the same bytes per point as a short one (a journal, not a rewrite)', async () => {
  const short = await coldRun(join(root, 'journal-short'), 5);
  const long = await coldRun(join(root, 'journal-long'), 60);
  assert.equal(long.perPoint.length, 120);
  const max = (xs: number[]) => Math.max(...xs);
  const shortMax = max(short.perPoint);
  // A point's record is a few hundred bytes; rewriting the file would grow with every point.
  assert.ok(shortMax > 0 && shortMax < 4000, `bytes per point: ${shortMax}`);
  assert.ok(
    max(long.perPoint.slice(-10)) <= shortMax * 1.2,
    `the last points of 60 cost ${max(long.perPoint.slice(-10))} bytes each, the points of 5 ${shortMax}`,
  );
});

test('a killed cold group resumes from the result file and its journal: no point lost, none twice', async () => {
  const out = join(root, 'journal-killed');
  const killed = await coldRun(out, 20, 7);
  assert.equal(killed.perPoint.length, 7);
  const path = join(out, ds.name, 'fake.json');
  // The whole file holds no point yet (the group is not over); the journal holds 7.
  const stored = readResult(path);
  assert.equal(stored.groups[0].points.length, 0);
  // A kill in the middle of an append leaves a torn last line.
  writeFileSync(killed.writer.journal, `${readFileSync(killed.writer.journal, 'utf8')}{"group":"none/10","poi`);
  assert.equal(foldJournal(killed.writer.journal, stored), 7);
  assert.deepEqual(
    stored.groups[0].points.map((p) => `${p.ladder_index}/${p.view}`),
    killed.result.groups[0].points.map((p) => `${p.ladder_index}/${p.view}`),
  );
  // Folding again (a kill after the whole write, before the journal was removed) adds nothing.
  assert.equal(foldJournal(killed.writer.journal, stored), 0);
  new ResultWriter(out, () => stored).save();
  assert.ok(!existsSync(killed.writer.journal), 'the whole write folds the journal');
  assert.equal(readResult(path).groups[0].points.length, 7);
});

test('--tier: an unknown tier, and options that would make the tier another thing, are one line each before any work; the disk tier names its participants', async () => {
  const out = join(root, 'tier-out');
  const unknown = vecbench(['run', '--tier', 'attic', '--out', out, '--data', data]);
  assert.equal(unknown.code, 2, unknown.stderr);
  assert.match(unknown.stderr, /^vecbench: unknown tier "attic"; known tiers: disk\n$/);
  const clash = vecbench(['run', '--tier', 'disk', '--dataset', 'synthetic-20k', '--groups', 'none/10', '--out', out, '--data', data]);
  assert.equal(clash.code, 2, clash.stderr);
  assert.match(
    clash.stderr,
    /^vecbench: --tier disk fixes --dataset \(the tier's is synthetic-1m-768-q20k\) and --groups \(the tier's are none\/10,none\/100,none\/1000,cat10\/10,cat100\/10\); drop them, or drop --tier to measure something else\n$/,
  );
  assert.ok(!existsSync(join(data, 'synthetic-1m-768-q20k')), 'nothing was prepared');
  const help = vecbench(['run', '--help']);
  assert.match(
    help.stdout.replace(/\s+/g, ' '),
    /--tier <name> a named tier: .*disk: synthetic-1m-768-q20k \(3 GB of vectors, 20,000 queries\) under a 1 GiB memory budget per engine/,
  );
  // Its builds are long: a load may take 4 hours unless --load-timeout says otherwise.
  assert.match(help.stdout.replace(/\s+/g, ' '), /k = 10, 100, 1000; a load may take 4 h \(--load-timeout\)/);
  const { TIERS } = await import('../../src/commands/tiers.ts');
  assert.equal(TIERS.disk.loadTimeoutS, 4 * 3600);
  const { residentParticipants, tierParticipants } = await import('../../src/runner/registry.ts');
  assert.deepEqual(tierParticipants('disk'), ['faiss-disk', 'lancedb-disk', 'libsql', 'lucene', 'pgvector-disk', 'qdrant-edge-disk', 'usearch-disk']);
  // The engines that hold their whole index in memory run too, to be reported as not fitting.
  assert.deepEqual(residentParticipants(), ['exact', 'faiss', 'hnswlib', 'hnswlib-direct', 'orama', 'qdrant-edge', 'usearch', 'usearch-direct']);
  // The cold protocol gives each (point, view) its own 1,000 queries after a group's first and,
  // where a calibration spec places the points, its probe slice: on the tier's 20,000 a group
  // holds 9 points (3 targets and a neighbour on either side), or later points would reread
  // queries an earlier one warmed the cache with (flagged queries-reused).
  const { loadParticipant, ladderFor } = await import('../../src/runner/participants.ts');
  const { MIN_SLICE } = await import('../../src/runner/timing-defaults.ts');
  const { SLICE_CAP } = await import('../../src/runner/query-order.ts');
  const { VIEWS } = await import('../../src/results/schema.ts');
  const { parseSyntheticName } = await import('../../src/prepare/synthetic.ts');
  const TIER_QUERIES = parseSyntheticName(TIERS.disk.dataset)!.nq;
  assert.equal(TIER_QUERIES, 20_000);
  for (const name of tierParticipants('disk')) {
    const p = await loadParticipant(name, undefined, TIERS.disk.dataset);
    for (const group of TIERS.disk.groups) {
      const [filter, k] = group.split('/');
      const ladder = ladderFor(p.settings, filter, Number(k)).length;
      assert.ok(ladder > 0, `${name} has a ladder for ${group}`);
      const placed = p.settings.calibration !== undefined;
      const points = placed ? 9 : ladder;
      const probes = placed ? SLICE_CAP[Number(k)] : 0;
      assert.ok(1 + probes + points * VIEWS.length * MIN_SLICE <= TIER_QUERIES, `${name} ${group}: ${points} points need more than the tier's queries`);
    }
  }
});
