// The bad-input matrix of issue 7 (item 3), through the real command line: every bad input gets
// exit code 2, one line on stderr naming the problem and the fix, and leaves no file behind
// (every file under --data and --out is the same before and after, finished results included).
// docs/runs.md, "Bad input", lists each case with its message and the test here.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { freePort, startServer } from '../../src/runner/server.ts';
import { loadParticipant } from '../../src/runner/participants.ts';
import { UserError } from '../../src/util/errors.ts';

const BIN = fileURLToPath(new URL('../../bin/vecbench.js', import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'vecbench-bad-input-'));
const inputs = join(root, 'inputs');
/** The clean prepared dataset `tiny` (400 x 8, l2, 40 queries) with its none ground truth. */
const cleanData = join(root, 'data');
/** A results directory with a finished result (exact on tiny). */
const cleanOut = join(root, 'out');
after(() => rmSync(root, { recursive: true, force: true }));

const D = 8;
const ROWS = 400;
const QUERIES = 40;

function vecbench(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env: { ...process.env, VECBENCH_QUIET: '1', ...env }, timeout: 600_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Every file under the directories with its size and mtime: equal lists = nothing written. */
function snapshot(...dirs: string[]): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    if (!existsSync(d)) return;
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else {
        const s = statSync(p);
        out.push(`${p} ${s.size} ${s.mtimeMs}`);
      }
    }
  };
  for (const d of dirs) walk(d);
  return out.sort();
}

/** The inputs tried, for the count in the closing note and the table in docs/contracts.md. */
const tried: string[] = [];

/**
 * Runs `args`, which must fail as bad input: exit 2, exactly one line on stderr, `vecbench: `
 * and the message, nothing on stdout, and the files under `dirs` exactly as they were.
 */
function expectBadInput(what: string, args: string[], message: RegExp, dirs: string[], env: Record<string, string> = {}): string {
  tried.push(what);
  const before = snapshot(...dirs);
  const r = vecbench(args, env);
  assert.equal(r.code, 2, `${what}: exit code ${r.code}\n${r.stderr}`);
  const lines = r.stderr.trim().split('\n');
  assert.equal(lines.length, 1, `${what}: one line expected:\n${r.stderr}`);
  assert.match(lines[0], /^vecbench: /, what);
  assert.match(lines[0], message, what);
  assert.equal(r.stdout, '', `${what}: nothing on stdout`);
  assert.deepEqual(snapshot(...dirs), before, `${what}: no file written, changed or left behind`);
  return lines[0];
}

/** A .fvecs file: every row is its dimension (int32) and then its floats. */
function writeFvecs(path: string, v: Float32Array, d: number): void {
  const rows = v.length / d;
  const buf = Buffer.alloc(rows * (4 + 4 * d));
  for (let i = 0; i < rows; i++) {
    buf.writeInt32LE(d, i * (4 + 4 * d));
    for (let j = 0; j < d; j++) buf.writeFloatLE(v[i * d + j], i * (4 + 4 * d) + 4 + 4 * j);
  }
  writeFileSync(path, buf);
}

function randomVectors(rows: number, d: number, seed: number): Float32Array {
  let x = seed;
  const v = new Float32Array(rows * d);
  for (let i = 0; i < v.length; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    v[i] = x / 2147483648 - 0.5;
  }
  return v;
}

/** A copy of the clean prepared data to damage. */
function dataCopy(name: string): { data: string; set: string } {
  const data = join(root, `data-${name}`);
  cpSync(cleanData, data, { recursive: true });
  return { data, set: join(data, 'tiny') };
}

