import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { FILTER_KINDS, matchingRows, parseGroupKey } from '../../src/datasets/groups.ts';
import { loadDataset, writePrepared, type Dataset } from '../../src/datasets/layout.ts';
import { generateSynthetic, parseSyntheticName, prepareSyntheticStreamed, STREAM_ABOVE_BYTES } from '../../src/prepare/synthetic.ts';
import { prepareDataset, sourceFor } from '../../src/prepare/registry.ts';
import { hashedAttributes } from '../../src/datasets/attributes.ts';
import { UserError } from '../../src/util/errors.ts';

const dir = mkdtempSync(join(tmpdir(), 'vecbench-ds-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('synthetic generator', () => {
  let ds: Dataset;
  before(async () => {
    ds = await prepareDataset(dir, 'synthetic-20k');
  });

  test('is deterministic by seed and held-out queries are not base rows', () => {
    const again = generateSynthetic(2000, 200);
    const once = generateSynthetic(2000, 200);
    assert.deepEqual(again.base, once.base);
    assert.deepEqual(again.queries, once.queries);
    const rows = new Set<string>();
    for (let i = 0; i < ds.n; i++) rows.add(ds.base.subarray(i * ds.d, i * ds.d + 8).join(','));
    for (let q = 0; q < ds.nq; q++) assert.ok(!rows.has(ds.queries.subarray(q * ds.d, q * ds.d + 8).join(',')), `query ${q} is a base row`);
  });

  test('vectors are unit length and not uniform noise (clustered: neighbours are much closer than random pairs)', () => {
    const { d } = ds;
    for (let i = 0; i < 100; i++) {
      let s = 0;
      for (let j = 0; j < d; j++) s += ds.base[i * d + j] ** 2;
      assert.ok(Math.abs(s - 1) < 1e-5);
    }
    // Mean dot product of random pairs vs the best dot product of a query: clustered data has
    // a wide gap; uniform noise in 128-d would have both near 0.
    let randomDot = 0;
    let bestDot = 0;
    for (let q = 0; q < 20; q++) {
      let best = -1;
      for (let i = 0; i < ds.n; i++) {
        let s = 0;
        for (let j = 0; j < d; j++) s += ds.queries[q * d + j] * ds.base[i * d + j];
        if (s > best) best = s;
        if (i === q * 7) randomDot += s;
      }
      bestDot += best;
    }
    assert.ok(bestDot / 20 > 0.9, `nearest neighbours should be close (mean best dot ${bestDot / 20})`);
    assert.ok(bestDot / 20 - randomDot / 20 > 0.5, 'neighbours should be far closer than random pairs');
  });

  test('filter selectivities are within 20 % of nominal', () => {
    for (const kind of FILTER_KINDS) {
      if (kind.nominal === null) continue;
      let kept = 0;
      const queries = 40;
      for (let q = 0; q < queries; q++) kept += matchingRows(kind.forQuery(q, ds.queryAttrs), ds.attrs, ds.n).length;
      const share = kept / queries / ds.n;
      assert.ok(Math.abs(share - kind.nominal) <= 0.2 * kind.nominal, `${kind.name}: kept ${share}, nominal ${kind.nominal}`);
    }
  });

  test('cluster and language filters behave as docs/method.md §2 says', () => {
    const share = (name: string) => {
      const kind = FILTER_KINDS.find((k) => k.name === name)!;
      let kept = 0;
      for (let q = 0; q < 100; q++) kept += matchingRows(kind.forQuery(q, ds.queryAttrs), ds.attrs, ds.n).length;
      return kept / 100 / ds.n;
    };
    assert.ok(share('cluster') > 0.005 && share('cluster') < 0.06, `own cluster ~2 %: ${share('cluster')}`);
    const langShares = new Array(ds.langs.length).fill(0);
    for (const l of ds.attrs.lang) langShares[l]++;
    for (const s of langShares) assert.ok(s / ds.n >= 0.01 && s / ds.n <= 0.17, `language share ${s / ds.n}`);
    // The own cluster agrees with the vector: the query's nearest rows are mostly in it.
    let agree = 0;
    for (let q = 0; q < 50; q++) {
      let best = -1;
      let bestRow = 0;
      for (let i = 0; i < ds.n; i++) {
        let s = 0;
        for (let j = 0; j < ds.d; j++) s += ds.queries[q * ds.d + j] * ds.base[i * ds.d + j];
        if (s > best) [best, bestRow] = [s, i];
      }
      if (ds.attrs.cluster[bestRow] === ds.queryAttrs.cluster[q]) agree++;
      assert.notEqual(ds.queryAttrs.far_cluster[q], ds.queryAttrs.cluster[q]);
      assert.notEqual(ds.queryAttrs.other_lang[q], ds.queryAttrs.lang[q]);
    }
    assert.ok(agree >= 35, `nearest row in the query's own cluster for ${agree}/50 queries`);
  });

  test('hashed attributes depend only on the row id (same at every size)', () => {
    const small = hashedAttributes(1000);
    assert.deepEqual(small.cat100, ds.attrs.cat100.slice(0, 1000));
    assert.deepEqual(small.num, ds.attrs.num.slice(0, 1000));
  });

  test('a second prepare is a no-op and loading verifies sha256', async () => {
    const before = readFileSync(join(ds.dir, 'manifest.json'), 'utf8');
    await prepareDataset(dir, 'synthetic-20k');
    assert.equal(readFileSync(join(ds.dir, 'manifest.json'), 'utf8'), before);
  });
});

