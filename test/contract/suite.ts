// The shared contract suite: what every participant must do, checked on its real engine (a
// server participant on its real server, started as the runner starts it) with a small
// synthetic set, each check at one ladder point, the top of the ladder that applies. It knows no
// participant: what it checks follows from what the participant declares (its adapter's
// capabilities, the ladders and the `contract` block of its settings.json), and a check whose
// capability the participant lacks is skipped with the reason, which the test reporter prints.
//
// One load per engine: a participant whose own test file loads the suite's data (SHARED_IN_OWN_FILE)
// runs the suite there, on the engine it loaded: the read checks first, its own tests, then the
// write checks and the reopen (`part`, `shared`). test/engines/participant-contract.test.ts runs it
// whole over every other participant the registry lists and over the templates by their path.
// docs/design.md, "The template and the contract suite", lists the checks.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test, type TestContext } from 'node:test';
import { ATTRIBUTES, type EngineSession, type FilterExpr, type Knobs, type OpenContext, type RowAttributes, type RowBatch } from '../../src/contracts.ts';
import { passes, STANDARD_KINDS } from '../../src/datasets/groups.ts';
import { checkedSession, ladderFor, loadParticipantFrom, type LoadedParticipant } from '../../src/runner/participants.ts';
import { supportReason, type AskedGroup } from '../../src/runner/points.ts';
import { reapOrphans } from '../../src/runner/server.ts';
import { UserError } from '../../src/util/errors.ts';
import { checkPoint, openOnSynthetic } from '../helpers/participant-harness.ts';
import { openServerOnSynthetic } from '../helpers/server-harness.ts';

/** The suite's data: small enough that a participant's whole suite takes seconds. */
export const CONTRACT_ROWS = 3000;
/** As many as openOnSynthetic's default, so a participant's own file loads the suite's data. */
export const CONTRACT_QUERIES = 60;
/** Recall at k = 10 at the top of the ladder, unless settings.json `contract` says otherwise. */
export const DEFAULT_MIN_RECALL = 0.95;
export const DEFAULT_MIN_FILTERED_RECALL = 0.8;
const K = 10;

type Opened = Awaited<ReturnType<typeof openOnSynthetic>> | Awaited<ReturnType<typeof openServerOnSynthetic>>;

/** The participants whose own test file runs this suite on the engine it loaded, each with
 * that file (in test/engines/); participant-contract.test.ts runs the suite over the others, and
 * checks that every participant the registry lists is covered by exactly one of the two. */
export const SHARED_IN_OWN_FILE: Readonly<Record<string, string>> = {
  chroma: 'participant-chroma.test.ts',
  faiss: 'participant-faiss.test.ts',
  hnswlib: 'participant-hnswlib.test.ts',
  'hnswlib-direct': 'participant-hnswlib-direct.test.ts',
  lancedb: 'participant-lancedb.test.ts',
  libsql: 'participant-libsql.test.ts',
  milvus: 'participant-milvus.test.ts',
  opensearch: 'participant-opensearch.test.ts',
  orama: 'participant-orama.test.ts',
  pgvector: 'participant-pgvector.test.ts',
  'pgvector-pglite': 'participant-pgvector-pglite.test.ts',
  redis: 'participant-redis.test.ts',
  'redis-q8': 'participant-redis.test.ts',
  'sqlite-vec': 'participant-sqlite-vec.test.ts',
  usearch: 'participant-usearch.test.ts',
  'usearch-direct': 'participant-usearch-direct.test.ts',
  weaviate: 'participant-weaviate.test.ts',
  zvec: 'participant-zvec.test.ts',
};

export interface ContractOptions {
  /** An engine the calling file opened (openOnSynthetic or openServerOnSynthetic with
   * `{ n: CONTRACT_ROWS, nq: CONTRACT_QUERIES }`, the participant's own settings.json): the suite
   * checks it instead of loading its own, and leaves closing it to that file. */
  shared?: () => Opened;
  /** Which checks to register, each part a describe of its own: 'reads' (recall, filters,
   * strategy, bad settings, bad knobs: nothing that changes the engine), 'writes' (deletes,
   * inserts, then the reopen, which closes the session: register it last), 'all' both (the
   * default). */
  part?: 'reads' | 'writes' | 'all';
}

