// The harness-overhead measurement: the null pass through the real host answers like a point
// (same packing and digests), its overhead figure is usable, the 5 % rule flags what it says;
// and the hnswlib search path (reused query buffer, the binding's own result array) answers
// exactly as the binding does; a JavaScript engine's native loop also times the participant's
// adapter in its own process, answering as the loop does.
// vecbench-test: alone (it compares timed passes).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { after, before, test } from 'node:test';
import { prepareDataset } from '../../src/prepare/registry.ts';
import { HostClient } from '../../src/runner/client.ts';
import { HARNESS_OVERHEAD_LIMIT, HARNESS_OVERHEAD_RULE, harnessFlag, measureHarnessOverhead } from '../../src/runner/harness-overhead.ts';
import { loadParticipant } from '../../src/runner/participants.ts';
import { openOnSynthetic, truthsFor } from '../helpers/participant-harness.ts';

const DATASET = 'synthetic-2000';
const LIMIT_S = 240;
let root: string;
let dataDir: string;

before(async () => {
  root = mkdtempSync(join(tmpdir(), 'vecbench-overhead-'));
  dataDir = join(root, 'data');
  await prepareDataset(dataDir, DATASET, { groundTruth: false });
});
after(() => {
  rmSync(root, { recursive: true, force: true });
});

test('the null pass goes through the point path and gives a per-query overhead', async () => {
  const host = new HostClient('hnswlib');
  try {
    await host.request<'dataset'>({ type: 'dataset', participant: 'hnswlib', dataDir, dataset: DATASET }, LIMIT_S);
    const queries = Array.from({ length: 150 }, (_, i) => i);
    for (const clients of [1, 4]) {
      const { reply } = await host.request<'null-pass'>({ type: 'null-pass', k: 10, queries, clients }, LIMIT_S);
      assert.equal(reply.ids.length, queries.length * 10);
      assert.deepEqual(Array.from(reply.offsets), queries.map((_, i) => i * 10).concat(queries.length * 10));
      assert.deepEqual(
        Array.from(reply.ids.subarray(0, 10)),
        Array.from({ length: 10 }, (_, i) => i),
      );
      assert.ok(reply.errors.every((e) => e === null));
      assert.equal(new Set(reply.digests).size, 1, 'every answer is the same k ids');
      assert.equal(reply.latenciesMs.length, queries.length);
      assert.ok(reply.wallS > 0);
    }
    const o = await measureHarnessOverhead((r) => host.request<'null-pass'>(r, LIMIT_S), 10, queries, 1);
    assert.ok(Number.isFinite(o.perQueryMs) && o.perQueryMs > 0, `perQueryMs ${o.perQueryMs}`);
    assert.ok(Math.abs(o.qps * o.perQueryMs - 1000) < 1e-6 * o.qps * o.perQueryMs);
  } finally {
    await host.close();
  }
});

test('harnessFlag: over 5 % of the mean latency flags the point', () => {
  assert.equal(HARNESS_OVERHEAD_LIMIT, 0.05);
  assert.match(HARNESS_OVERHEAD_RULE, /5 % of its mean latency/);
  assert.deepEqual(harnessFlag(0.0006, 0.01), ['harness-overhead']);
  assert.deepEqual(harnessFlag(0.0004, 0.01), []);
  assert.deepEqual(harnessFlag(0.0005, 0.01), []);
  assert.deepEqual(harnessFlag(0.001, 0), ['harness-overhead']);
  assert.deepEqual(harnessFlag(Number.NaN, 1), []);
  assert.deepEqual(harnessFlag(0.001, Number.POSITIVE_INFINITY), []);
});

