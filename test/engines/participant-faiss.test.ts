// faiss participant, end to end on the harness's small synthetic set (the real libfaiss through
// participants/faiss/native), for each index type its settings files name: HNSW (settings.json),
// IVFFlat and IVFPQ with refine (ivfflat / ivfpq.settings.json), and IVFPQ searched from its files
// (participants/faiss-disk, storage disk). The contract suite runs on the
// HNSW load (settings.json, what it checks): its reads first, the tests here, then its writes
// and reopen, then the writes test here (on the index the suite's reopen left).
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { EngineSession, FilterExpr, RowAttributes, RowBatch } from '../../src/contracts.ts';
import { ATTRIBUTES } from '../../src/contracts.ts';
import { filterKind, passes } from '../../src/datasets/groups.ts';
import { ladderFor, loadParticipant, PARTICIPANTS_DIR } from '../../src/runner/participants.ts';
import { UserError } from '../../src/util/errors.ts';
import { prepareDataset } from '../../src/prepare/registry.ts';
import { HostClient } from '../../src/runner/client.ts';
import { evictPageCache, haveVmtouch, residentBytes } from '../../src/runner/page-cache.ts';
import type { PointReply } from '../../src/runner/point-reply.ts';
import { ADDON, autoNlist, autoPqM, filterClauses } from '../../participants/faiss/adapter.ts';
import { CONTRACT_QUERIES, CONTRACT_ROWS, contractInserts, contractSuite } from '../contract/suite.ts';
import { checkLadder, openOnSynthetic } from '../helpers/participant-harness.ts';

type Opened = Awaited<ReturnType<typeof openOnSynthetic>>;

const VARIANTS = [
  { name: 'faiss', type: 'hnsw', settingsPath: undefined, topRecall: 0.95, filteredRecall: 0.9, disk: false },
  { name: 'faiss', type: 'ivfflat', settingsPath: 'participants/faiss/ivfflat.settings.json', topRecall: 0.95, filteredRecall: 0.95, disk: false },
  { name: 'faiss', type: 'ivfpq', settingsPath: 'participants/faiss/ivfpq.settings.json', topRecall: 0.9, filteredRecall: 0.9, disk: false },
  { name: 'faiss-disk', type: 'ivfpq', settingsPath: undefined, topRecall: 0.9, filteredRecall: 0.9, disk: true },
] as const;

function rows(opened: Opened, ids: number[], idsAs?: number[]): RowBatch {
  const { data } = opened;
  const d = data.d;
  const vectors = new Float32Array(ids.length * d);
  ids.forEach((id, i) => vectors.set(data.base.subarray(id * d, (id + 1) * d), i * d));
  const attrs = Object.fromEntries(ATTRIBUTES.map((a) => [a, Int32Array.from(ids, (id) => data.attrs[a][id])])) as RowAttributes;
  return { ids: Int32Array.from(idsAs ?? ids), vectors, attrs };
}

const vectorOf = (opened: Opened, id: number) => opened.data.base.slice(id * opened.data.d, (id + 1) * opened.data.d);

/** Every query's ids at the top ladder point of (filter, 10). */
async function answers(opened: Opened, filter: string): Promise<number[][]> {
  const { data, participant, session } = opened;
  const ladder = ladderFor(participant.settings, filter, 10);
  await session.setKnobs(ladder[ladder.length - 1]);
  const kind = filterKind(filter);
  const out: number[][] = [];
  for (let q = 0; q < data.nq; q++) {
    out.push(Array.from(await session.search({ vector: data.queries.slice(q * data.d, (q + 1) * data.d), k: 10, filter: kind.forQuery(q, data.queryAttrs) })));
  }
  return out;
}