/** How far past n the write check's new ids start on a shared engine: the participant's own
 * tests may have written new ids just past n (today n to n + 39), which an insert must not meet. */
const SHARED_INSERT_GAP = 1000;

/** The rows the write check inserts (and the reopen check asks again): the last queries (held
 * out: never copied from the base set) under new ids past n, with the attributes of base rows
 * 100-104. Exported for a participant's own test that later reads the engine the suite wrote. */
export function contractInserts(shared: boolean): { id: number; query: number; attrsOf: number }[] {
  const from = CONTRACT_ROWS + (shared ? SHARED_INSERT_GAP : 0);
  return [0, 1, 2, 3, 4].map((i) => ({ id: from + i, query: CONTRACT_QUERIES - 1 - i, attrsOf: 100 + i }));
}

/** The knobs of the last point of the ladder for (filter, k): the most exact one it measures. */
function topOf(p: LoadedParticipant, filter: string): Knobs | null {
  return ladderFor(p.settings, filter, K).at(-1) ?? null;
}

/** A one-line error: an UserError (or any Error) whose message has no line break. */
function assertOneLine(e: unknown, mentions: string): true {
  assert.ok(e instanceof Error, `threw ${String(e)}, not an Error`);
  assert.ok(!e.message.includes('\n'), `the error is not one line: ${JSON.stringify(e.message)}`);
  assert.ok(e.message.includes(mentions), `the error does not name ${mentions}: ${e.message}`);
  return true;
}

/** Registers the contract checks of one participant, loaded from its directory (or shared by
 * the calling file, `opts.shared`): all of them, or the read or the write part (`opts.part`). */
