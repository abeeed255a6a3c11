// Search threads in the participant host (real engines, through the real host process): a
// threaded pass answers exactly as the one-at-a-time pass, every thread takes part, errors stay
// per query, a write ends the threads (and later passes see it), and closing the host ends
// every thread.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { FilterExpr, Knobs } from '../../src/contracts.ts';
import { prepareDataset } from '../../src/prepare/registry.ts';
import type { Dataset } from '../../src/datasets/layout.ts';
import { HostClient, HostError } from '../../src/runner/client.ts';
import type { PointReply } from '../../src/runner/point-reply.ts';
import { loadParticipant } from '../../src/runner/participants.ts';
import { drivenBy } from '../../src/runner/timed-rounds.ts';

const DATASET = 'synthetic-2000';
const LIMIT_S = 240;
let root: string;
let dataDir: string;
let ds: Dataset;

before(async () => {
  root = mkdtempSync(join(tmpdir(), 'vecbench-threads-'));
  dataDir = join(root, 'data');
  ds = await prepareDataset(dataDir, DATASET, { groundTruth: false });
});
after(() => {
  rmSync(root, { recursive: true, force: true });
});

/** A host with the participant loaded and its index built in a fresh work directory. */
async function loaded(participant: string): Promise<HostClient> {
  const host = new HostClient(participant);
  const workDir = mkdtempSync(join(root, `${participant}-`));
  await host.request<'opened'>({ type: 'open', participant, dataDir, dataset: DATASET, workDir, maxConcurrency: 2 }, LIMIT_S);
  await host.request<'loaded'>({ type: 'load', batchSize: 1000 }, LIMIT_S);
  return host;
}

async function point(
  host: HostClient,
  knobs: Knobs,
  queries: number[],
  threads: number,
  filters: (FilterExpr | null)[] = queries.map(() => null),
  k = 10,
): Promise<PointReply> {
  return (await host.request<'point'>({ type: 'point', knobs, k, queries, filters, clients: 1, threads }, LIMIT_S)).reply;
}

const idsOf = (r: PointReply, i: number) => Array.from(r.ids.subarray(r.offsets[i], r.offsets[i + 1]));

/** Distinct queries of a pass. */
const SET = 400;
/** The set's queries, `times` over, so a pass lasts long enough for both threads. */
const repeated = (times: number) => Array.from({ length: SET * times }, (_, i) => i % SET);

/** OS threads of a process (Linux): a worker thread is one of them. */
const osThreads = (pid: number) => readdirSync(`/proc/${pid}/task`).length;

async function exited(host: HostClient): Promise<void> {
  for (let i = 0; i < 200 && host.alive; i++) await new Promise((r) => setTimeout(r, 50));
}

function checkSameAnswers(one: PointReply, two: PointReply, n: number): void {
  assert.equal(one.threadsUsed, undefined, 'threads: 1 runs in the host loop');
  assert.ok(two.threadsUsed, 'threads: 2 ran in search threads');
  assert.equal(two.threadsUsed.length, 2);
  assert.equal(
    two.threadsUsed.reduce((a, b) => a + b, 0),
    n,
    'each query answered once',
  );
  for (const [t, c] of two.threadsUsed.entries()) assert.ok(c > 0, `thread ${t} answered no query (${two.threadsUsed.join(', ')})`);
  assert.equal(two.latenciesMs.length, n);
  assert.ok(
    two.latenciesMs.every((l) => l > 0),
    'every query timed',
  );
  assert.ok(two.wallS > 0);
  assert.ok(
    two.errors.every((e) => e === null),
    `errors: ${two.errors.find((e) => e !== null)}`,
  );
  for (let i = 0; i < n; i++) {
    assert.deepEqual(idsOf(two, i), idsOf(one, i), `query ${i}: threaded answer differs`);
    assert.equal(two.digests![i], one.digests![i]);
  }
  assert.ok(idsOf(one, 0).length === 10, 'full answers');
}