for (const v of VARIANTS) {
  /** The variant of settings.json: the engine the contract suite checks, on this load. */
  const shared = v.name === 'faiss' && v.settingsPath === undefined;
  describe(`${v.name} ${v.type}`, () => {
    let opened: Opened;
    let reopened: EngineSession | undefined;
    before(async () => {
      opened = await openOnSynthetic(await loadParticipant(v.name, v.settingsPath), { n: CONTRACT_ROWS, nq: CONTRACT_QUERIES });
      assert.equal((opened.participant.index as { type: string }).type, v.type);
    });
    after(async () => {
      await reopened?.close();
      await opened?.cleanup();
    });
    /** A session on the index a closed session left in workDir, without ingest. */
    const reopenIndex = () => {
      const { data, participant, workDir } = opened;
      return participant.adapter.reopen!({
        dataset: { name: 'synthetic-test', n: data.n, d: data.d, metric: data.metric, hasText: false },
        settings: participant.index,
        workDir,
        maxConcurrency: 1,
        log: () => {},
      });
    };

    if (shared) contractSuite('faiss', join(PARTICIPANTS_DIR, 'faiss'), { shared: () => opened, part: 'reads' });

    test(`unfiltered k=10 reaches recall >= ${v.topRecall} at the top and rises along the ladder`, async () => {
      const pts = await checkLadder(opened, 'none', 10);
      assert.ok(pts.length >= 5, 'ladder has points');
      for (let i = 1; i < pts.length; i++) {
        // IVFPQ's ladder is k_factor x nprobe: recall rises along nprobe within one k_factor.
        if (v.type === 'ivfpq' && pts[i].knobs.k_factor !== pts[i - 1].knobs.k_factor) continue;
        assert.ok(pts[i].recall >= pts[i - 1].recall - 0.02, `recall falls at ${JSON.stringify(pts[i].knobs)}`);
      }
      const top = pts[pts.length - 1];
      assert.ok(top.recall >= v.topRecall, `top recall ${top.recall} at ${JSON.stringify(top.knobs)}`);
      for (const p of pts) assert.equal(p.unknownOrDuplicate, 0);
    });

    for (const filter of ['cat10', 'cat100', 'num1', 'cat10+num10', 'lang', 'farcluster']) {
      test(`filter ${filter} at k=10: never violated, recall >= ${v.filteredRecall} at the top`, async () => {
        const pts = await checkLadder(opened, filter, 10);
        assert.ok(pts.length > 0);
        for (const p of pts) {
          assert.equal(p.violations, 0, `violations at ${JSON.stringify(p.knobs)}`);
          assert.equal(p.unknownOrDuplicate, 0, `unknown or duplicate ids at ${JSON.stringify(p.knobs)}`);
        }
        const top = pts[pts.length - 1];
        assert.ok(top.recall >= v.filteredRecall, `${filter} top recall ${top.recall} at ${JSON.stringify(top.knobs)}`);
      });
    }

    test('k=100 works, unfiltered and with cat10', async () => {
      for (const filter of ['none', 'cat10']) {
        const pts = await checkLadder(opened, filter, 100);
        const top = pts[pts.length - 1];
        assert.equal(top.violations, 0);
        assert.equal(top.unknownOrDuplicate, 0);
        assert.ok(top.recall >= 0.9, `${filter}/100 top recall ${top.recall}`);
      }
    });

    test('a query given as a view into a larger buffer is read from its own offset; k above the index size is capped', async () => {
      const { session, data, participant } = opened;
      const ladder = ladderFor(participant.settings, 'none', 10);
      await session.setKnobs(ladder[ladder.length - 1]);
      for (const id of [1, 777, 2500]) {
        const view = data.base.subarray(id * data.d, (id + 1) * data.d);
        const got = Array.from(await session.search({ vector: view, k: 5, filter: null }));
        assert.equal(got[0], id, `searching row ${id} through a subarray found ${got}`);
      }
      const all = Array.from(await session.search({ vector: vectorOf(opened, 0), k: data.n + 500, filter: null }));
      assert.ok(all.length <= data.n, `got ${all.length}`);
      assert.equal(new Set(all).size, all.length);
      const f: FilterExpr = { op: 'eq', field: 'cat1000', value: data.attrs.cat1000[0] };
      const few = Array.from(await session.search({ vector: vectorOf(opened, 0), k: 10, filter: f }));
      assert.ok(few.length <= 10 && few[0] === 0, `got ${few}`);
      for (const id of few) assert.ok(passes(f, data.attrs, id));
    });

    if (v.disk)
      test('storage disk: the lists and the vectors are files, searched memory-mapped once saved', async () => {
        const { session, workDir, data } = opened;
        for (const f of ['faiss.disk.index', 'faiss.ivfdata', 'faiss.vectors.f32']) assert.ok(existsSync(join(workDir, f)), `${f} in ${workDir}`);
        assert.ok(!existsSync(join(workDir, 'faiss.index')), 'no in-memory index file beside the disk form');
        const plan = await session.explain!({ vector: vectorOf(opened, 0), k: 10, filter: null });
        assert.match(plan, /re-ranking from the vectors file \(memory-mapped\)/);
        assert.ok((await session.diskBytes!()) >= data.n * data.d * 4, 'the vectors file holds every row');
      });

    test('a pass timed in C++ (timedPass) answers each request as search() does, with a latency per query', async () => {
      const { session, data, participant } = opened;
      assert.ok(session.timedPass, 'faiss times its passes in C++');
      const ladder = ladderFor(participant.settings, 'cat10', 10);
      await session.setKnobs(ladder[ladder.length - 1]);
      const n = Math.min(40, data.nq);
      const group = (name: string) => Array.from({ length: n }, (_, q) => filterKind(name).forQuery(q, data.queryAttrs) as FilterExpr | null);
      // Unfiltered, a query group's filters (the same fields, each query's own values), and fields
      // that differ within a pass (searched one at a time from JavaScript).
      for (const filters of [group('none'), group('cat10'), group('cat10+num10'), group('cat100').map((f, q) => (q % 2 ? null : f))]) {
        const requests = filters.map((filter, q) => ({ vector: data.queries.slice(q * data.d, (q + 1) * data.d), k: 10, filter }));
        const pass = await session.timedPass(requests, 1);
        assert.equal(pass.results.length, n);
        assert.ok(pass.errors.every((e) => e === null));
        for (let q = 0; q < n; q++) {
          assert.ok(pass.latenciesMs[q] > 0 && pass.latenciesMs[q] < 1000, `latency ${pass.latenciesMs[q]} ms`);
          assert.deepEqual(Array.from(pass.results[q]), Array.from(await session.search(requests[q])), `query ${q}, filter ${JSON.stringify(filters[q])}`);
          if (filters[q]) for (const id of Array.from(pass.results[q])) assert.ok(passes(filters[q]!, data.attrs, id));
        }
      }
    });

    // The suite's write checks and its reopen, which closes the session: before the writes test
    // here, which closes it too.
    if (shared) contractSuite('faiss', join(PARTICIPANTS_DIR, 'faiss'), { shared: () => opened, part: 'writes' });

    test('writes: deleted ids never come back; reinserted, replaced and new ids are found; reopen keeps it all without ingest', async () => {
      // After the suite's reopen check closed the loaded session, these writes go to a session
      // reopened, without ingest, on the index that check left.
      if (shared) opened.session = reopened = await reopenIndex();
      const { session, data, participant } = opened;
      assert.ok(session.delete && session.insert && session.upsert);
      const ladder = ladderFor(participant.settings, 'none', 10);
      await session.setKnobs(ladder[ladder.length - 1]);
      const victims = [3, 17, 256, 1024, 2047, 2999];
      // The base row whose vector and attributes an id holds (new ids copy base rows; the rows
      // the suite inserted hold the attributes of base rows).
      const source = new Map<number, number>(shared ? contractInserts(true).map((r) => [r.id, r.attrsOf]) : []);
      const sourceOf = (id: number) => source.get(id) ?? id;
      await session.delete(Int32Array.from(victims));
      const checkGone = async (s: typeof session) => {
        for (const id of victims) {
          const got = Array.from(await s.search({ vector: vectorOf(opened, id), k: 10, filter: null }));
          assert.equal(got.length, 10);
          for (const x of victims) assert.ok(!got.includes(x), `deleted id ${x} returned`);
          const f: FilterExpr = { op: 'eq', field: 'cat10', value: data.attrs.cat10[id] };
          const gotF = Array.from(await s.search({ vector: vectorOf(opened, id), k: 10, filter: f }));
          for (const x of victims) assert.ok(!gotF.includes(x), `deleted id ${x} returned under a filter`);
          for (const x of gotF) assert.ok(passes(f, data.attrs, sourceOf(x)), `row ${x} fails the filter`);
        }
      };
      await checkGone(session);
      const fresh = Array.from({ length: 40 }, (_, i) => data.n + i);
      const sources = fresh.map((_, i) => 100 + i * 7);
      await session.insert(rows(opened, sources, fresh));
      fresh.forEach((id, i) => source.set(id, sources[i]));
      for (let i = 0; i < fresh.length; i += 9) {
        const got = Array.from(await session.search({ vector: vectorOf(opened, sources[i]), k: 10, filter: null }));
        assert.ok(got.includes(fresh[i]), `new id ${fresh[i]} not found`);
      }
      // Upsert of a live row replaces it: id 5 takes row 9's vector (and row 9's attributes).
      await session.upsert(rows(opened, [9], [5]));
      source.set(5, 9);
      const got = Array.from(await session.search({ vector: vectorOf(opened, 9), k: 2, filter: null }));
      assert.deepEqual(
        [...got].sort((a, b) => a - b),
        [5, 9],
      );
      const old = Array.from(await session.search({ vector: vectorOf(opened, 5), k: 10, filter: null }));
      assert.ok(old[0] !== 5, 'the old vector of id 5 is gone');
      assert.ok((await session.diskBytes!()) > data.n * data.d * 4, 'the saved index holds the float vectors');
      // Reopen: what the closed session held, read from workDir, no ingest.
      const before = { none: await answers(opened, 'none'), cat10: await answers(opened, 'cat10') };
      if (shared) await session.close();
      else await opened.stopKeepingData();
      const again = await reopenIndex();
      opened.session = again;
      reopened = again;
      assert.deepEqual(await answers(opened, 'none'), before.none, 'unfiltered answers after reopen');
      assert.deepEqual(await answers(opened, 'cat10'), before.cat10, 'cat10 answers after reopen');
      await again.setKnobs(ladder[ladder.length - 1]);
      await checkGone(again);
      const found = Array.from(await again.search({ vector: vectorOf(opened, sources[0]), k: 10, filter: null }));
      assert.ok(found.includes(fresh[0]), 'an inserted id survives reopen');
      if (v.disk) {
        // Reopened from its files: nothing in memory to write into, said in one line.
        await assert.rejects(again.insert!(rows(opened, victims)), /reopened from its disk form \(storage: disk\), which takes no writes/);
        await assert.rejects(again.delete!(Int32Array.of(1)), /takes no writes/);
        return;
      }
      // A removed row can be inserted again after reopen.
      await again.insert!(rows(opened, victims));
      for (const id of victims) {
        const top = Array.from(await again.search({ vector: vectorOf(opened, id), k: 10, filter: null }));
        assert.equal(top[0], id, `reinserted id ${id} is not its own top hit (got ${top})`);
      }
    });
  });
}

