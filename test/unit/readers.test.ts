// Every input-format reader, on small files this test writes: values and row ranges come back
// exactly, and truncated or corrupt files fail with one line naming the file and the fix.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { after, describe, test } from 'node:test';
import { parquetWriteFile } from 'hyparquet-writer';
import { UserError } from '../../src/util/errors.ts';
import { halfToFloat } from '../../src/datasets/readers/common.ts';
import { openTexmex } from '../../src/datasets/readers/texmex.ts';
import { openNpy } from '../../src/datasets/readers/npy.ts';
import { openIdx } from '../../src/datasets/readers/idx.ts';
import { hdf5Info, openHdf5 } from '../../src/datasets/readers/hdf5.ts';
import { openParquet } from '../../src/datasets/readers/parquet.ts';
import { formatOf, openIds, openVectors, parseInputSpec, readAllIds } from '../../src/datasets/readers/index.ts';

const dir = mkdtempSync(join(tmpdir(), 'vecbench-readers-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const ROWS = 37;
const D = 5;
/** Distinct, exactly representable values: row r, column j -> r + j / 8 (float32-exact). */
const value = (r: number, j: number) => r + j / 8 - 3;
const matrix = () => Float32Array.from({ length: ROWS * D }, (_, i) => value(Math.floor(i / D), i % D));

function writeVecs(path: string, rows: number, d: number, width: number, put: (dv: DataView, off: number, r: number, j: number) => void) {
  const rowBytes = 4 + d * width;
  const buf = new ArrayBuffer(rows * rowBytes);
  const dv = new DataView(buf);
  for (let r = 0; r < rows; r++) {
    dv.setInt32(r * rowBytes, d, true);
    for (let j = 0; j < d; j++) put(dv, r * rowBytes + 4 + j * width, r, j);
  }
  writeFileSync(path, new Uint8Array(buf));
}

function npyHeader(descr: string, shape: number[]): Uint8Array {
  let dict = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${shape.join(', ')}${shape.length === 1 ? ',' : ''}), }`;
  // numpy pads the header with spaces so the data starts on a 64-byte boundary, ending in \n.
  const total = Math.ceil((10 + dict.length + 1) / 64) * 64;
  dict = `${dict.padEnd(total - 10 - 1, ' ')}\n`;
  const out = new Uint8Array(total);
  out.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0]);
  new DataView(out.buffer).setUint16(8, dict.length, true);
  out.set(new TextEncoder().encode(dict), 10);
  return out;
}

function writeNpy(path: string, descr: string, shape: number[], data: Uint8Array) {
  const h = npyHeader(descr, shape);
  const out = new Uint8Array(h.length + data.length);
  out.set(h);
  out.set(data, h.length);
  writeFileSync(path, out);
}

function idxBytes(type: number, sizes: number[], data: Uint8Array): Uint8Array {
  const head = new Uint8Array(4 + 4 * sizes.length);
  head.set([0, 0, type, sizes.length]);
  const dv = new DataView(head.buffer);
  sizes.forEach((s, i) => dv.setUint32(4 + 4 * i, s, false));
  const out = new Uint8Array(head.length + data.length);
  out.set(head);
  out.set(data, head.length);
  return out;
}

/** Asserts a UserError whose one line names `file` and matches `re`. */
async function rejectsNaming(p: Promise<unknown> | (() => unknown), file: string, re: RegExp) {
  const run = typeof p === 'function' ? (async () => p())() : p;
  await assert.rejects(run, (e: Error) => {
    assert.ok(e instanceof UserError, `expected a UserError, got ${e.name}: ${e.message}`);
    assert.ok(!e.message.includes('\n'), `one line: ${e.message}`);
    assert.ok(e.message.includes(file), `names the file: ${e.message}`);
    assert.match(e.message, re);
    return true;
  });
}

describe('texmex .fvecs / .bvecs / .ivecs', () => {
  const fvecs = join(dir, 'a.fvecs');
  writeVecs(fvecs, ROWS, D, 4, (dv, o, r, j) => dv.setFloat32(o, value(r, j), true));

  test('reads all rows and any row range exactly', async () => {
    const r = openTexmex(fvecs, 'fvecs');
    assert.equal(r.rows, ROWS);
    assert.equal(r.dim, D);
    assert.deepEqual(await r.readFloats(0, ROWS), matrix());
    assert.deepEqual(await r.readFloats(11, 7), matrix().subarray(11 * D, 18 * D));
    await r.close();
  });

  test('.bvecs (uint8) and .ivecs (int32 ids)', async () => {
    const bvecs = join(dir, 'a.bvecs');
    writeVecs(bvecs, ROWS, D, 1, (dv, o, r, j) => dv.setUint8(o, (r * 7 + j) % 256));
    const b = openTexmex(bvecs, 'bvecs');
    const got = await b.readFloats(3, 2);
    assert.deepEqual(Array.from(got), [21, 22, 23, 24, 25, 28, 29, 30, 31, 32]);
    const ivecs = join(dir, 'gt.ivecs');
    writeVecs(ivecs, 4, 3, 4, (dv, o, r, j) => dv.setInt32(o, r * 100 + j, true));
    const i = await openIds(ivecs);
    assert.deepEqual(Array.from(await readAllIds(i)), [0, 1, 2, 100, 101, 102, 200, 201, 202, 300, 301, 302]);
  });

  test('a file cut mid-row is reported as truncated, naming the file', async () => {
    const cut = join(dir, 'cut.fvecs');
    writeFileSync(cut, readFileSync(fvecs).subarray(0, 4 * (1 + D) * 10 + 7));
    await rejectsNaming(() => openTexmex(cut, 'fvecs'), cut, /not a whole number of 24-byte rows.*truncated or corrupt/);
  });

  test('a row whose dimension header disagrees is reported as corrupt', async () => {
    const bad = join(dir, 'bad.fvecs');
    const bytes = new Uint8Array(readFileSync(fvecs));
    new DataView(bytes.buffer).setInt32(4 * (1 + D) * 5, 9, true);
    writeFileSync(bad, bytes);
    const r = openTexmex(bad, 'fvecs');
    await rejectsNaming(r.readFloats(0, ROWS), bad, /row 5 says dimension 9, the file starts with 5/);
    await r.close();
    const empty = join(dir, 'empty.fvecs');
    writeFileSync(empty, '');
    await rejectsNaming(() => openTexmex(empty, 'fvecs'), empty, /is empty/);
  });
});

describe('.npy', () => {
  test('float32, uint8 and int64 arrays; any row range', async () => {
    const f32 = join(dir, 'a.npy');
    writeNpy(f32, '<f4', [ROWS, D], new Uint8Array(matrix().buffer));
    const r = openNpy(f32);
    assert.equal(r.element, 'float32');
    assert.deepEqual(await r.readFloats(0, ROWS), matrix());
    assert.deepEqual(await r.readFloats(30, 7), matrix().subarray(30 * D));
    const u8 = join(dir, 'b.npy');
    writeNpy(u8, '|u1', [2, 3], Uint8Array.from([0, 1, 255, 7, 8, 9]));
    assert.deepEqual(Array.from(await openNpy(u8).readFloats(0, 2)), [0, 1, 255, 7, 8, 9]);
    const i64 = join(dir, 'gt.npy');
    writeNpy(i64, '<i8', [2, 2], new Uint8Array(BigInt64Array.from([5n, 6n, 7n, 2147483647n]).buffer));
    assert.deepEqual(Array.from(await readAllIds(await openIds(i64))), [5, 6, 7, 2147483647]);
  });

  test('float16 decodes to the exact values', async () => {
    const halves = [0x3800, 0xc000, 0x3d00, 0x0000, 0x7bff, 0x0001];
    assert.deepEqual(halves.map(halfToFloat), [0.5, -2, 1.25, 0, 65504, 2 ** -24]);
    const f16 = join(dir, 'h.npy');
    writeNpy(f16, '<f2', [2, 3], new Uint8Array(Uint16Array.from(halves).buffer));
    assert.deepEqual(
      Array.from(await openNpy(f16).readFloats(0, 2)),
      [0.5, -2, 1.25, 0, 65504, 2 ** -24].map((x) => Math.fround(x)),
    );
  });

  test('truncated, foreign, big-endian and Fortran-order files fail clearly', async () => {
    const ok = join(dir, 'a.npy');
    const cut = join(dir, 'cut.npy');
    writeFileSync(cut, readFileSync(ok).subarray(0, 200));
    await rejectsNaming(() => openNpy(cut), cut, /has 200 bytes, its header promises \d+ \(37 x 5 float32\).*truncated or corrupt/);
    const foreign = join(dir, 'foreign.npy');
    writeFileSync(foreign, 'hello, this is not numpy at all');
    await rejectsNaming(() => openNpy(foreign), foreign, /magic string.*numpy\.save/);
    const be = join(dir, 'be.npy');
    writeNpy(be, '>f4', [1, 1], new Uint8Array(4));
    await rejectsNaming(() => openNpy(be), be, /big-endian.*astype/);
    const fortran = join(dir, 'f.npy');
    const h = Buffer.from(npyHeader('<f4', [1, 1]))
      .toString('latin1')
      .replace('False', 'True ');
    writeFileSync(fortran, Buffer.concat([Buffer.from(h, 'latin1'), Buffer.alloc(4)]));
    await rejectsNaming(() => openNpy(fortran), fortran, /Fortran.*ascontiguousarray/);
    const ids = join(dir, 'floats-as-ids.npy');
    writeNpy(ids, '<f4', [1, 2], new Uint8Array(8));
    await rejectsNaming((await openIds(ids)).readInts(0, 1), ids, /float32 values, not integer ids/);
  });
});

describe('IDX (plain and gzip)', () => {
  const pixels = Uint8Array.from({ length: ROWS * 4 * 3 }, (_, i) => (i * 13) % 256);
  const plain = join(dir, 'images-idx3-ubyte');
  const gz = join(dir, 'images-idx3-ubyte.gz');
  writeFileSync(plain, idxBytes(0x08, [ROWS, 4, 3], pixels));
  writeFileSync(gz, gzipSync(idxBytes(0x08, [ROWS, 4, 3], pixels)));

  test('rows are the first size, the rest multiply into the dimension', async () => {
    for (const p of [plain, gz]) {
      const r = await openIdx(p);
      assert.equal(r.rows, ROWS);
      assert.equal(r.dim, 12);
      assert.deepEqual(await r.readFloats(0, 3), Float32Array.from(pixels.subarray(0, 36)));
      // Forward, then backwards (the gzip reader restarts its stream).
      assert.deepEqual(await r.readFloats(20, 2), Float32Array.from(pixels.subarray(240, 264)));
      assert.deepEqual(await r.readFloats(1, 1), Float32Array.from(pixels.subarray(12, 24)));
      await r.close();
    }
  });

  test('big-endian float32 and int32 IDX', async () => {
    const data = new Uint8Array(8);
    new DataView(data.buffer).setFloat32(0, 1.5, false);
    new DataView(data.buffer).setFloat32(4, -3.25, false);
    const f = join(dir, 'f.idx');
    writeFileSync(f, idxBytes(0x0d, [1, 2], data));
    assert.deepEqual(Array.from(await (await openIdx(f)).readFloats(0, 1)), [1.5, -3.25]);
    const i = join(dir, 'labels-idx1-ubyte');
    const idata = new Uint8Array(8);
    new DataView(idata.buffer).setInt32(0, 70000, false);
    new DataView(idata.buffer).setInt32(4, -1, false);
    writeFileSync(i, idxBytes(0x0c, [2], idata));
    assert.deepEqual(Array.from(await (await openIdx(i)).readInts(0, 2)), [70000, -1]);
  });

  test('a truncated gzip stream, a truncated file and a bad magic fail clearly', async () => {
    const cutGz = join(dir, 'cut-idx3-ubyte.gz');
    writeFileSync(cutGz, readFileSync(gz).subarray(0, Math.floor(readFileSync(gz).length / 2)));
    const r = await openIdx(cutGz);
    await rejectsNaming(r.readFloats(0, ROWS), cutGz, /gzip stream|ends after/);
    await r.close();
    const cut = join(dir, 'cut-idx3-ubyte');
    writeFileSync(cut, readFileSync(plain).subarray(0, 100));
    await rejectsNaming(openIdx(cut), cut, /has 100 bytes, its header promises \d+.*truncated/);
    const magic = join(dir, 'magic-idx3-ubyte');
    writeFileSync(magic, Buffer.from('PK\x03\x04 not idx at all'));
    await rejectsNaming(openIdx(magic), magic, /IDX magic number/);
  });
});

describe('HDF5 (ann-benchmarks layout, via h5wasm)', async () => {
  const path = join(dir, 'ann.hdf5');
  const h5 = await import('h5wasm/node');
  await h5.ready;
  const f = new h5.File(path, 'w');
  f.create_dataset({ name: 'train', data: matrix(), shape: [ROWS, D] });
  f.create_dataset({ name: 'test', data: matrix().slice(0, 3 * D), shape: [3, D] });
  f.create_dataset({ name: 'neighbors', data: Int32Array.from([1, 2, 3, 4, 5, 6]), shape: [3, 2] });
  f.create_dataset({ name: 'distances', data: new Float32Array(6), shape: [3, 2] });
  f.create_attribute('distance', 'angular');
  f.close();

  test('train / test / neighbors and the distance attribute', async () => {
    const info = await hdf5Info(path);
    assert.equal(info.metric, 'cosine');
    assert.deepEqual([...info.datasets].sort(), ['distances', 'neighbors', 'test', 'train']);
    const base = await openVectors(path, 'base');
    assert.equal(base.label, `${path}:train`);
    assert.deepEqual(await base.readFloats(0, ROWS), matrix());
    assert.deepEqual(await base.readFloats(36, 1), matrix().subarray(36 * D));
    const q = await openVectors(path, 'queries');
    assert.equal(q.rows, 3);
    assert.deepEqual(Array.from(await readAllIds(await openIds(path))), [1, 2, 3, 4, 5, 6]);
    const named = await openVectors(`${path}:test`);
    assert.equal(named.rows, 3);
    for (const r of [base, q, named]) await r.close();
  });

  test('a truncated or foreign file, or a missing dataset, fails with one line', async () => {
    const cut = join(dir, 'cut.hdf5');
    writeFileSync(cut, readFileSync(path).subarray(0, 1500));
    await rejectsNaming(openHdf5(cut, 'train'), cut, /not a readable HDF5 file \(truncated file: eof = 1500.*\); the file is truncated or corrupt/);
    const foreign = join(dir, 'foreign.hdf5');
    writeFileSync(foreign, 'not hdf5');
    await rejectsNaming(openHdf5(foreign, 'train'), foreign, /not a readable HDF5 file/);
    await rejectsNaming(openHdf5(path, 'vectors'), path, /has no dataset "vectors" \(it has: .*train.*\); name one with/);
    await rejectsNaming((await openHdf5(path, 'train')).readInts(0, 1), path, /float32 values, not integer ids/);
  });
});

describe('Parquet (list<float> embedding column, via hyparquet)', () => {
  const path = join(dir, 'wiki.parquet');
  const emb = Array.from({ length: ROWS }, (_, r) => Array.from({ length: D }, (_, j) => value(r, j)));
  parquetWriteFile({
    filename: path,
    columnData: [
      { name: '_id', data: emb.map((_, r) => `id-${r}`) },
      { name: 'title', data: emb.map((_, r) => `Title ${r}`) },
      { name: 'text', data: emb.map((_, r) => `paragraph "${r}"`) },
      { name: 'lang', data: emb.map((_, r) => (r % 3 === 0 ? 'de' : 'en')) },
      { name: 'emb', data: emb },
    ],
    schema: [
      { name: 'root', num_children: 5 },
      { name: '_id', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' },
      { name: 'title', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' },
      { name: 'text', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' },
      { name: 'lang', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' },
      { name: 'emb', repetition_type: 'OPTIONAL', converted_type: 'LIST', num_children: 1 },
      { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
      { name: 'element', type: 'FLOAT', repetition_type: 'OPTIONAL' },
    ],
    rowGroupSize: 10,
  });

  test('finds the embedding column, reads ranges across row groups and scalar columns', async () => {
    const r = await openParquet(path);
    assert.equal(r.column, 'emb');
    assert.equal(r.rows, ROWS);
    assert.equal(r.dim, D);
    assert.deepEqual(await r.readFloats(0, ROWS), matrix());
    assert.deepEqual(await r.readFloats(8, 5), matrix().subarray(8 * D, 13 * D));
    assert.deepEqual(await r.readStrings('lang', 2, 3), ['en', 'de', 'en']);
    assert.deepEqual(await r.readStrings('text', 36, 1), ['paragraph "36"']);
    const named = await openVectors(`${path}:emb`);
    assert.equal(named.rows, ROWS);
  });

  test('a truncated or foreign file, a missing or non-vector column fail clearly', async () => {
    const cut = join(dir, 'cut.parquet');
    writeFileSync(cut, readFileSync(path).subarray(0, 300));
    await rejectsNaming(openParquet(cut), cut, /not a readable Parquet file.*truncated or corrupt/);
    const foreign = join(dir, 'foreign.parquet');
    writeFileSync(foreign, 'PAR1 but nothing else of a parquet file');
    await rejectsNaming(openParquet(foreign), foreign, /not a readable Parquet file/);
    await rejectsNaming(openParquet(path, 'vector'), path, /has no column "vector" \(it has: _id, title, text, lang, emb\)/);
    await rejectsNaming(openParquet(path, 'title'), path, /is not a list of float/);
    // A file whose footer survives but whose data pages were damaged.
    const damaged = join(dir, 'damaged.parquet');
    const bytes = new Uint8Array(readFileSync(path));
    const embStart = bytes.length - 2000;
    for (let i = 50; i < embStart; i += 3) bytes[i] ^= 0x5a;
    writeFileSync(damaged, bytes);
    await assert.rejects(
      (async () => {
        const r = await openParquet(damaged);
        await r.readFloats(0, ROWS);
      })(),
      (e: Error) => e instanceof UserError && e.message.includes(damaged) && !e.message.includes('\n'),
    );
  });
});

describe('format dispatch', () => {
  test('by extension, with FILE:PART specs', () => {
    assert.equal(formatOf('x/base.fvecs'), 'fvecs');
    assert.equal(formatOf('GT.IVECS'), 'ivecs');
    assert.equal(formatOf('a.h5'), 'hdf5');
    assert.equal(formatOf('train-images-idx3-ubyte.gz'), 'idx');
    assert.equal(formatOf('v.parquet'), 'parquet');
    assert.equal(formatOf('v.csv'), null);
    assert.deepEqual(parseInputSpec('/no/such/file.hdf5:train'), { path: '/no/such/file.hdf5', part: 'train' });
    assert.deepEqual(parseInputSpec('/no/such/file.hdf5'), { path: '/no/such/file.hdf5' });
  });

  test('an unknown format or a missing file is one line with the fix', async () => {
    await rejectsNaming(openVectors(join(dir, 'v.csv')), 'v.csv', /unknown file format; supported: .*fvecs/);
    await rejectsNaming(openVectors(join(dir, 'missing.fvecs')), 'missing.fvecs', /no such file; check the path/);
    await rejectsNaming(openIds(join(dir, 'a.fvecs').replace('a.fvecs', 'gt.parquet')), 'gt.parquet', /ground truth must be/);
    truncateSync(join(dir, 'a.fvecs'), 10);
    await rejectsNaming(openVectors(join(dir, 'a.fvecs')), 'a.fvecs', /truncated or corrupt/);
  });
});