test('hnswlib search answers exactly as the binding, a wrong-length vector is refused, an empty index answers nothing', async () => {
  const opened = await openOnSynthetic('hnswlib', { n: 1500, nq: 40 });
  try {
    const { data, session, workDir } = opened;
    const require = createRequire(import.meta.url);
    const hnswlib = require('hnswlib-node') as typeof import('hnswlib-node');
    // The reference: the binding alone on the graph the session saved.
    const ref = new hnswlib.HierarchicalNSW('ip', data.d);
    await ref.readIndex(join(workDir, 'hnswlib.index'), true);
    for (const ef of [10, 64]) {
      await session.setKnobs({ ef });
      ref.setEf(ef);
      for (let q = 0; q < data.nq; q++) {
        const vector = data.queries.slice(q * data.d, (q + 1) * data.d);
        const got = Array.from(await session.search({ vector, k: 10, filter: null }));
        assert.deepEqual(got, ref.searchKnn(Array.from(vector), 10).neighbors, `ef=${ef} query ${q}`);
      }
    }
    await assert.rejects(session.search({ vector: new Float32Array(data.d + 1), k: 10, filter: null }), /array length/);
    const p = await loadParticipant('hnswlib');
    const empty = await p.adapter.open({
      dataset: { name: 'empty', n: 10, d: data.d, metric: 'ip', hasText: false },
      settings: p.index,
      workDir: mkdtempSync(join(root, 'empty-')),
      maxConcurrency: 1,
      log: () => {},
    });
    assert.deepEqual(Array.from(await empty.search({ vector: data.queries.slice(0, data.d), k: 5, filter: null })), []);
    await empty.close();
  } finally {
    await opened.cleanup();
  }
});

test("orama's loop times the participant's adapter in its own process (mode 'adapter') with the loop's answers; an unknown mode stops it naming the modes", async () => {
  const opened = await openOnSynthetic('orama', { n: 800, nq: 20 });
  const dir = mkdtempSync(join(root, 'loop-'));
  try {
    const { data, workDir, participant } = opened;
    const k = 10;
    const raw = (a: Float32Array | Int32Array) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
    writeFileSync(join(dir, 'base.f32'), raw(data.base));
    writeFileSync(join(dir, 'queries.f32'), raw(data.queries));
    writeFileSync(join(dir, 'gt.i32'), raw(Int32Array.from(truthsFor(data, 'none', k).flatMap((t) => t.ids))));
    // The adapter reopens a copy of the file the build saved; the loop loads the original.
    cpSync(workDir, join(dir, 'copy'), { recursive: true });
    const idx = participant.index as { similarity: number; stemming: boolean };
    const loop = join(dirname(fileURLToPath(import.meta.url)), '../../bench/native/orama_loop.ts');
    const args = [join(workDir, 'orama.db.bin'), dir, String(data.nq), String(data.d), String(k), String(idx.similarity), String(idx.stemming)];
    const child = spawn(process.execPath, ['--import', 'tsx', loop, ...args, '--adapter', 'orama', join(dir, 'copy'), '-', 'synthetic-test', data.metric], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    const next = async () => JSON.parse(((await lines.next()).value as string) ?? 'null') as { recall: number; qps: number[]; interleaved_ratio?: number[] };
    assert.equal(((await next()) as unknown as { ready: boolean }).ready, true);
    child.stdin.write('0 2 raw\n');
    const plain = await next();
    child.stdin.write('0 2 adapter\n');
    const adapter = await next();
    // Orama's scan is exact: both modes find the exact neighbours, two passes each.
    assert.equal(plain.recall, 1);
    assert.equal(adapter.recall, 1);
    assert.equal(adapter.qps.length, 2);
    // The adapter's passes ran query by query in turn with the plain call: each carries the ratio.
    assert.equal(plain.interleaved_ratio, undefined);
    assert.equal(adapter.interleaved_ratio?.length, 2);
    for (const r of adapter.interleaved_ratio!) assert.ok(r > 0 && Number.isFinite(r), `ratio ${r}`);
    child.stdin.write('0 1 bogus\n');
    child.stdin.end();
    assert.notEqual(await exited, 0);
    assert.match(stderr, /no mode "bogus" here \(raw, adapter\)/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await opened.cleanup();
  }
});