describe('faiss in the participant host, searched from worker threads', () => {
  const DATASET = 'synthetic-2000';
  const LIMIT_S = 240;
  let root: string;
  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'vecbench-faiss-threads-'));
    await prepareDataset(join(root, 'data'), DATASET, { groundTruth: false });
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  for (const v of VARIANTS.slice(0, 2)) {
    test(`${v.type}: two threads (each a reopened index) answer as one at a time, filtered too`, { timeout: 300_000 }, async () => {
      const host = new HostClient('faiss');
      const settingsPath = v.settingsPath && resolve(v.settingsPath);
      try {
        const base = { participant: 'faiss', settingsPath, dataDir: join(root, 'data'), dataset: DATASET, maxConcurrency: 2 };
        await host.request<'opened'>({ type: 'open', ...base, workDir: mkdtempSync(join(root, `${v.type}-`)) }, LIMIT_S);
        await host.request<'loaded'>({ type: 'load', batchSize: 1000 }, LIMIT_S);
        const queries = Array.from({ length: 600 }, (_, i) => i % 200);
        const cat: FilterExpr = { op: 'eq', field: 'cat10', value: 4 };
        for (const [knobs, filter] of [
          [v.type === 'hnsw' ? { efSearch: 32 } : { nprobe: 8 }, null],
          [v.type === 'hnsw' ? { efSearch: 256 } : { nprobe: 16 }, cat],
        ] as const) {
          const point = async (threads: number): Promise<PointReply> =>
            (await host.request<'point'>({ type: 'point', knobs, k: 10, queries, filters: queries.map(() => filter), clients: 1, threads }, LIMIT_S)).reply;
          const one = await point(1);
          const two = await point(2);
          assert.equal(one.threadsUsed, undefined);
          assert.equal(two.threadsUsed?.length, 2, 'ran in two search threads');
          for (const [t, c] of two.threadsUsed!.entries()) assert.ok(c > 0, `thread ${t} answered no query`);
          assert.ok(
            two.errors.every((e) => e === null),
            `errors: ${two.errors.find((e) => e !== null)}`,
          );
          for (let i = 0; i < queries.length; i++) assert.equal(two.digests![i], one.digests![i], `query ${i}: threaded answer differs`);
          if (filter === null) assert.equal(one.ids.length, queries.length * 10, 'full answers');
          else assert.ok(one.ids.length > queries.length * 9, `filtered answers nearly full (${one.ids.length})`);
        }
      } finally {
        await host.close();
      }
    });
  }
});

