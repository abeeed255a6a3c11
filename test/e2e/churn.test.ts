// Live churn (docs/method.md §7): ground truth over a live set checked against a naive search written
// here, the leak detector against a participant that really leaks (a real exact session whose
// deletes forget some ids), freshness timing on a session that shows writes 50 ms after the
// ack, runbook validation, and each real engine through a short runbook on the command line.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { AttrName, EngineSession, FilterExpr, RowBatch, SearchRequest } from '../../src/contracts.ts';
import { ATTRIBUTES } from '../../src/contracts.ts';
import { RunbookExecutor } from '../../src/churn/executor.ts';
import { capsOf } from '../../src/churn/host-side.ts';
import { LiveStore } from '../../src/churn/live.ts';
import { BUILT_IN, checkRunbookRows, loadRunbook, parseRunbook, type Runbook } from '../../src/churn/runbook.ts';
import { LocalTarget, newRunbookResult, unsupportedReason } from '../../src/churn/run.ts';
import type { RunbookResult } from '../../src/churn/schema.ts';
import { SnapshotTruth, liveTruth } from '../../src/churn/truth.ts';
import type { Dataset } from '../../src/datasets/layout.ts';
import { generateSynthetic } from '../../src/prepare/synthetic.ts';
import { deriveChurn } from '../../src/report/churn.ts';
import { loadParticipant, type LoadedParticipant } from '../../src/runner/participants.ts';
import { makeRng } from '../../src/util/hash.ts';
import { UserError } from '../../src/util/errors.ts';
import { SHORT_RUNBOOK, checkReportChurn, checkShortRun, type ShortRunExpect } from '../helpers/churn-short.ts';