const readManifest = (set: string) => JSON.parse(readFileSync(join(set, 'manifest.json'), 'utf8'));
const writeManifest = (set: string, m: unknown) => writeFileSync(join(set, 'manifest.json'), JSON.stringify(m));
/** Makes the manifest agree with a file's new content (size and sha256), as a careless tool would. */
function manifestAgrees(set: string, file: string): void {
  const m = readManifest(set);
  const bytes = readFileSync(join(set, file));
  m.files[file] = { bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') };
  writeManifest(set, m);
}
function setFloat(path: string, index: number, value: number): void {
  const buf = readFileSync(path);
  buf.writeFloatLE(value, index * 4);
  writeFileSync(path, buf);
}

const runTiny = (data: string, out = join(root, 'out-unused'), more: string[] = []) => [
  'run',
  '--dataset',
  'tiny',
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

before(() => {
  mkdirSync(inputs, { recursive: true });
  writeFvecs(join(inputs, 'base.fvecs'), randomVectors(ROWS, D, 1), D);
  writeFvecs(join(inputs, 'queries.fvecs'), randomVectors(QUERIES, D, 2), D);
  let r = vecbench([
    'prepare',
    'custom',
    '--name',
    'tiny',
    '--base',
    join(inputs, 'base.fvecs'),
    '--queries',
    join(inputs, 'queries.fvecs'),
    '--metric',
    'l2',
    '--data',
    cleanData,
  ]);
  assert.equal(r.code, 0, r.stderr);
  // A finished result, which every failure below must leave as it is; it also caches the
  // ground truth of `none`, so failing runs have nothing left to compute.
  r = vecbench(runTiny(cleanData, cleanOut));
  assert.equal(r.code, 0, r.stderr);
  assert.ok(existsSync(join(cleanOut, 'tiny', 'exact.json')));
});

describe('dataset files: missing, truncated, corrupt, sha256, dimension, NaN / Inf, zero vectors', () => {
  test('a missing file of a prepared set', () => {
    const { data, set } = dataCopy('missing');
    rmSync(join(set, 'queries.f32'));
    expectBadInput(
      'missing dataset file',
      runTiny(data),
      /^vecbench: dataset tiny: .*\/queries\.f32 is missing; re-prepare it \(vecbench prepare tiny --force\)$/,
      [data, cleanOut],
    );
  });

  test('a truncated file (its sha256 no longer matches)', () => {
    const { data, set } = dataCopy('trunc');
    truncateSync(join(set, 'base.f32'), 1000);
    expectBadInput(
      'truncated dataset file',
      runTiny(data),
      /dataset tiny: base\.f32 does not match the sha256 in its manifest \(corrupt or changed\); re-prepare it/,
      [data, cleanOut],
    );
  });

  test('a truncated file whose manifest agrees with it', () => {
    const { data, set } = dataCopy('trunc2');
    truncateSync(join(set, 'base.f32'), 1000);
    manifestAgrees(set, 'base.f32');
    expectBadInput(
      'truncated file, manifest agreeing',
      runTiny(data),
      new RegExp(`dataset tiny: base\\.f32 has 1000 bytes, expected ${ROWS * D * 4} \\(truncated or corrupt\\); re-prepare it`),
      [data, cleanOut],
    );
  });

  test('a corrupt file (one flipped byte)', () => {
    const { data, set } = dataCopy('flip');
    const path = join(set, 'queries.f32');
    const buf = readFileSync(path);
    buf[17] ^= 0xff;
    writeFileSync(path, buf);
    expectBadInput('corrupt dataset file', runTiny(data), /dataset tiny: queries\.f32 does not match the sha256 in its manifest/, [data, cleanOut]);
  });

  test('a manifest that is not JSON, and one with a bad field', () => {
    const { data, set } = dataCopy('manifest');
    const good = readFileSync(join(set, 'manifest.json'), 'utf8');
    writeFileSync(join(set, 'manifest.json'), good.slice(0, 40));
    expectBadInput('corrupt manifest', runTiny(data), /dataset tiny: .*manifest\.json is not valid JSON \(corrupt\); re-prepare it/, [data, cleanOut]);
    writeFileSync(join(set, 'manifest.json'), good);
    writeManifest(set, { ...JSON.parse(good), metric: 'dot' });
    expectBadInput('manifest field invalid', runTiny(data), /dataset tiny: manifest field metric: .*; re-prepare it/, [data, cleanOut]);
  });

  test('a manifest whose sha256 does not match the file', () => {
    const { data, set } = dataCopy('sha');
    const m = readManifest(set);
    m.files['base.cat10.i32'].sha256 = '0'.repeat(64);
    writeManifest(set, m);
    expectBadInput('manifest sha256 mismatch', runTiny(data), /dataset tiny: base\.cat10\.i32 does not match the sha256 in its manifest/, [data, cleanOut]);
  });

  test('dimension mismatch: the manifest says 4, the files hold 8', () => {
    const { data, set } = dataCopy('dims');
    writeManifest(set, { ...readManifest(set), d: 4 });
    expectBadInput(
      'dimension mismatch manifest / files',
      runTiny(data),
      new RegExp(`base\\.f32 has ${ROWS * D * 4} bytes, expected ${ROWS * 4 * 4} \\(truncated or corrupt\\)`),
      [data, cleanOut],
    );
  });

  test('NaN in the base and Inf in the queries of a prepared set', () => {
    const nan = dataCopy('nan');
    setFloat(join(nan.set, 'base.f32'), 3 * D + 2, NaN);
    manifestAgrees(nan.set, 'base.f32');
    expectBadInput('NaN in prepared base', runTiny(nan.data), /dataset tiny: base row 3 has NaN at dimension 2; fix the input file and prepare again/, [
      nan.data,
      cleanOut,
    ]);
    const inf = dataCopy('inf');
    setFloat(join(inf.set, 'queries.f32'), 5 * D, -Infinity);
    manifestAgrees(inf.set, 'queries.f32');
    expectBadInput('Inf in prepared queries', runTiny(inf.data), /dataset tiny: queries row 5 has Inf at dimension 0/, [inf.data, cleanOut]);
  });

  test('a zero vector in a cosine set', () => {
    const { data, set } = dataCopy('zero');
    for (let j = 0; j < D; j++) setFloat(join(set, 'base.f32'), 7 * D + j, 0);
    manifestAgrees(set, 'base.f32');
    writeManifest(set, { ...readManifest(set), metric: 'cosine' });
    expectBadInput(
      'zero vector under cosine (prepared)',
      runTiny(data),
      /dataset tiny: base row 7 is a zero vector, which has no cosine; drop it from the input or use --metric l2/,
      [data, cleanOut],
    );
  });
});

describe('input files of prepare custom: missing, truncated, corrupt, dimensions, NaN / Inf, zero vectors', () => {
  const prep = (name: string, base: string, queries: string, more: string[] = []) => [
    'prepare',
    'custom',
    '--name',
    name,
    '--base',
    base,
    '--queries',
    queries,
    '--data',
    cleanData,
    ...more,
  ];
  const base = () => join(inputs, 'base.fvecs');
  const queries = () => join(inputs, 'queries.fvecs');
  const damaged = (name: string, edit: (v: Float32Array) => void, d = D, rows = ROWS) => {
    const v = randomVectors(rows, d, 3);
    edit(v);
    const path = join(inputs, name);
    writeFvecs(path, v, d);
    return path;
  };

  test('a missing input file', () => {
    expectBadInput('missing input file', prep('p1', join(inputs, 'nope.fvecs'), queries()), /nope\.fvecs: no such file; check the path$/, [cleanData]);
  });

  test('a truncated input file and one whose row header is corrupt', () => {
    const cut = join(inputs, 'cut.fvecs');
    writeFileSync(cut, readFileSync(base()).subarray(0, 1000));
    expectBadInput('truncated input file', prep('p2', cut, queries()), /cut\.fvecs: has 1000 bytes, not a whole number of 36-byte rows/, [cleanData]);
    const bad = join(inputs, 'header.fvecs');
    const buf = readFileSync(base());
    buf.writeInt32LE(9, 36);
    writeFileSync(bad, buf);
    expectBadInput(
      'corrupt input row header',
      prep('p3', bad, queries()),
      /header\.fvecs: row 1 says dimension 9, the file starts with 8; the file is truncated or corrupt/,
      [cleanData],
    );
  });

  test('queries of another dimension than the base', () => {
    const q4 = damaged('q4.fvecs', () => {}, 4, 10);
    expectBadInput('dimension mismatch base / queries', prep('p4', base(), q4), /queries are 4-d, the base .* is 8-d/, [cleanData]);
  });

  test('NaN and Inf in the input', () => {
    const nan = damaged('nan.fvecs', (v) => (v[123 * D + 5] = NaN));
    expectBadInput('NaN in input', prep('p5', nan, queries()), /nan\.fvecs: row 123 has NaN at dimension 5; fix the input file/, [cleanData]);
    const inf = damaged('inf.fvecs', (v) => (v[9 * D + 1] = Infinity), D, QUERIES);
    expectBadInput('Inf in input queries', prep('p6', base(), inf), /inf\.fvecs: row 9 has Inf at dimension 1; fix the input file/, [cleanData]);
  });

  test('a zero vector under cosine', () => {
    const zero = damaged('zero.fvecs', (v) => v.fill(0, 7 * D, 8 * D));
    expectBadInput(
      'zero vector under cosine (input)',
      prep('p7', zero, queries(), ['--metric', 'cosine']),
      /zero\.fvecs: row 7 is a zero vector, which has no cosine; drop it from the input or use --metric l2/,
      [cleanData],
    );
  });
});

describe('settings: a dimension they cannot take, fields that do not validate, ladders', () => {
  const settingsFile = (name: string, content: unknown) => {
    const path = join(root, `${name}.json`);
    writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
    return path;
  };
  const withSettings = (participant: string, file: string) => [
    'run',
    '--dataset',
    'tiny',
    '--participants',
    participant,
    '--groups',
    'none/10',
    '--data',
    cleanData,
    '--out',
    cleanOut,
    '--settings',
    `${participant}=${file}`,
  ];
  const ladder = { knobs: { nprobes: [1, 2] } };

  test('settings that fix a dimension the dataset does not have (PQ sub-vectors vs d = 8)', () => {
    const f = settingsFile('pq3', { index: { index_type: 'IVF_PQ', num_partitions: 2, num_sub_vectors: 3 }, ladders: [ladder] });
    expectBadInput(
      'dimension mismatch settings / dataset',
      withSettings('lancedb', f),
      /^vecbench: participant lancedb: settings index\.num_sub_vectors = 3 does not divide the 8 dimensions of dataset tiny \(IVF_PQ splits each vector into equal sub-vectors\); use a divisor of 8 \(2, 4, 8\) or leave num_sub_vectors out$/,
      [cleanData, cleanOut],
    );
  });

  test("an engine that cannot rank by the dataset's metric (Redis vector sets: cosine only; tiny is l2) stops the run before any work", () => {
    for (const name of ['redis', 'redis-q8']) {
      const args = ['run', '--dataset', 'tiny', '--participants', `exact,${name}`, '--groups', 'none/10', '--data', cleanData, '--out', cleanOut];
      expectBadInput(
        `metric the engine lacks (${name})`,
        args,
        new RegExp(
          `^vecbench: participant ${name}: Redis vector sets rank by cosine similarity only and tiny is an l2 dataset: leave this participant out of --participants for it$`,
        ),
        [cleanData, cleanOut],
      );
    }
  });

  test('fields that do not validate are named by their path', () => {
    let f = settingsFile('m', { index: { M: -1 }, ladders: [{ knobs: { ef: [10, 20] } }] });
    expectBadInput('settings field invalid (index)', withSettings('hnswlib', f), /participant hnswlib: .*m\.json does not validate: index\.M: /, [
      cleanData,
      cleanOut,
    ]);
    f = settingsFile('batch', { index: {}, ladders: [{ knobs: { ef: [10] } }], batch_size: 0 });
    expectBadInput('settings field invalid (top level)', withSettings('hnswlib', f), /batch\.json does not validate: batch_size: /, [cleanData, cleanOut]);
    f = settingsFile('deep', { index: {}, ladders: [{ k: [10], knobs: { ef: ['a', 2, { x: 1 }] } }] });
    expectBadInput('settings field invalid (nested ladder value)', withSettings('hnswlib', f), /deep\.json does not validate: ladders\.0\.knobs\.ef\.2: /, [
      cleanData,
      cleanOut,
    ]);
    f = settingsFile('unknownkey', { index: { efConstruction: 100, efConstrution: 5 }, ladders: [{ knobs: { ef: [10] } }] });
    expectBadInput(
      'settings unknown key',
      withSettings('hnswlib', f),
      /unknownkey\.json does not validate: index\.efConstrution: unknown key \(remove it, or check the spelling\)$/,
      [cleanData, cleanOut],
    );
    f = settingsFile('notjson', '{"index": {');
    expectBadInput('settings not JSON', withSettings('hnswlib', f), /participant hnswlib: cannot read .*notjson\.json \(.*\); fix the JSON$/, [
      cleanData,
      cleanOut,
    ]);
  });

  test('a ladder that is empty, not sorted, or missing', () => {
    let f = settingsFile('empty', { index: {}, ladders: [{ knobs: { ef: [] } }] });
    expectBadInput('empty ladder', withSettings('hnswlib', f), /ladders\.0\.knobs\.ef: a ladder knob needs at least one value/, [cleanData, cleanOut]);
    f = settingsFile('unsorted', { index: {}, ladders: [{ knobs: { ef: [10, 40, 20] } }] });
    expectBadInput('unsorted ladder', withSettings('hnswlib', f), /ladders\.0\.knobs\.ef is not sorted ascending \(40 then 20\); sort the ladder/, [
      cleanData,
      cleanOut,
    ]);
    f = settingsFile('none', { index: {}, ladders: [] });
    expectBadInput('no ladder rule', withSettings('hnswlib', f), /does not validate: ladders: at least one ladder rule is needed/, [cleanData, cleanOut]);
  });
});

describe('unknown dataset, participant, filter or group', () => {
  const run = (...more: string[]) => ['run', '--data', cleanData, '--out', cleanOut, ...more];

  test('unknown dataset and participant', () => {
    expectBadInput('unknown dataset', run('--dataset', 'nope'), /^vecbench: unknown dataset "nope"; known datasets: /, [cleanData, cleanOut]);
    expectBadInput(
      'unknown participant',
      run('--dataset', 'tiny', '--participants', 'exact,nosuch'),
      /^vecbench: unknown participant "nosuch"; known participants: .*exact/,
      [cleanData, cleanOut],
    );
  });

  test('unknown filter, in --groups and in a settings ladder', () => {
    expectBadInput(
      'unknown filter (--groups)',
      run('--dataset', 'tiny', '--participants', 'exact', '--groups', 'none/10,bogus/10'),
      /unknown filter "bogus"; known filters: none, cat10/,
      [cleanData, cleanOut],
    );
    const f = join(root, 'badfilter.json');
    writeFileSync(f, JSON.stringify({ index: {}, ladders: [{ filters: ['bogus'], knobs: { ef: [10] } }] }));
    expectBadInput(
      'unknown filter (settings ladder)',
      run('--dataset', 'tiny', '--participants', 'hnswlib', '--settings', `hnswlib=${f}`),
      /participant hnswlib: settings\.json ladders\.0\.filters: unknown filter "bogus"/,
      [cleanData, cleanOut],
    );
  });

  test('groups that are not FILTER/K with a known k', () => {
    expectBadInput('unknown group (k)', run('--dataset', 'tiny', '--participants', 'exact', '--groups', 'none/7'), /k must be one of 10, 100, 1000/, [
      cleanData,
      cleanOut,
    ]);
    expectBadInput('unknown group (form)', run('--dataset', 'tiny', '--participants', 'exact', '--groups', 'none'), /write groups as FILTER\/K/, [
      cleanData,
      cleanOut,
    ]);
  });

  test('a --host-slow that is neither 0 nor at least 1', () => {
    expectBadInput(
      'bad --host-slow',
      run('--dataset', 'tiny', '--participants', 'exact', '--host-slow', '0.5'),
      /--host-slow must be 0 \(off\) or a number >= 1/,
      [cleanData, cleanOut],
    );
  });
});

describe('a results directory from an incompatible version', () => {
  test('run and report refuse it, and leave it as it is', () => {
    const out = join(root, 'old-out');
    mkdirSync(join(out, 'tiny'), { recursive: true });
    writeFileSync(join(out, 'tiny', 'exact.json'), JSON.stringify({ format: 'vecbench-result/0', participant: 'exact' }));
    expectBadInput(
      'results of another version (run)',
      runTiny(cleanData, out),
      /result file .*exact\.json has format "vecbench-result\/0", this vecbench reads vecbench-result\/1; use a fresh --out directory or the vecbench version that wrote it/,
      [cleanData, out],
    );
    expectBadInput('results of another version (report)', ['report', '--out', out], /has format "vecbench-result\/0"/, [out]);
    writeFileSync(join(out, 'tiny', 'exact.json'), '{"format": "vecbench-result/1", ');
    expectBadInput('result file not JSON', runTiny(cleanData, out), /result file .*exact\.json is not valid JSON .*; delete it and run again/, [
      cleanData,
      out,
    ]);
  });
});

describe('a port already taken', () => {
  let listener: Server;
  let taken = 0;
  before(async () => {
    // A real process holds the port: this test's own listener on 127.0.0.1.
    listener = createServer(() => {});
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    taken = (listener.address() as { port: number }).port;
  });
  after(() => new Promise<void>((resolve) => listener.close(() => resolve())));

  test('a server participant asked to start on a port another process listens on', () => {
    for (const participant of ['pgvector', 'redis']) {
      expectBadInput(
        `port taken (${participant} --server-port)`,
        [
          'run',
          '--dataset',
          'tiny',
          '--participants',
          participant,
          '--groups',
          'none/10',
          '--data',
          cleanData,
          '--out',
          join(root, 'port-out'),
          '--server-port',
          `${participant}=${taken}`,
        ],
        new RegExp(
          `^vecbench: port ${taken} on 127\\.0\\.0\\.1 is already in use \\(another process listens there\\), so the ${participant} server cannot start on it; choose another with --server-port ${participant}=PORT, or leave --server-port out and vecbench picks a free port$`,
        ),
        [cleanData, join(root, 'port-out')],
      );
    }
    assert.equal(existsSync(join(root, 'port-out', 'tiny')), false, 'no result directory');
  });

  test('the runner refuses the taken port itself, before spawning the server', async () => {
    const p = await loadParticipant('pgvector');
    const dir = join(root, 'srv');
    await assert.rejects(
      startServer(
        p.adapter.server!.start,
        {
          dataset: { name: 'tiny', n: ROWS, d: D, metric: 'l2', hasText: false },
          settings: p.index,
          dataDir: dir,
          existing: false,
          logFile: join(root, 'srv.log'),
          log: () => {},
        },
        30,
        { port: taken, participant: 'pgvector' },
      ),
      (e: Error) => e instanceof UserError && e.message.startsWith(`port ${taken} on 127.0.0.1 is already in use`),
    );
    assert.equal(existsSync(dir), false, 'nothing was started');
  });

  test('a server given by URL where nothing listens, and options that do not fit', async () => {
    const closed = await freePort();
    expectBadInput(
      'connect to a port where nothing listens',
      [
        'run',
        '--dataset',
        'tiny',
        '--participants',
        'pgvector',
        '--groups',
        'none/10',
        '--data',
        cleanData,
        '--out',
        cleanOut,
        '--connect',
        `pgvector=postgres://vb@127.0.0.1:${closed}/db`,
      ],
      new RegExp(
        `^vecbench: cannot reach the pgvector server at 127\\.0\\.0\\.1:${closed} given by postgres://vb@127\\.0\\.0\\.1:${closed}/db \\(connection refused: nothing listens there\\); start the server there or correct the URL given with --connect pgvector=URL \\(or VECBENCH_CONNECT_PGVECTOR\\)$`,
      ),
      [cleanData, cleanOut],
    );
    expectBadInput(
      '--server-port for an in-process participant',
      ['run', '--dataset', 'tiny', '--participants', 'exact', '--data', cleanData, '--out', cleanOut, '--server-port', 'exact=5999'],
      /participant exact runs inside vecbench, not as a server; drop --server-port exact=5999/,
      [cleanData, cleanOut],
    );
    expectBadInput(
      '--server-port out of range',
      ['run', '--dataset', 'tiny', '--participants', 'pgvector', '--data', cleanData, '--out', cleanOut, '--server-port', 'pgvector=70000'],
      /write --server-port as PARTICIPANT=PORT with a port 1\.\.65535/,
      [cleanData, cleanOut],
    );
    expectBadInput(
      '--connect with a URL of another kind',
      ['run', '--dataset', 'tiny', '--participants', 'redis', '--data', cleanData, '--out', cleanOut, '--connect', `redis=http://127.0.0.1:${closed}`],
      /redis takes redis:\/\//,
      [cleanData, cleanOut],
    );
  });
});

describe('no disk space', () => {
  const mnt = join(root, 'small-disk');
  let mounted = false;

  before(() => {
    mkdirSync(mnt, { recursive: true });
    // A real full disk: a 4 MiB tmpfs (root may mount one; it is unmounted after). Without the
    // permission the atomic writer's fault hook stands in for it (VECBENCH_FAULT_ENOSPC).
    mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', mnt]).status === 0;
  });
  after(() => {
    if (mounted) spawnSync('umount', [mnt]);
  });

  /** Fills the small disk to the last byte; returns the filler's path (delete it to free). */
  async function fill(): Promise<string> {
    const filler = join(mnt, 'filler');
    await new Promise<void>((resolve) => {
      const dd = spawn('dd', ['if=/dev/zero', `of=${filler}`, 'bs=4k'], { stdio: 'ignore' });
      dd.on('exit', () => resolve());
    });
    return filler;
  }

  test('results: a full disk under a run, the results page and a prepare is one line; finished work is intact', async () => {
    const out = join(mnt, 'out');
    const data = join(mnt, 'data');
    cpSync(cleanData, data, { recursive: true });
    cpSync(cleanOut, out, { recursive: true });
    const finished = readFileSync(join(out, 'tiny', 'exact.json'));
    const noSpace =
      /no space left on the device while writing (.*); free space there \(or point --out \/ --data at a disk with room\) and run again: finished results are kept$/;
    const env: Record<string, string> = mounted ? {} : { VECBENCH_FAULT_ENOSPC: mnt };
    const filler = mounted ? await fill() : null;

    // A run whose engine (and result) has no room: nothing of it is left, the finished result stays.
    const runLine = expectBadInput(
      'no disk space (run)',
      ['run', '--dataset', 'tiny', '--participants', 'hnswlib', '--groups', 'none/10', '--data', data, '--out', out],
      noSpace,
      [out, data],
      env,
    );
    assert.match(noSpace.exec(runLine)![1], new RegExp(`^(the engine's data in )?${out}/`), 'names where it wrote');
    assert.deepEqual(readFileSync(join(out, 'tiny', 'exact.json')), finished);

    // The results page: named, no temporary file left.
    const page = expectBadInput('no disk space (report page)', ['report', '--out', out, '--html', join(out, 'page')], noSpace, [out], env);
    assert.equal(noSpace.exec(page)![1], join(out, 'page', 'index.html'));

    // A prepare: the file is named, its temporary directory is removed, the prepared set stays.
    const prep = expectBadInput(
      'no disk space (prepare)',
      ['prepare', 'custom', '--name', 'tiny2', '--base', join(inputs, 'base.fvecs'), '--queries', join(inputs, 'queries.fvecs'), '--data', data],
      noSpace,
      [data],
      env,
    );
    assert.match(noSpace.exec(prep)![1], new RegExp(`^${data}/tiny2\\.tmp-\\d+/`));
    assert.deepEqual(readdirSync(data).sort(), ['tiny']);

    // Freed, the same run finishes and keeps the earlier result.
    if (filler) rmSync(filler);
    const r = vecbench(['run', '--dataset', 'tiny', '--participants', 'hnswlib', '--groups', 'none/10', '--data', data, '--out', out]);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(existsSync(join(out, 'tiny', 'hnswlib.json')));
    assert.deepEqual(readFileSync(join(out, 'tiny', 'exact.json')), finished);
  });
});

test('the matrix tried every kind of bad input of issue 7', () => {
  // Printed for the record (the count goes into the closing note of the issue).
  process.stdout.write(`# bad inputs tried: ${tried.length}\n`);
  assert.ok(tried.length >= 40, `${tried.length} bad inputs`);
});