test('hnswlib: threads answer as one at a time, share the queries, keep errors per query, stop before a write and with the host', {
  timeout: 600_000,
}, async () => {
  const host = await loaded('hnswlib');
  const pid = host.pid!;
  try {
    const queries = repeated(3);
    const one = await point(host, { ef: 128 }, queries, 1);
    const threadsBefore = osThreads(pid);
    const two = await point(host, { ef: 128 }, queries, 2);
    checkSameAnswers(one, two, queries.length);
    const threadsDuring = osThreads(pid);
    assert.ok(threadsDuring >= threadsBefore + 2, `two search threads running (${threadsBefore} -> ${threadsDuring} OS threads)`);

    // Another ef reaches every thread: the answers change with it and still match.
    const oneLow = await point(host, { ef: 10 }, queries.slice(0, SET), 1);
    const twoLow = await point(host, { ef: 10 }, queries.slice(0, SET), 2);
    assert.ok(twoLow.threadsUsed);
    for (let i = 0; i < SET; i++) assert.deepEqual(idsOf(twoLow, i), idsOf(oneLow, i), `query ${i} at ef 10`);
    assert.ok(
      Array.from({ length: SET }, (_, i) => i).some((i) => idsOf(twoLow, i).join() !== idsOf(two, i).join()),
      'ef 10 answers differ from ef 128 somewhere (the knob reached the threads)',
    );

    // A filter that no engine knows makes the adapter throw: those queries fail, the rest answer.
    const bad = { op: 'nope' } as unknown as FilterExpr;
    const cat = { op: 'eq', field: 'cat10', value: 3 } as const;
    const mixedFilters = queries.map((_, i) => (i % 7 === 3 ? bad : i % 7 === 5 ? cat : null));
    const mixedOne = await point(host, { ef: 128 }, queries, 1, mixedFilters);
    const mixedTwo = await point(host, { ef: 128 }, queries, 2, mixedFilters);
    assert.ok(mixedTwo.threadsUsed);
    for (let i = 0; i < queries.length; i++) {
      if (i % 7 === 3) {
        assert.equal(typeof mixedTwo.errors[i], 'string', `query ${i} with the bad filter reports its error`);
        assert.equal(mixedTwo.errors[i], mixedOne.errors[i], 'the same message as the host loop');
        assert.deepEqual(idsOf(mixedTwo, i), []);
      } else {
        assert.equal(mixedTwo.errors[i], null, `query ${i} has no error`);
        assert.deepEqual(idsOf(mixedTwo, i), idsOf(mixedOne, i), `query ${i} (${i % 7 === 5 ? 'cat10' : 'unfiltered'})`);
        if (i % 7 === 5) for (const id of idsOf(mixedTwo, i)) assert.equal(ds.attrs.cat10[id], 3, `query ${i}: id ${id} violates the filter`);
      }
    }

    // A bad knob stays the user's error, and the threads survive it.
    await assert.rejects(
      point(host, { ef: -1 }, queries, 2),
      (e: unknown) => e instanceof HostError && e.userError && /ef must be a positive integer/.test(e.message),
    );
    assert.ok((await point(host, { ef: 128 }, queries.slice(0, 50), 2)).threadsUsed);

    // A write stops the threads first; later threaded points fall back to the session, which
    // has the write (the saved index no longer matches it).
    const victims = Int32Array.from(idsOf(one, 0).slice(0, 3));
    await host.request<'churn-written'>({ type: 'churn-write', op: 'delete', rows: { ids: victims }, batchSize: 100 }, LIMIT_S);
    assert.ok(osThreads(pid) <= threadsDuring - 2, 'the search threads ended before the write');
    const afterWrite = await point(host, { ef: 128 }, queries.slice(0, SET), 2);
    assert.equal(afterWrite.threadsUsed, undefined, 'no threads on a stale saved index');
    for (const id of victims) assert.ok(!idsOf(afterWrite, 0).includes(id), `deleted id ${id} came back`);

    // A new load saves the index again: threads come back.
    await host.request<'loaded'>({ type: 'load', batchSize: 1000 }, LIMIT_S);
    assert.ok((await point(host, { ef: 128 }, queries, 2)).threadsUsed);
  } finally {
    await host.close();
  }
  await exited(host);
  assert.equal(host.alive, false, 'the host exits after close');
  assert.equal(existsSync(`/proc/${pid}`), false, 'no thread of the host is left');
});

