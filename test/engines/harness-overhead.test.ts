// The harness-overhead measurement: the null pass through the real host answers like a point
// (same packing and digests), its overhead figure is usable, the 5 % rule flags what it says;
// and the hnswlib search path (reused query buffer, the binding's own result array) answers
// exactly as the binding does.
// vecbench-test: alone (it compares timed passes).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { after, before, test } from 'node:test';
import { prepareDataset } from '../../src/prepare/registry.ts';
import { HostClient } from '../../src/runner/client.ts';
import { HARNESS_OVERHEAD_LIMIT, HARNESS_OVERHEAD_RULE, harnessFlag, measureHarnessOverhead } from '../../src/runner/harness-overhead.ts';
import { loadParticipant } from '../../src/runner/participants.ts';
import { openOnSynthetic } from '../helpers/participant-harness.ts';

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