describe("the dimension is part of a synthetic set's name", () => {
  test('synthetic-<N>-<D> prepares N unit vectors of D dimensions with its queries; synthetic-<N> is 128-d', async () => {
    const wide = await prepareDataset(dir, 'synthetic-500-768');
    assert.deepEqual([wide.n, wide.d, wide.nq, wide.metric], [500, 768, 10_000, 'ip']);
    assert.equal(wide.base.length, 500 * 768);
    let s = 0;
    for (let j = 0; j < 768; j++) s += wide.base[j] ** 2;
    assert.ok(Math.abs(s - 1) < 1e-5, `row 0 has squared norm ${s}`);
    assert.equal(parseSyntheticName('synthetic-20k')!.d, 128);
    assert.deepEqual(parseSyntheticName('synthetic-1m-768'), { n: 1_000_000, nq: 10_000, d: 768 });
    assert.equal(parseSyntheticName('synthetic-1m-768x'), null);
    // The held-out queries, when the name asks for them (the disk tier's 20,000).
    assert.deepEqual(parseSyntheticName('synthetic-1m-768-q20k'), { n: 1_000_000, nq: 20_000, d: 768 });
    assert.deepEqual(parseSyntheticName('synthetic-20k-128-i64-q500'), { n: 20_000, nq: 500, d: 128, intrinsic: 64 });
    assert.throws(
      () => parseSyntheticName('synthetic-20k-q10'),
      (e: Error) => e instanceof UserError && e.message === 'dataset synthetic-20k-q10: the queries after -q must be 100 to 100k, e.g. synthetic-1m-768-q20k',
    );
    // The intrinsic dimension: -i<L>, with or without the dimension before it.
    assert.deepEqual(parseSyntheticName('synthetic-20k-128-i64'), { n: 20_000, nq: 10_000, d: 128, intrinsic: 64 });
    assert.deepEqual(parseSyntheticName('synthetic-20k-i96'), { n: 20_000, nq: 10_000, d: 128, intrinsic: 96 });
    assert.equal(parseSyntheticName('synthetic-20k-i'), null);
  });

  test('a set named with an intrinsic dimension is made by that model from the same seed, recorded in the source; out of range is one line', async () => {
    const easy = await prepareDataset(dir, 'synthetic-300-32');
    const hard = await prepareDataset(dir, 'synthetic-300-32-i32');
    assert.deepEqual([hard.n, hard.d], [300, 32]);
    assert.notDeepEqual(hard.base, easy.base);
    assert.deepEqual(hard.base, generateSynthetic(300, 10_000, { d: 32, intrinsic: 32 }).base);
    assert.deepEqual([hard.source.latent, hard.source.intrinsic], [32, 32]);
    assert.deepEqual([easy.source.latent, easy.source.intrinsic], [24, undefined]);
    for (const name of ['synthetic-300-32-i0', 'synthetic-300-32-i33'])
      assert.throws(
        () => sourceFor(name),
        (e: unknown) =>
          e instanceof UserError && /the intrinsic dimension after -i must be 1 to the dimension \(32\), e\.g\. synthetic-20k-128-i64/.test(e.message),
      );
  });

  test('a set generated to disk block by block has the rows and queries generateSynthetic makes, and 10,000 queries above 1 GiB as below', async () => {
    const mem = generateSynthetic(3000, 200, { d: 16 });
    const streamed = await prepareSyntheticStreamed(dir, 'streamed-3000-16', 3000, 200, { d: 16, quiet: true });
    assert.deepEqual([streamed.n, streamed.d, streamed.nq, streamed.metric], [3000, 16, 200, 'ip']);
    assert.deepEqual(streamed.base, mem.base);
    assert.deepEqual(streamed.queries, mem.queries);
    assert.deepEqual(streamed.attrs.lang, mem.attrs.lang);
    assert.deepEqual(streamed.attrs.cat100, mem.attrs.cat100);
    // Clusters come from k-means on a sample: every row has one of the 50.
    assert.ok(streamed.attrs.cluster.every((c) => c >= 0 && c < 50));
    // Reading it back checks every file's sha256.
    assert.equal((await loadDataset(dir, 'streamed-3000-16')).n, 3000);
    // synthetic-1m-768 is 3 GB of base: made to disk, synthetic-1m (512 MB) in memory, each
    // with 10,000 queries (the disk tier's cold protocol asks each query once in ten slices).
    assert.ok(1_000_000 * 768 * 4 > STREAM_ABOVE_BYTES && 1_000_000 * 128 * 4 <= STREAM_ABOVE_BYTES);
    assert.equal(parseSyntheticName('synthetic-1m-768')!.nq, 10_000);
    assert.equal(parseSyntheticName('synthetic-1m')!.nq, 10_000);
  });

  test('a dimension out of range is one line with an example', () => {
    for (const name of ['synthetic-2000-1', 'synthetic-2000-0', 'synthetic-2000-100000'])
      assert.throws(
        () => sourceFor(name),
        (e: unknown) => e instanceof UserError && /the dimension after the rows must be 2 to 4096, e\.g\. synthetic-20k-768/.test(e.message),
      );
  });
});