describe('faiss settings and errors', () => {
  test('a bad index setting is rejected with a path naming the field', async () => {
    const p = await loadParticipant('faiss');
    for (const [bad, field] of [
      [{ type: 'flat' }, 'type'],
      [{ M: 1.5 }, 'M'],
      [{ nlist: -1 }, 'nlist'],
      [{ efSearch: 10 }, ''],
    ] as const) {
      const r = p.adapter.settingsSchema.safeParse(bad);
      assert.equal(r.success, false, JSON.stringify(bad));
      if (field) assert.deepEqual(r.error!.issues[0].path, [field]);
    }
    assert.equal(await p.adapter.engineVersion(), '1.7.3');
  });

  test('pq_m that does not divide d is refused before any work, in one line', async () => {
    const p = await loadParticipant('faiss', 'participants/faiss/ivfpq.settings.json');
    const dataset = { name: 'synthetic-test', n: 100, d: 100, metric: 'ip' as const, hasText: false };
    const settings = p.adapter.settingsSchema.parse({ type: 'ivfpq', pq_m: 16 });
    const why = p.adapter.checkDataset!(settings, dataset);
    assert.match(why ?? '', /^settings index\.pq_m = 16 does not divide the 100 dimensions/);
    assert.ok(!why!.includes('\n'));
    assert.equal(p.adapter.checkDataset!(p.index, dataset), null, 'the default pq_m fits any d');
    assert.equal(autoPqM(100), 25);
    assert.equal(autoPqM(784), 196);
    assert.equal(autoPqM(7), 1);
    assert.equal(autoNlist(3000), 76);
    assert.equal(autoNlist(1_000_000), 4000);
  });

  test('a knob of another index type, or not a positive integer, is refused in one line', async () => {
    const opened = await openOnSynthetic('faiss', { n: 400, nq: 5 });
    try {
      await assert.rejects(
        opened.session.setKnobs({ nprobe: 8 }),
        // The knobs follow the index type the settings name: HNSW takes efSearch only.
        (e: Error) => e instanceof UserError && /^faiss: unknown knob "nprobe"; its knobs are efSearch$/.test(e.message),
      );
      await assert.rejects(opened.session.setKnobs({ efSearch: 0 }), /knob efSearch must be a positive integer, got 0/);
    } finally {
      await opened.cleanup();
    }
  });

  test('filters become (column, lo, hi) clauses', () => {
    const f: FilterExpr = {
      op: 'and',
      args: [
        { op: 'eq', field: 'cat10', value: 3 },
        { op: 'range', field: 'num', gte: 10, lt: 20 },
      ],
    };
    // Each attribute the filter reads gets a slot of the addon's, in the order first read.
    const { clauses, fields } = filterClauses(f);
    assert.deepEqual(Array.from(clauses), [0, 3, 4, 1, 10, 20]);
    assert.deepEqual(fields, ['cat10', 'num']);
  });

  test('without its addon the participant is unavailable with one line naming the setup command', () => {
    const r = ADDON.load('/nonexistent/faiss.node');
    assert.ok(r instanceof Error);
    assert.equal(r.message.split('\n').length, 1);
    assert.match(r.message, /faiss is unavailable: .* is not built .*libfaiss-dev.*; run `sudo npm run setup`$/);
    assert.doesNotMatch(r.stack ?? '', /^\s+at /m, 'no stack trace');
  });
});