export function contractSuite(name: string, dir: string, opts: ContractOptions = {}): void {
  const part = opts.part ?? 'all';
  const reads = part !== 'writes';
  const writes = part !== 'reads';
  describe(part === 'writes' ? `contract: ${name} (writes)` : `contract: ${name}`, () => {
    let p: LoadedParticipant;
    let opened: Opened;
    /** A session opened by the reopen check, closed by it or, when it fails, in after(). */
    let reopened: EngineSession | null = null;
    let restarted: { stop(): Promise<void> } | null = null;
    const vec = (rows: Float32Array, i: number) => rows.slice(i * opened.data.d, (i + 1) * opened.data.d);

    before(async () => {
      p = await loadParticipantFrom(dir, name);
      if (opts.shared) {
        opened = opts.shared();
        assert.ok(opened, `the engine ${name}'s own test file shares did not open`);
        // The engine the suite would have loaded: its data, its participant, its own settings.
        assert.equal(opened.data.n, CONTRACT_ROWS, `the shared engine holds ${opened.data.n} rows, not CONTRACT_ROWS`);
        assert.equal(opened.data.nq, CONTRACT_QUERIES, `the shared engine has ${opened.data.nq} queries, not CONTRACT_QUERIES`);
        assert.equal(opened.participant.name, name);
        assert.equal(opened.participant.settingsPath, p.settingsPath, 'the shared engine was opened with other settings');
        assert.deepEqual(opened.participant.index, p.index);
        return;
      }
      const load = { n: CONTRACT_ROWS, nq: CONTRACT_QUERIES };
      // A server participant's server is started as the runner starts it (test/helpers/server-
      // harness.ts); a missing server fails here with the adapter's line naming its provision
      // script, as the participant's own test does.
      opened = p.adapter.server ? await openServerOnSynthetic(p, load) : await openOnSynthetic(p, load);
    });
    after(async () => {
      await reopened?.close().catch(() => {});
      await restarted?.stop();
      // A shared engine is the calling file's to clean up (after its own tests).
      if (!opts.shared) await opened?.cleanup();
      if (p?.adapter.server) reapOrphans();
    });

    if (reads) {
      test(`recall at k=${K}, unfiltered, at the top of the ladder reaches settings.json contract.min_recall (default ${DEFAULT_MIN_RECALL})`, async () => {
        const top = topOf(p, 'none');
        assert.ok(top, `settings.json has no ladder rule for none/${K}; every participant measures it`);
        const min = p.settings.contract?.min_recall ?? DEFAULT_MIN_RECALL;
        const r = await checkPoint(opened, 'none', K, top);
        assert.equal(r.unknownOrDuplicate, 0, `${r.unknownOrDuplicate} unknown or duplicate ids at ${JSON.stringify(top)}`);
        assert.ok(r.recall >= min, `recall ${r.recall.toFixed(3)} at ${JSON.stringify(top)}, below ${min}`);
      });

      // The standard kinds: the opt-in sets (the grid, tenants) have tests of their own
      // (test/e2e/filter-grid.test.ts, test/engines/tenants.test.ts).
      for (const kind of STANDARD_KINDS.filter((f) => f.name !== 'none')) {
        test(`filter ${kind.name} at k=${K}: no returned id violates it, recall at the top reaches contract.min_filtered_recall (default ${DEFAULT_MIN_FILTERED_RECALL})`, async (t: TestContext) => {
          // The runner's own rule (src/runner/points.ts): a group the participant cannot take is
          // reported unsupported with a one-line reason, never measured.
          const reason = supportReason(p, {
            key: `${kind.name}/${K}`,
            filter: kind.name,
            k: K,
            filters: [kind.forQuery(0, opened.data.queryAttrs)],
          } as AskedGroup);
          if (reason !== null) {
            assert.ok(reason.length > 0 && !reason.includes('\n'), `the unsupported reason is not one line: ${JSON.stringify(reason)}`);
            t.diagnostic(`not measured: ${reason}`);
            return;
          }
          const top = topOf(p, kind.name)!;
          const min = p.settings.contract?.min_filtered_recall ?? DEFAULT_MIN_FILTERED_RECALL;
          const r = await checkPoint(opened, kind.name, K, top);
          assert.equal(r.violations, 0, `${r.violations} returned ids violate the filter at ${JSON.stringify(top)}`);
          assert.equal(r.unknownOrDuplicate, 0, `${r.unknownOrDuplicate} unknown or duplicate ids at ${JSON.stringify(top)}`);
          assert.ok(r.recall >= min, `recall ${r.recall.toFixed(3)} at ${JSON.stringify(top)}, below ${min}`);
        });
      }

      test('strategy: the session names how it answers, unfiltered and filtered, observed in its plan or declared', async () => {
        const { session, data } = opened;
        assert.ok(session.strategy, 'the session has no strategy(): every participant says how it answers (docs/measurement.md, "Plans")');
        const vector = data.queries.slice(0, data.d);
        for (const filter of [null, STANDARD_KINDS.find((f) => f.name === 'cat10')!.forQuery(0, data.queryAttrs)]) {
          const top = topOf(p, filter === null ? 'none' : 'cat10') ?? topOf(p, 'none')!;
          await session.setKnobs(top);
          const request = { vector, k: K, filter };
          const plan = session.explain ? await session.explain(request) : null;
          const s = session.strategy(request, plan);
          assert.ok(s.label.length > 0 && s.label.length <= 60 && !s.label.includes('\n'), `strategy label ${JSON.stringify(s.label)} is not a short line`);
          assert.equal(typeof s.observed, 'boolean');
          if (plan === null) assert.equal(s.observed, false, 'without a plan the strategy can only be declared');
        }
      });

      test('bad settings: an unknown index key is refused in one line naming it', async () => {
        await withSettings(
          dir,
          (index) => ({ ...index, not_a_setting: 1 }),
          (path) => assert.rejects(loadParticipantFrom(dir, name, path), (e) => e instanceof UserError && assertOneLine(e, 'index.not_a_setting')),
        );
      });

      test('bad settings: an index value of the wrong type is refused in one line naming it', async (t: TestContext) => {
        const own = (JSON.parse(readFileSync(join(dir, 'settings.json'), 'utf8')) as { index?: Record<string, unknown> }).index ?? {};
        const key = Object.keys(own)[0];
        if (key === undefined) {
          // No index setting to give a wrong type: the empty index must then be what loads.
          assert.deepEqual((await loadParticipantFrom(dir, name)).settings.index ?? {}, own);
          t.diagnostic('settings.json index is empty: no value to give a wrong type');
          return;
        }
        const wrong = typeof own[key] === 'number' ? 'not-a-number' : 12345;
        await withSettings(
          dir,
          (index) => ({ ...index, [key]: wrong }),
          (path) => assert.rejects(loadParticipantFrom(dir, name, path), (e) => e instanceof UserError && assertOneLine(e, `index.${key}`)),
        );
      });

      test('bad knobs: setKnobs refuses an unknown knob in one line naming it', async () => {
        await assert.rejects(opened.session.setKnobs({ not_a_knob: 1 }), (e) => assertOneLine(e, 'not_a_knob'));
      });

      test('bad knobs: setKnobs refuses a knob value of the wrong type in one line naming the knob', async (t: TestContext) => {
        const top = topOf(p, 'none') ?? {};
        const knob = Object.keys(top)[0];
        if (knob === undefined) {
          // A knob-less ladder point must be accepted as it is.
          await opened.session.setKnobs(top);
          t.diagnostic(`the ladder for none/${K} sets no knob: no value to give a wrong type`);
          return;
        }
        const wrong = typeof top[knob] === 'number' ? 'not-a-number' : 12345;
        await assert.rejects(opened.session.setKnobs({ ...top, [knob]: wrong }), (e) => assertOneLine(e, knob));
      });
    }

    // The write checks, then the reopen: it closes the session, so it comes last.
    if (writes) {
      /** Rows of the synthetic set under other ids (new ids past n), with the given vectors. */
      const batchOf = (ids: number[], vectors: Float32Array, attrRows: number[]): RowBatch => {
        const attrs = Object.fromEntries(ATTRIBUTES.map((a) => [a, Int32Array.from(attrRows, (r) => opened.data.attrs[a][r])])) as RowAttributes;
        return { ids: Int32Array.from(ids), vectors, attrs };
      };
      /** An eq filter the participant can apply that row `r` passes, or null. */
      const filterFor = (r: number): FilterExpr | null => {
        const f = p.adapter.filters;
        return f?.ops.includes('eq') && f.fields.includes('cat10') ? { op: 'eq', field: 'cat10', value: opened.data.attrs.cat10[r] } : null;
      };
      const search = async (vector: Float32Array, filter: FilterExpr | null) => Array.from(await opened.session.search({ vector, k: K, filter }));

      // Deleted: rows whose own vector finds them (checked before the delete, so the check has
      // teeth). An approximate index need not reach every row (a graph built by several threads
      // can leave one with no way in: usearch missed row 17 once in CI), so the victims are the
      // first five candidates it does find, and at most one candidate may be missed.
      // Inserted: the last queries (held out: never copied from the base set) under new ids
      // (contractInserts).
      const candidates = [3, 17, 256, 1024, CONTRACT_ROWS - 1, 42, 640, 2048];
      const victims: number[] = [];
      const fresh = contractInserts(opts.shared !== undefined);

      test('writes: deleted ids are never returned, unfiltered or filtered, also after compact()', async (t: TestContext) => {
        const { session, data } = opened;
        if (!session.delete) {
          // Live churn needs both writes: a session without delete() has no insert() either.
          assert.equal(session.insert, undefined, 'the session has insert() but no delete()');
          t.diagnostic('the session has no delete(): live churn unsupported');
          return;
        }
        await session.setKnobs(topOf(p, 'none')!);
        const missed: number[] = [];
        for (const v of candidates) {
          if (victims.length === 5) break;
          if ((await search(vec(data.base, v), null)).includes(v)) victims.push(v);
          else missed.push(v);
        }
        assert.ok(victims.length === 5 && missed.length <= 1, `rows ${missed.join(', ')} are not found by their own vectors before the delete`);
        await session.delete(Int32Array.from(victims));
        const check = async (when: string) => {
          for (const v of victims) {
            const got = await search(vec(data.base, v), null);
            for (const x of victims) assert.ok(!got.includes(x), `deleted id ${x} returned ${when}`);
            const f = filterFor(v);
            if (f) {
              const gotF = await search(vec(data.base, v), f);
              for (const x of victims) assert.ok(!gotF.includes(x), `deleted id ${x} returned under ${JSON.stringify(f)} ${when}`);
              for (const x of gotF) assert.ok(passes(f, data.attrs, x), `id ${x} violates ${JSON.stringify(f)} ${when}`);
            }
          }
        };
        await check('after the delete');
        if (session.compact) {
          await session.compact();
          await check('after compact()');
        } else t.diagnostic('the session has no compact(): checked after the write only');
      });

      test('writes: inserted ids are found, unfiltered and filtered, also after compact()', async (t: TestContext) => {
        const { session, data } = opened;
        if (!session.insert) {
          assert.equal(session.delete, undefined, 'the session has delete() but no insert()');
          t.diagnostic('the session has no insert(): live churn unsupported');
          return;
        }
        await session.setKnobs(topOf(p, 'none')!);
        const vectors = new Float32Array(fresh.length * data.d);
        fresh.forEach((r, i) => vectors.set(vec(data.queries, r.query), i * data.d));
        await session.insert(
          batchOf(
            fresh.map((r) => r.id),
            vectors,
            fresh.map((r) => r.attrsOf),
          ),
        );
        const check = async (when: string) => {
          for (const r of fresh) {
            assert.ok((await search(vec(data.queries, r.query), null)).includes(r.id), `inserted id ${r.id} not found by its own vector ${when}`);
            const f = filterFor(r.attrsOf);
            if (f) assert.ok((await search(vec(data.queries, r.query), f)).includes(r.id), `inserted id ${r.id} not found under ${JSON.stringify(f)} ${when}`);
          }
        };
        await check('after the insert');
        if (session.compact) {
          await session.compact();
          await check('after compact()');
        } else t.diagnostic('the session has no compact(): checked after the write only');
      });

      test('reopen: after close (and a server restart), reopen without ingest answers as the session did', async (t: TestContext) => {
        const { data, ctx } = opened;
        if (!p.adapter.reopen) {
          // Search threads each reopen the index: without reopen a participant cannot offer them.
          assert.ok(!p.adapter.reopenInThreads, 'reopenInThreads is declared but there is no reopen');
          t.diagnostic('no Participant.reopen: cold start is not measured and a resumed run loads again');
          return;
        }
        const top = topOf(p, 'none')!;
        await opened.session.setKnobs(top);
        // The first queries, and the held-out ones the write check inserted.
        const asked = [...Array.from({ length: 20 }, (_, q) => q), ...fresh.map((r) => r.query)];
        const want: number[][] = [];
        for (const q of asked) want.push(await search(vec(data.queries, q), null));
        await opened.stopKeepingData();
        let openCtx: OpenContext<unknown> = ctx;
        if (p.adapter.server && 'handle' in opened) {
          const again = await opened.restartOnData('server-reopened.log');
          restarted = again.handle;
          openCtx = { ...ctx, server: again.handle.connection };
        }
        reopened = checkedSession(p, await p.adapter.reopen(openCtx));
        await reopened.setKnobs(top);
        // The same answer, up to ties: rows whose scores agree within 1e-6 may swap places (the
        // tie rule recall uses), e.g. when a reopened server merges its segments in another order.
        const score = (q: Float32Array, row: number) => {
          let s = 0;
          for (let j = 0; j < data.d; j++) s += data.metric === 'l2' ? (q[j] - data.base[row * data.d + j]) ** 2 : q[j] * data.base[row * data.d + j];
          return s;
        };
        for (let i = 0; i < asked.length; i++) {
          const q = vec(data.queries, asked[i]);
          const got: number[] = Array.from(await reopened.search({ vector: q, k: K, filter: null }));
          if (got.length === want[i].length && got.every((id, j) => id === want[i][j] || Math.abs(score(q, id) - score(q, want[i][j])) <= 1e-6)) continue;
          assert.deepEqual(got, want[i], `query ${asked[i]} answers differently after the reopen (beyond ties)`);
        }
        await reopened.close();
        reopened = null;
      });
    }
  });
}

/** Runs `fn` with a copy of the participant's settings.json whose index is changed, in a
 * temporary file removed afterwards. */
async function withSettings(
  dir: string,
  change: (index: Record<string, unknown>) => Record<string, unknown>,
  fn: (path: string) => Promise<void>,
): Promise<void> {
  const raw = JSON.parse(readFileSync(join(dir, 'settings.json'), 'utf8')) as { index?: Record<string, unknown> };
  const tmp = mkdtempSync(join(tmpdir(), 'vecbench-contract-settings-'));
  try {
    const path = join(tmp, 'settings.json');
    writeFileSync(path, JSON.stringify({ ...raw, index: change(raw.index ?? {}) }));
    await fn(path);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