const BIN = fileURLToPath(new URL('../../bin/vecbench.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'vecbench-churn-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A small in-memory dataset (no files): 1,500 rows, 200 queries. */
function smallDataset(): Dataset {
  const data = generateSynthetic(1500, 200, { clusters: 10 });
  return { ...data, name: 'churn-test', dir: '', manifest: undefined as never, hash: 'churn-test' };
}

// ---- a naive model of the live set, independent of LiveStore ----

interface NaiveRow {
  v: Float32Array;
  attrs: Record<AttrName, number>;
}
type Naive = Map<number, NaiveRow>;

function naivePut(m: Naive, rows: RowBatch, d: number): void {
  rows.ids.forEach((id, i) => {
    m.set(id, {
      v: rows.vectors.slice(i * d, (i + 1) * d),
      attrs: Object.fromEntries(ATTRIBUTES.map((a) => [a, rows.attrs[a][i]])) as Record<AttrName, number>,
    });
  });
}

function naivePasses(f: FilterExpr | null, a: Record<AttrName, number>): boolean {
  if (f === null) return true;
  if (f.op === 'eq') return a[f.field] === f.value;
  if (f.op === 'range') return a[f.field] >= f.gte && a[f.field] < f.lt;
  return f.args.every((x) => naivePasses(x, a));
}

function naiveTopK(m: Naive, q: Float32Array, f: FilterExpr | null, k: number): { ids: number[]; matches: number } {
  const scored: [number, number][] = [];
  for (const [id, row] of m) {
    if (!naivePasses(f, row.attrs)) continue;
    let dot = 0;
    for (let j = 0; j < q.length; j++) dot += q[j] * row.v[j];
    scored.push([-dot, id]);
  }
  scored.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  return { ids: scored.slice(0, k).map((x) => x[1]), matches: scored.length };
}

describe('ground truth over a live set', () => {
  test('matches a naive search after deletes, inserts and upserts, at the current and at an older snapshot', () => {
    const ds = smallDataset();
    const { d } = ds;
    const store = new LiveStore(ds);
    store.load(0, ds.n);
    const naive: Naive = new Map();
    naivePut(naive, store.baseRows(Int32Array.from({ length: ds.n }, (_, i) => i)), d);
    const rng = makeRng(99);

    let v = store.nextVersion();
    const gone = store.drawLive(Math.round(0.3 * ds.n), rng);
    store.remove(gone, v);
    for (const id of gone) naive.delete(id);
    const afterDelete = v;
    const naiveAfterDelete: Naive = new Map(naive);

    v = store.nextVersion();
    const fresh = store.movedRows(store.takeNewIds(150), rng);
    store.put(fresh, v);
    naivePut(naive, fresh, d);

    v = store.nextVersion();
    const moved = store.movedRows(store.drawLive(80, rng), rng);
    store.put(moved, v);
    naivePut(naive, moved, d);

    v = store.nextVersion();
    const back = store.baseRows(gone.slice(0, 40));
    store.put(back, v, true);
    naivePut(naive, back, d);

    assert.equal(store.liveCount, naive.size);
    assert.deepEqual(
      [...store.liveIds()].sort((a, b) => a - b),
      [...naive.keys()].sort((a, b) => a - b),
    );

    const filters: (FilterExpr | null)[] = [
      null,
      { op: 'eq', field: 'cat10', value: 3 },
      { op: 'range', field: 'num', gte: 100_000, lt: 300_000 },
      {
        op: 'and',
        args: [
          { op: 'eq', field: 'cat10', value: 7 },
          { op: 'range', field: 'num', gte: 0, lt: 500_000 },
        ],
      },
    ];
    const nq = 24;
    const qf = Array.from({ length: nq }, (_, q) => filters[q % filters.length]);
    const k = 10;
    for (const [snapshot, model] of [
      [store.version, naive],
      [afterDelete, naiveAfterDelete],
    ] as const) {
      const truth = liveTruth(store, snapshot, ds.queries.subarray(0, nq * d), qf, k);
      for (let q = 0; q < nq; q++) {
        const want = naiveTopK(model, ds.queries.subarray(q * d, (q + 1) * d), qf[q], k);
        assert.deepEqual(Array.from(truth.ids.subarray(q * k, q * k + want.ids.length)), want.ids, `query ${q} at snapshot ${snapshot}`);
        assert.equal(truth.matches[q], want.matches, `matches of query ${q} at snapshot ${snapshot}`);
      }
    }
    // Deleted rows are absent, moved rows sit at their new vectors.
    const truth = liveTruth(store, store.version, moved.vectors.subarray(0, d), [null], 1);
    assert.equal(truth.ids[0], moved.ids[0], 'a moved row is its own nearest neighbour');
  });

  test('the truth of reads under writes, each at its own snapshot, equals an exact search at that snapshot', () => {
    const ds = smallDataset();
    const { d } = ds;
    const filters: (FilterExpr | null)[] = [null, { op: 'eq', field: 'cat10', value: 4 }, { op: 'range', field: 'num', gte: 0, lt: 200_000 }];
    const nq = 12;
    const qf = Array.from({ length: nq }, (_, q) => filters[q % filters.length]);
    const queries = ds.queries.slice(0, nq * d);
    for (const heavy of [false, true]) {
      const store = new LiveStore(ds);
      store.load(0, ds.n);
      const rng = makeRng(heavy ? 5 : 6);
      const k = 10;
      const truth = new SnapshotTruth(store, store.version, queries, qf, k);
      // Single-row writes like the mixed writer's; the heavy run deletes 90 % of the rows so
      // the kept top entries run out and the exact fallback is used.
      const ops = heavy ? 1400 : 300;
      for (let w = 0; w < ops; w++) {
        const v = store.nextVersion();
        const u = rng.uniform();
        if (heavy || u < 0.4) store.remove(store.drawLive(1, rng), v);
        else if (u < 0.8) store.put(store.movedRows(store.takeNewIds(1), rng), v);
        else store.put(store.movedRows(store.drawLive(1, rng), rng), v);
      }
      for (const s of [0, 1, 37, Math.floor(ops / 2), ops - 1, ops]) {
        const exact = liveTruth(store, s, queries, qf, k);
        for (let q = 0; q < nq; q++) {
          const got = truth.at(q, s);
          assert.deepEqual(
            Array.from(got.ids),
            Array.from(exact.ids.subarray(q * k, (q + 1) * k)),
            `query ${q} at snapshot ${s}${heavy ? ' (heavy deletes)' : ''}`,
          );
          assert.equal(got.matches[0], exact.matches[q], `matches of query ${q} at snapshot ${s}`);
        }
      }
      if (heavy) assert.ok(truth.fallbacks > 0, 'heavy deletes use the exact fallback');
      else assert.equal(truth.fallbacks, 0);
    }
  });

  test('a deleted id leaks only when its delete was acknowledged before the read and nothing brought it back', () => {
    const ds = smallDataset();
    const store = new LiveStore(ds);
    store.load(0, ds.n);
    const v1 = store.nextVersion();
    store.remove([5, 6], v1);
    const v2 = store.nextVersion();
    store.put(store.baseRows(Int32Array.of(6)), v2, true);
    assert.equal(store.leakVersion(5, v1 - 1, v1 - 1), 0, 'a read before the delete sees a live row');
    assert.equal(store.leakVersion(5, v1, v1), v1, 'a read after the delete leaks');
    assert.equal(store.leakVersion(6, v1, v1), v1, 'id 6 was deleted at v1');
    assert.equal(store.leakVersion(6, v1, v2), 0, 'a re-insert in flight during the read is not a leak');
    assert.equal(store.leakVersion(6, v2, v2), 0, 'a re-inserted id is live');
    assert.equal(store.leakVersion(7, v2, v2), 0, 'a row never deleted');
    assert.deepEqual(Array.from(store.deadIds()), [5]);
  });
});

// ---- real exact sessions, wrapped ----

let exact: LoadedParticipant;
before(async () => {
  exact = await loadParticipant('exact');
});

async function openExact(ds: Dataset): Promise<EngineSession> {
  const workDir = mkdtempSync(join(dir, 'exact-'));
  return exact.adapter.open({
    dataset: { name: ds.name, n: ds.n, d: ds.d, metric: ds.metric, hasText: false },
    settings: exact.index,
    workDir,
    maxConcurrency: 1,
    log: () => {},
  });
}

/** Forwards every method of a real session; `over` replaces some. */
function wrap(inner: EngineSession, over: Partial<EngineSession>): EngineSession {
  return {
    ingest: (b) => inner.ingest(b),
    buildIndex: () => inner.buildIndex(),
    setKnobs: (k) => inner.setKnobs(k),
    search: (r) => inner.search(r),
    insert: (b) => inner.insert!(b),
    delete: (ids) => inner.delete!(ids),
    diskBytes: () => inner.diskBytes!(),
    close: () => inner.close(),
    ...over,
  };
}

async function execute(rb: Runbook, ds: Dataset, session: EngineSession, dataDirs: string[] = []): Promise<RunbookResult> {
  const rr = newRunbookResult(rb, 'test');
  const exec = new RunbookExecutor(
    rb,
    ds,
    { name: 'exact', settings: exact.settings, filters: exact.adapter.filters, concurrentSearch: false },
    new LocalTarget(session, ds, false, dataDirs),
    capsOf(session),
    rr,
    () => {},
    { loadTimeoutS: 600, stepTimeoutS: 600 },
  );
  await exec.run();
  return rr;
}

describe('leak detector', () => {
  const rb = parseRunbook(
    {
      name: 'leak-check',
      seed: 5,
      steps: [
        { op: 'load' },
        { op: 'delete', share: 0.2 },
        { op: 'search', group: 'none/10', queries: 40 },
        { op: 'mixed', duration_s: 1, write_rate: 100, readers: 2, queries: 20, window_s: 0.5, recall_samples: 20 },
      ],
    },
    'leak-check',
  );

  test('catches a participant whose deletes forget ids, naming each id and the steps', async () => {
    const ds = smallDataset();
    const inner = await openExact(ds);
    const forgotten = new Set<number>();
    let calls = 0;
    // Every third deleted id is acknowledged but never deleted.
    const leaky = wrap(inner, {
      delete: async (ids) => {
        const kept = ids.filter((id) => {
          if (calls++ % 3 !== 0) return true;
          forgotten.add(id);
          return false;
        });
        await inner.delete!(kept);
      },
    });
    const rr = await execute(rb, ds, leaky);
    assert.equal(rr.status, 'measured', rr.reason);
    assert.ok(rr.leaks.total > 0, 'leaks found');
    assert.ok(rr.leaks.listed.length > 0 && rr.leaks.listed.length <= 100);
    for (const leak of rr.leaks.listed) {
      assert.ok(forgotten.has(leak.id), `leaked id ${leak.id} is one the wrapper forgot`);
      assert.ok(leak.step === 3 || leak.step === 4, `leak found by the search or mixed step (step ${leak.step})`);
      assert.ok(leak.deleted_in_step === 2 || leak.deleted_in_step === 4, `deleted by step 2 or 4 (${leak.deleted_in_step})`);
      assert.equal(typeof leak.query, 'number');
    }
    const search = rr.steps[2].search!;
    assert.ok(search.leaks > 0, 'the search step counts its leaks');
    assert.ok(search.unknown_ids > 0, 'a leaked id is not credited');
    assert.ok(search.recall !== null && search.recall < 1, 'leaked ids cost recall');
    const row = deriveChurn([resultWith(ds, rr)])[0];
    assert.equal(row.tombstone_leak, rr.leaks.total);
    await inner.close();
  });

  test('finds no leak in the same runbook on the unwrapped participant', async () => {
    const ds = smallDataset();
    const session = await openExact(ds);
    const rr = await execute(rb, ds, session);
    assert.equal(rr.status, 'measured', rr.reason);
    assert.equal(rr.leaks.total, 0);
    const search = rr.steps[2].search!;
    assert.equal(search.recall, 1, 'exact search on the live set has recall 1');
    assert.equal(search.unknown_ids, 0);
    const mixed = rr.steps[3].mixed!;
    assert.ok(mixed.reads > 0 && mixed.recall_samples > 0);
    assert.equal(mixed.min_recall, 1, 'exact reads under writes, each judged at its own snapshot, have recall 1');
    assert.ok(mixed.writes.insert + mixed.writes.delete > 0);
    await session.close();
  });
});

/** A result file around one runbook result, for the report derivation. */
function resultWith(ds: Dataset, rr: RunbookResult) {
  return {
    format: 'vecbench-result/1' as const,
    participant: 'exact',
    engine: 'e',
    engine_version: 'v',
    origin: 'measured' as const,
    dataset: { name: ds.name, n: ds.n, d: ds.d, nq: ds.nq, metric: ds.metric, hash: ds.hash },
    settings: { index: {}, ladders: [] },
    filter_strategy: '',
    hardware: { cpu: '', cores: 1, memory_bytes: 1, os: '', node: '' },
    run: { vecbench_version: '0', started: '', updated: '', query_seed: 1, clients: 1, complete: false, resumed: 0 },
    load: null,
    groups: [],
    extra: { churn: { format: 'vecbench-churn/1', runbooks: { [rr.runbook]: rr } } },
  };
}

describe('freshness timing', () => {
  const DELAY_MS = 50;
  const rb = parseRunbook({ name: 'fresh-check', seed: 2, steps: [{ op: 'load' }, { op: 'freshness', writes: 20, point: 'first' }] }, 'fresh-check');

  test(`an engine that shows writes ${DELAY_MS} ms after the ack reads p50 >= ${DELAY_MS} ms and close to it`, async () => {
    const ds = smallDataset();
    const inner = await openExact(ds);
    const visibleAt = new Map<number, number>();
    const delayed = wrap(inner, {
      insert: async (b) => {
        await inner.insert!(b);
        for (const id of b.ids) visibleAt.set(id, performance.now() + DELAY_MS);
      },
      search: async (r: SearchRequest) => {
        const now = performance.now();
        const hidden = [...visibleAt].filter(([, t]) => t > now).map(([id]) => id);
        const hits = Array.from(await inner.search({ ...r, k: r.k + hidden.length }));
        return hits.filter((id) => !hidden.includes(id)).slice(0, r.k);
      },
    });
    const rr = await execute(rb, ds, delayed);
    assert.equal(rr.status, 'measured', rr.reason);
    const f = rr.steps[1].freshness!;
    assert.equal(f.issued, 20);
    assert.equal(f.never_visible, 0);
    assert.ok(f.visible_ms !== null);
    assert.ok(f.visible_ms.p50 >= DELAY_MS, `p50 ${f.visible_ms.p50} ms >= ${DELAY_MS}`);
    assert.ok(f.visible_ms.p50 < DELAY_MS + 100, `p50 ${f.visible_ms.p50} ms is close to ${DELAY_MS}`);
    assert.ok(f.polls > 20, 'the routine polled more than once per write');
    await inner.close();
  });

  test('the same engine without the delay reads p50 below the delay, and a write that never shows is counted', async () => {
    const ds = smallDataset();
    const inner = await openExact(ds);
    const rr = await execute(rb, ds, inner);
    const f = rr.steps[1].freshness!;
    assert.equal(f.never_visible, 0);
    assert.ok(f.visible_ms !== null && f.visible_ms.p50 < DELAY_MS, `p50 ${f.visible_ms?.p50} ms`);

    // An engine that acknowledges inserts and never applies them: never visible, then give up.
    const ds2 = smallDataset();
    const inner2 = await openExact(ds2);
    const blackHole = wrap(inner2, { insert: async () => {} });
    const rb2 = parseRunbook(
      { name: 'never', steps: [{ op: 'load' }, { op: 'freshness', writes: 10, timeout_ms: 30, give_up_after: 3, point: 'first' }] },
      'never',
    );
    const rr2 = await execute(rb2, ds2, blackHole);
    const f2 = rr2.steps[1].freshness!;
    assert.equal(f2.issued, 3, 'stops after 3 writes never visible in a row');
    assert.equal(f2.never_visible, 3);
    assert.equal(f2.gave_up, true);
    assert.equal(f2.visible_ms, null);
  });
});

describe('reads under writes', () => {
  test('a writer that cannot keep up with its rate does not starve the readers of an engine that never yields', async () => {
    const ds = smallDataset();
    const inner = await openExact(ds);
    // Writes that take 12 ms of synchronous work resolve in microtasks (like a WASM engine):
    // at 150 writes/s the writer is always behind schedule.
    const busy = (ms: number) => {
      const until = performance.now() + ms;
      while (performance.now() < until);
    };
    const slow = wrap(inner, {
      insert: async (b) => {
        busy(12);
        await inner.insert!(b);
      },
      delete: async (ids) => {
        busy(12);
        await inner.delete!(ids);
      },
    });
    const rb = parseRunbook(
      {
        name: 'slow-writer',
        steps: [{ op: 'load' }, { op: 'mixed', duration_s: 1, write_rate: 150, window_s: 0.5, queries: 20, recall_samples: 10, point: 'first' }],
      },
      'slow-writer',
    );
    const rr = await execute(rb, ds, slow);
    const m = rr.steps[1].mixed!;
    assert.ok(m.achieved_write_rate < 150, `the writer fell behind (${m.achieved_write_rate}/s)`);
    for (const w of m.timeline) {
      assert.ok(w.read_qps > 0, `reads in the window at ${w.t_s} s`);
      assert.ok(w.write_rate > 0, `writes in the window at ${w.t_s} s`);
    }
    assert.equal(m.min_recall, 1);
    await inner.close();
  });
});

describe('capabilities', () => {
  test('a step the participant cannot do is unsupported with the reason; no write method at all makes it unsupported', async () => {
    const ds = smallDataset();
    const session = await openExact(ds);
    const rb = parseRunbook(
      {
        name: 'caps',
        steps: [
          { op: 'load' },
          { op: 'upsert', share: 0.1 },
          { op: 'wait' },
          { op: 'mixed', duration_s: 0.2, mix: { upsert: 1 } },
          { op: 'search', group: 'none/1000' },
          { op: 'disk' },
        ],
      },
      'caps',
    );
    const rr = await execute(rb, ds, session);
    assert.equal(rr.status, 'measured');
    const status = rr.steps.map((s) => `${s.op}:${s.status}`);
    assert.deepEqual(status, ['load:done', 'upsert:unsupported', 'wait:unsupported', 'mixed:unsupported', 'search:done', 'disk:done']);
    assert.match(rr.steps[1].reason!, /no upsert\(\)/);
    assert.match(rr.steps[2].reason!, /no compact\(\)/);
    assert.match(rr.steps[3].reason!, /mix has upsert/);
    assert.equal(rr.steps[4].search!.recall, 1);

    assert.ok(rr.steps[5].disk!.bytes! > 0, 'the engine counts its own bytes');
    assert.equal(rr.steps[5].disk!.dir_bytes, null, 'no data directory known to the harness');

    // Without diskBytes() the harness measures the data directories it knows (st_blocks), and
    // with neither the disk step is unsupported.
    const fresh = await openExact(ds);
    const noDisk = wrap(fresh, { diskBytes: undefined });
    const dataDir = mkdtempSync(join(dir, 'engine-data-'));
    writeFileSync(join(dataDir, 'segment.bin'), Buffer.alloc(64 * 1024, 1));
    const diskOnly = parseRunbook({ name: 'disk-only', steps: [{ op: 'load', rows: [0, 10] }, { op: 'disk' }] }, 'disk-only');
    const measured = (await execute(diskOnly, ds, noDisk, [dataDir])).steps[1];
    assert.equal(measured.status, 'done');
    assert.equal(measured.disk!.bytes, null);
    assert.ok(measured.disk!.dir_bytes! >= 64 * 1024, `dir_bytes ${measured.disk!.dir_bytes}`);
    const none = (await execute(diskOnly, ds, noDisk)).steps[1];
    assert.equal(none.status, 'unsupported');
    assert.match(none.reason!, /no diskBytes\(\) and the harness knows no data directory/);
    await fresh.close();

    const readOnly: EngineSession = {
      ingest: (b) => session.ingest(b),
      buildIndex: async () => {},
      setKnobs: async () => {},
      search: (r) => session.search(r),
      close: async () => {},
    };
    const caps = capsOf(readOnly);
    assert.deepEqual(caps, { insert: false, upsert: false, delete: false, compact: false, disk: false });
    assert.match(unsupportedReason(caps, 'some engine') ?? '', /implements no write method/);
    assert.equal(unsupportedReason(capsOf(session), 'exact'), null);
  });
});

describe('runbooks', () => {
  const bad = (raw: unknown) => {
    try {
      parseRunbook(raw, 'bad.json');
    } catch (e) {
      assert.ok(e instanceof UserError, 'a user error');
      return (e as Error).message;
    }
    assert.fail('the runbook was accepted');
  };

  test('errors name the step, its op and the field', () => {
    assert.equal(bad({ name: 'x', steps: [{ op: 'load' }, { op: 'delete', share: 2 }] }), 'runbook bad.json: step 2 (delete): share: must be <= 1');
    assert.match(bad({ name: 'x', steps: [{ op: 'load' }, { op: 'shuffle' }] }), /^runbook bad\.json: step 2: unknown op "shuffle"; the ops are load, insert/);
    assert.match(bad({ name: 'x', steps: [{ op: 'insert', rows: [0, 10], new: 5 }] }), /step 1 \(insert\): give exactly one of rows, new, new_share/);
    assert.match(bad({ name: 'x', steps: [{ op: 'insert', rows: [10, 5] }] }), /step 1 \(insert\): rows: write rows as \[from, to\)/);
    assert.match(bad({ name: 'x', steps: [{ op: 'search', group: 'none/7' }] }), /step 1 \(search\): group: bad group "none\/7"/);
    assert.match(bad({ name: 'x', steps: [{ op: 'mixed', readers: 2, speed: 3 }] }), /step 1 \(mixed\): .*speed/);
    assert.match(bad({ name: 'x', steps: [{ op: 'search' }, { op: 'load' }] }), /step 2 \(load\): load must be the first step/);
    assert.match(bad({ name: 'x', steps: [] }), /steps: a runbook needs at least one step/);
    assert.match(bad({ name: 'Bad Name', steps: [{ op: 'load' }] }), /name:/);
    const rb = parseRunbook({ name: 'x', steps: [{ op: 'delete', rows: [0, 5000] }] }, 'x');
    assert.throws(() => checkRunbookRows(rb, 3000, 'synthetic-3000'), /step 2 \(delete\): rows \[0, 5000\) go past the 3000 rows of synthetic-3000/);
  });

  test('a load step is added when missing; built-ins keep the defaults of docs/method.md §7', () => {
    const rb = parseRunbook({ name: 'x', steps: [{ op: 'search' }] }, 'x');
    assert.deepEqual(
      rb.steps.map((s) => s.op),
      ['load', 'search'],
    );
    const mixed = BUILT_IN.mixed.steps.find((s) => s.op === 'mixed');
    assert.ok(mixed && mixed.op === 'mixed');
    assert.equal(mixed.duration_s, 60);
    assert.equal(mixed.write_rate, 150);
    assert.equal(mixed.readers, 6);
    const fresh = BUILT_IN.freshness.steps.find((s) => s.op === 'freshness');
    assert.ok(fresh && fresh.op === 'freshness' && fresh.writes === 150);
    const ops = BUILT_IN['delete-reinsert'].steps.map((s) => s.op);
    assert.deepEqual(ops, ['load', 'search', 'disk', 'delete', 'insert', 'search', 'search', 'wait', 'search', 'search', 'disk']);
    assert.throws(() => loadRunbook('no-such-runbook'), /neither a built-in runbook \(freshness, mixed, delete-reinsert\) nor a file/);
    const file = join(dir, 'broken.json');
    writeFileSync(file, '{"name": "x", "steps": [');
    assert.throws(() => loadRunbook(file), /runbook .*broken\.json: not valid JSON/);
  });
});

// ---- real engines, through the command line and their host processes ----

const ENGINES: Record<string, ShortRunExpect> = {
  exact: { minRecall: 1, minMixedRecall: 1 },
  hnswlib: { minRecall: 0.85, minMixedRecall: 0.8 },
  usearch: { minRecall: 0.85, minMixedRecall: 0.8 },
  lancedb: { minRecall: 0.85, minMixedRecall: 0.8 },
  'pgvector-pglite': { minRecall: 0.85, minMixedRecall: 0.8 },
};
const NAMES = Object.keys(ENGINES);

describe('real engines through a short runbook', () => {
  const data = join(dir, 'data');
  const out = join(dir, 'results');
  const runbookFile = join(dir, 'short.json');
  const vecbench = (...args: string[]) => {
    const r = spawnSync(process.execPath, [BIN, ...args], {
      encoding: 'utf8',
      env: { ...process.env, VECBENCH_QUIET: '1', VECBENCH_DATA: data },
      timeout: 1_200_000,
    });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };

  test(`${NAMES.join(', ')}: freshness, reads under writes, delete + reinsert, no leaks, and the report`, () => {
    writeFileSync(runbookFile, JSON.stringify(SHORT_RUNBOOK));
    const r = vecbench('churn', '--dataset', 'synthetic-3000', '--participants', NAMES.join(','), '--runbook', runbookFile, '--out', out);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /synthetic-3000: live churn/);
    assert.match(r.stdout, /recall under writes, per 1 s window/);
    checkShortRun(out, 'synthetic-3000', 3000, ENGINES);
    // Engine output goes to a log per participant, named on the terminal, not into the table.
    for (const name of NAMES) {
      const logFile = join(out, 'logs', 'synthetic-3000', `${name}.churn.log`);
      assert.ok(existsSync(logFile), `${name}: no engine log ${logFile}`);
    }
    // Beside the engine's own count, the harness measures the host's work directory (the data
    // directory of an in-process engine): LanceDB keeps its table there.
    for (const name of NAMES) {
      const rr = JSON.parse(readFileSync(join(out, 'synthetic-3000', `${name}.json`), 'utf8')).extra.churn.runbooks.short;
      for (const i of [2, 12]) assert.equal(typeof rr.steps[i].disk.dir_bytes, 'number', `${name}: ${JSON.stringify(rr.steps[i].disk)}`);
      if (name === 'lancedb') assert.ok(rr.steps[12].disk.dir_bytes > 0);
      assert.equal(rr.steps[7].status, name === 'exact' ? 'unsupported' : 'done', `${name}: upsert ${rr.steps[7].reason ?? ''}`);
    }

    // Churn's engines kept their data in the participants' engine homes, removed when each
    // runbook ended: nothing is left under --out but results and logs.
    assert.ok(!existsSync(join(out, '.engines')), 'engine data left in <out>/.engines');
    assert.ok(!existsSync(join(out, '.work')), 'the layout before engine homes (<out>/.work) is not used');

    const rep = vecbench('report', '--out', out, '--json');
    assert.equal(rep.code, 0, rep.stderr);
    const { churn } = JSON.parse(rep.stdout);
    checkReportChurn(churn, 'synthetic-3000', NAMES);
    const text = vecbench('report', '--out', out);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /live churn/);

    // A finished runbook is not run again for the same runbook, settings and data; another
    // settings file (--settings) runs it again.
    const again = spawnSync(
      process.execPath,
      [BIN, 'churn', '--dataset', 'synthetic-3000', '--participants', 'exact', '--runbook', runbookFile, '--out', out],
      { encoding: 'utf8', env: { ...process.env, VECBENCH_DATA: data } },
    );
    assert.equal(again.status, 0, again.stderr);
    assert.match(again.stderr, /exact: runbook short already measured on synthetic-3000; pass --fresh/);
    const settings = JSON.parse(readFileSync(exact.settingsPath, 'utf8'));
    const other = join(dir, 'exact-settings.json');
    writeFileSync(other, JSON.stringify({ ...settings, batch_size: 700 }));
    // What a killed churn run left in the engine home goes at the participant's next churn.
    const left = join(out, '.engines', 'synthetic-3000', 'exact', 'churn', 'runbook-left');
    mkdirSync(left, { recursive: true });
    writeFileSync(join(left, 'rows.bin'), 'x');
    const changed = spawnSync(
      process.execPath,
      [BIN, 'churn', '--dataset', 'synthetic-3000', '--participants', 'exact', '--settings', `exact=${other}`, '--runbook', runbookFile, '--out', out],
      { encoding: 'utf8', env: { ...process.env, VECBENCH_QUIET: '1', VECBENCH_DATA: data } },
    );
    assert.equal(changed.status, 0, changed.stderr);
    assert.doesNotMatch(changed.stderr, /already measured/);
    assert.ok(!existsSync(join(out, '.engines')), 'the engine data a killed churn left is removed');
    const rr = JSON.parse(readFileSync(join(out, 'synthetic-3000', 'exact.json'), 'utf8')).extra.churn.runbooks.short;
    assert.equal(rr.status, 'measured');
    assert.equal(rr.settings.batch_size, 700, 'the runbook ran with the other settings file');
  });

  test('a bad runbook file is one line naming the step and exits 2', () => {
    const file = join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify({ name: 'bad', steps: [{ op: 'load' }, { op: 'delete', share: 1.5 }] }));
    const r = vecbench('churn', '--dataset', 'synthetic-3000', '--participants', 'exact', '--runbook', file, '--out', out);
    assert.equal(r.code, 2);
    assert.equal(r.stderr.trim(), 'vecbench: runbook bad.json: step 2 (delete): share: must be <= 1');
  });
});