test('exact is not threaded: each of its searches already runs on every core', { timeout: 300_000 }, async () => {
  const host = await loaded('exact');
  try {
    const queries = repeated(1);
    const one = await point(host, {}, queries, 1);
    const two = await point(host, {}, queries, 2);
    assert.equal(two.threadsUsed, undefined, 'threads: 2 still runs in the host loop');
    // What results and tables say of how it was driven: one at a time, each search on every core
    // (the native addon, which the suite builds), in both views.
    const p = await loadParticipant('exact');
    for (const view of ['throughput', 'latency'] as const)
      assert.equal(drivenBy(p, view, 32, 2).text, `1 at a time, each search on ${availableParallelism()} threads (native addon)`);
    for (let i = 0; i < queries.length; i++) assert.deepEqual(idsOf(two, i), idsOf(one, i));
  } finally {
    await host.close();
  }
});

for (const [name, knobs] of [['usearch', { expansion_search: 12 }]] as const) {
  test(`${name}: threads answer as one at a time and every thread takes part`, { timeout: 300_000 }, async () => {
    const host = await loaded(name);
    try {
      const queries = repeated(3);
      const one = await point(host, knobs, queries, 1);
      const two = await point(host, knobs, queries, 2);
      checkSameAnswers(one, two, queries.length);
    } finally {
      await host.close();
    }
    await exited(host);
    assert.equal(host.alive, false);
  });
}

// Engines whose open data cannot be opened twice, or whose knob is a write to it: each thread
// reopens its own copy. Per engine: its knobs and a file of its data the copy must hold.
for (const [name, knobs, dataFile] of [
  ['pgvector-pglite', { ef_search: 40 }, join('pgdata', 'PG_VERSION')],
  ['libsql', { search_l: 40 }, 'libsql.db'],
  ['zvec', { ef: 32 }, 'zvec'],
] as const) {
  test(`${name}: each thread reopens its own copy of the work directory, removed when the threads close`, { timeout: 600_000 }, async () => {
    const host = new HostClient(name);
    const workDir = mkdtempSync(join(root, `${name}-copies-`));
    try {
      await host.request<'opened'>({ type: 'open', participant: name, dataDir, dataset: DATASET, workDir, maxConcurrency: 2 }, LIMIT_S);
      await host.request<'loaded'>({ type: 'load', batchSize: 1000 }, LIMIT_S);
      const queries = repeated(1).slice(0, 200);
      const one = await point(host, knobs, queries, 1);
      const two = await point(host, knobs, queries, 2);
      checkSameAnswers(one, two, queries.length);
      for (let i = 0; i < queries.length; i++) assert.deepEqual(idsOf(two, i), idsOf(one, i), `query ${i}`);
      // Another knob reaches every thread's copy: the answers still match one at a time.
      const other = Object.fromEntries(Object.entries(knobs).map(([k, v]) => [k, v * 2]));
      const oneOther = await point(host, other, queries, 1);
      const twoOther = await point(host, other, queries, 2);
      for (let i = 0; i < queries.length; i++) assert.deepEqual(idsOf(twoOther, i), idsOf(oneOther, i), `query ${i} at ${JSON.stringify(other)}`);
      const copies = join(workDir, 'search-threads');
      assert.deepEqual(readdirSync(copies).sort(), ['0', '1'], 'one copy per thread');
      assert.ok(existsSync(join(copies, '0', dataFile)), `the copy holds ${dataFile}`);
    } finally {
      await host.close();
    }
    await exited(host);
    assert.equal(host.alive, false);
    assert.equal(existsSync(join(workDir, 'search-threads')), false, 'the copies are removed when the threads close');
    assert.ok(existsSync(join(workDir, dataFile)), "the session's own data stays");
  });
}