test("the disk form's re-rank reads the rows it re-ranks, not the read-ahead window around each (MADV_RANDOM)", (t) => {
  assert.ok(haveVmtouch(), 'vmtouch is installed (scripts/setup.sh installs it)');
  // 20,000 x 128 float32: a 10 MB vectors file of 2,500 pages, 8 rows a page. Two queries re-rank
  // 10 x 2 candidates each: at most 40 pages. Without the advice each fault reads the disk's
  // read-ahead window (128 KiB: 32 pages) and the same 40 faults bring in half the file or more.
  const native = ADDON.get();
  const d = 128;
  const n = 20_000;
  let x = 12345;
  const rnd = () => ((x = (x * 1103515245 + 12345) % 2147483648) / 2147483648) * 2 - 1;
  const base = Float32Array.from({ length: n * d }, rnd);
  const dir = mkdtempSync(join(tmpdir(), 'vecbench-faiss-advice-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const built = native.create('ivfpq', d, true, 0, 0, 16, 32, 8);
  native.train(built, base, 0);
  native.add(built, base, 0, 0);
  const vectors = join(dir, 'faiss.vectors.f32');
  native.writeDisk(built, join(dir, 'faiss.disk.index'), join(dir, 'faiss.ivfdata'), vectors);
  native.free(built);
  evictPageCache(dir);
  assert.equal(residentBytes(vectors), 0, 'the vectors file is out of the page cache before the searches');
  const h = native.readDisk(join(dir, 'faiss.disk.index'), vectors);
  t.after(() => native.free(h));
  const rowOf = Int32Array.from({ length: n }, (_, i) => i);
  // The filter columns the addon takes (unfiltered: none is read).
  const noColumns = Array.from({ length: 6 }, () => new Int32Array(n));
  for (const q of [7, 4242]) {
    const got = native.search(h, base.slice(q * d, (q + 1) * d), 10, 4, 2, null, null, rowOf, ...noColumns);
    assert.equal(got[0], q, `query ${q} finds its own row first`);
  }
  const pages = residentBytes(vectors) / 4096;
  assert.ok(pages <= 2 * 40, `the re-rank brought ${pages} pages of the vectors file into memory for 40 candidates`);
});