describe('bad dataset input gets one clear line', () => {
  const fresh = async (name: string) => writePrepared(dir, name, generateSynthetic(500, 50));

  test('unknown dataset', () => {
    assert.throws(
      () => sourceFor('nope-1'),
      (e: Error) => e instanceof UserError && /unknown dataset "nope-1"; known datasets/.test(e.message),
    );
  });

  test('not prepared', async () => {
    await assert.rejects(loadDataset(dir, 'synthetic-123'), /not prepared .*run: vecbench prepare synthetic-123/);
  });

  test('truncated file', async () => {
    const ds = await fresh('trunc');
    truncateSync(join(ds.dir, 'base.f32'), 1000);
    await assert.rejects(
      loadDataset(dir, 'trunc', { verify: false }),
      (e: Error) => e instanceof UserError && /base\.f32 has 1000 bytes, expected .*truncated or corrupt.*vecbench prepare trunc --force/.test(e.message),
    );
  });

  test('sha256 mismatch', async () => {
    const ds = await fresh('corrupt');
    const path = join(ds.dir, 'queries.f32');
    const buf = readFileSync(path);
    buf[100] ^= 0xff;
    writeFileSync(path, buf);
    await assert.rejects(loadDataset(dir, 'corrupt'), /queries\.f32 does not match the sha256 in its manifest/);
  });

  test('corrupt manifest', async () => {
    const ds = await fresh('badmanifest');
    writeFileSync(join(ds.dir, 'manifest.json'), '{"format": "vecbench-dataset/1", "n": -3');
    await assert.rejects(loadDataset(dir, 'badmanifest'), /manifest\.json is not valid JSON/);
  });

  test('dimension mismatch between the manifest and the files', async () => {
    const ds = await fresh('dims');
    const m = JSON.parse(readFileSync(join(ds.dir, 'manifest.json'), 'utf8'));
    m.d = 64;
    writeFileSync(join(ds.dir, 'manifest.json'), JSON.stringify(m));
    await assert.rejects(loadDataset(dir, 'dims', { verify: false }), /base\.f32 has \d+ bytes, expected \d+/);
  });

  test('NaN, Inf and zero vectors', async () => {
    const data = generateSynthetic(500, 50);
    data.base[5 * data.d + 3] = NaN;
    await assert.rejects(writePrepared(dir, 'nan', data), /base row 5 has NaN at dimension 3/);
    const inf = generateSynthetic(500, 50);
    inf.queries[7] = Infinity;
    await assert.rejects(writePrepared(dir, 'inf', inf), /queries row 0 has Inf/);
    const zero = { ...generateSynthetic(500, 50), metric: 'cosine' as const };
    zero.base.fill(0, 0, zero.d);
    await assert.rejects(writePrepared(dir, 'zero', zero), /base row 0 is a zero vector/);
  });

  test('unknown filter and bad group keys', () => {
    assert.throws(() => parseGroupKey('bogus/10'), /unknown filter "bogus"; known filters: none, cat10/);
    assert.throws(() => parseGroupKey('none/7'), /k must be one of 10, 100, 1000/);
    assert.throws(() => parseGroupKey('none'), /write groups as FILTER\/K/);
  });
});
