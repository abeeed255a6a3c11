// pgvector on a real PostgreSQL server, end to end on the harness's small synthetic set: recall
// against a naive exact search, filters, the iterative-scan strategies, plans and their checks,
// a restart on the same data, and writes. Needs participants/pgvector/provision.sh (as root).
// The contract suite runs on the same load: its reads first, the tests here, then its writes and
// reopen, then the restart test here (on the data the suite's reopen left).
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import pg from 'pg';
import type { RowAttributes, RowBatch } from '../../src/contracts.ts';
import { ATTRIBUTES } from '../../src/contracts.ts';
import { passes } from '../../src/datasets/groups.ts';
import { loadParticipant, PARTICIPANTS_DIR } from '../../src/runner/participants.ts';
import { reapOrphans } from '../../src/runner/server.ts';
import { CONTRACT_QUERIES, CONTRACT_ROWS, contractSuite } from '../contract/suite.ts';
import { checkLadder } from '../helpers/participant-harness.ts';
import { openServerOnSynthetic, startParticipantServer } from '../helpers/server-harness.ts';

let opened: Awaited<ReturnType<typeof openServerOnSynthetic>>;

before(async () => {
  opened = await openServerOnSynthetic('pgvector', { n: CONTRACT_ROWS, nq: CONTRACT_QUERIES });
});
after(async () => {
  await opened?.cleanup();
  reapOrphans();
});

contractSuite('pgvector', join(PARTICIPANTS_DIR, 'pgvector'), { shared: () => opened, part: 'reads' });

const vectorOf = (id: number) => opened.data.base.slice(id * opened.data.d, (id + 1) * opened.data.d);
const queryOf = (q: number) => opened.data.queries.slice(q * opened.data.d, (q + 1) * opened.data.d);

function rows(ids: number[], idsAs?: number[]): RowBatch {
  const { data } = opened;
  const vectors = new Float32Array(ids.length * data.d);
  ids.forEach((id, i) => vectors.set(data.base.subarray(id * data.d, (id + 1) * data.d), i * data.d));
  const attrs = Object.fromEntries(ATTRIBUTES.map((a) => [a, Int32Array.from(ids, (id) => data.attrs[a][id])])) as RowAttributes;
  return { ids: Int32Array.from(idsAs ?? ids), vectors, attrs };
}

test('the engine version is read from the server', async () => {
  assert.match(await opened.participant.adapter.engineVersion(), /^PostgreSQL \d+\.\d+, pgvector 0\.[89]\.\d+$/);
});

test('the cluster asks for its own password: a local user without it cannot log in, even as postgres', async () => {
  const { host, port, params, dataDir } = opened.handle.connection;
  assert.match(String(params.password), /^[0-9a-f]{48}$/);
  // Beside the data directory (not in it), readable by this user only.
  const side = statSync(`${dataDir}.side-password`);
  assert.equal(side.mode & 0o077, 0);
  assert.equal(readFileSync(`${dataDir}.side-password`, 'utf8').trim(), params.password);
  for (const password of [undefined, 'postgres', '']) {
    const c = new pg.Client({ host, port, user: 'postgres', database: 'postgres', password, connectionTimeoutMillis: 5000 });
    c.on('error', () => {});
    await assert.rejects(c.connect(), /password authentication failed|password must be a string|SASL|client password must be a string/);
    await c.end().catch(() => {});
  }
  const ok = new pg.Client({ host, port, user: 'postgres', database: 'postgres', password: String(params.password) });
  await ok.connect();
  assert.equal((await ok.query("SELECT rolpassword LIKE 'SCRAM-SHA-256$%' AS scram FROM pg_authid WHERE rolname = 'postgres'")).rows[0].scram, true);
  await ok.end();
});

test('unfiltered k=10 reaches recall >= 0.95, the plan scans the HNSW index and passes its check', async () => {
  const pts = await checkLadder(opened, 'none', 10);
  assert.ok(pts.length >= 5);
  assert.ok(pts[pts.length - 1].recall >= 0.95, `top recall ${pts[pts.length - 1].recall}`);
  for (const p of pts) assert.equal(p.unknownOrDuplicate, 0);
  const req = { vector: queryOf(0), k: 10, filter: null };
  const plan = await opened.session.explain!(req);
  assert.match(plan, /^path: hnsw/);
  assert.match(plan, /Index Scan using items_embedding_hnsw/);
  opened.session.checkPlan!(plan, req);
});

for (const filter of ['cat10', 'num1', 'cat10+num10', 'lang']) {
  test(`filter ${filter} at k=10: no violations, recall >= 0.9 at the top of each strategy`, async () => {
    const pts = await checkLadder(opened, filter, 10);
    for (const p of pts) {
      assert.equal(p.violations, 0, `violations at ${JSON.stringify(p.knobs)}`);
      assert.equal(p.unknownOrDuplicate, 0);
    }
    for (const strategy of ['relaxed_order', 'strict_order']) {
      const top = pts.filter((p) => p.knobs.iterative_scan === strategy).at(-1)!;
      assert.ok(top.recall >= 0.9, `${strategy} top recall ${top.recall}`);
    }
  });
}

test('the filter strategy shows in the points: without iterative scan a 10 % filter at a low ef_search returns short results, with it none', async () => {
  const pts = await checkLadder(opened, 'cat10', 10);
  const at = (strategy: string, ef: number) => pts.find((p) => p.knobs.iterative_scan === strategy && p.knobs.ef_search === ef)!;
  // ef_search 10 keeps 10 candidates, of which ~1 passes a 10 % filter.
  assert.ok(at('off', 10).shortResults > opened.data.nq / 2, `off: ${at('off', 10).shortResults} short of ${opened.data.nq}`);
  assert.ok(at('off', 10).recall < 0.5);
  assert.equal(at('relaxed_order', 10).shortResults, 0);
  assert.ok(at('relaxed_order', 10).recall > at('off', 10).recall + 0.3);
});

test('a selective filter lets the planner read the matches through the btree (exact), and the check accepts it', async () => {
  const { data, session } = opened;
  const filter = { op: 'eq', field: 'cat100', value: data.attrs.cat100[0] } as const;
  await session.setKnobs({ iterative_scan: 'off', ef_search: 40 });
  const req = { vector: vectorOf(0), k: 10, filter };
  const plan = await session.explain!(req);
  assert.match(plan, /^path: exact-index/);
  assert.match(plan, /items_cat100_idx/);
  session.checkPlan!(plan, req);
  const got = Array.from(await session.search(req));
  assert.equal(got[0], 0);
  for (const id of got) assert.ok(passes(filter, data.attrs, id));
});

test('k=100: unfiltered and cat10 reach recall >= 0.95', async () => {
  for (const filter of ['none', 'cat10']) {
    const pts = await checkLadder(opened, filter, 100);
    const best = Math.max(...pts.map((p) => p.recall));
    assert.ok(best >= 0.95, `${filter}/100 best recall ${best}`);
  }
});

test('writes: deleted ids never come back, new ids are found, upsert moves a row', async () => {
  const { session, data } = opened;
  await session.setKnobs({ ef_search: 100 });
  const victims = [3, 17, 256, 1024];
  await session.delete!(Int32Array.from(victims));
  for (const id of victims) {
    const got = Array.from(await session.search({ vector: vectorOf(id), k: 10, filter: null }));
    for (const v of victims) assert.ok(!got.includes(v), `deleted id ${v} returned`);
  }
  const fresh = [data.n, data.n + 1];
  await session.insert!(rows([100, 200], fresh));
  assert.ok(Array.from(await session.search({ vector: vectorOf(100), k: 5, filter: null })).includes(data.n));
  await session.upsert!(rows([9], [5]));
  const got = Array.from(await session.search({ vector: vectorOf(9), k: 2, filter: null }));
  assert.deepEqual(
    [...got].sort((a, b) => a - b),
    [5, 9],
  );
  await session.insert!(rows(victims));
  assert.ok((await session.diskBytes!()) > data.n * data.d * 4);
  // Back to the base rows: the contract suite's write checks, later on this engine, judge the
  // ids a filter returns by the base rows' attributes.
  await session.delete!(Int32Array.from(fresh));
  await session.upsert!(rows([5]));
});

test('a data directory deeper than a Unix socket path may be (107 bytes) still starts: the server listens on TCP only', async () => {
  const root = mkdtempSync(join(tmpdir(), 'vecbench-pg-deep-'));
  let workDir = root;
  for (const part of ['a'.repeat(40), 'b'.repeat(40), 'c'.repeat(40)]) {
    workDir = join(workDir, part);
    mkdirSync(workDir);
    chmodSync(workDir, 0o755);
  }
  chmodSync(root, 0o755);
  assert.ok(join(workDir, 'server', '.s.PGSQL.65535').length > 107);
  const started = await startParticipantServer('pgvector', { n: 10, d: 4, workDir });
  try {
    const c = new pg.Client({
      host: started.handle.connection.host,
      port: started.handle.connection.port,
      user: 'postgres',
      database: 'postgres',
      password: String(started.handle.connection.params.password),
    });
    await c.connect();
    assert.equal((await c.query('SELECT 1 AS one')).rows[0].one, 1);
    await c.end();
  } finally {
    await started.handle.stop();
    rmSync(root, { recursive: true, force: true });
  }
});

test('bad settings are rejected with a path naming the field', async () => {
  const p = await loadParticipant('pgvector');
  const r = p.adapter.settingsSchema.safeParse({ m: 32, ef_construction: 40 });
  assert.equal(r.success, false);
  assert.deepEqual(r.error!.issues[0].path, ['ef_construction']);
  const r2 = p.adapter.settingsSchema.safeParse({ shared_buffers_mb: 'lots' });
  assert.deepEqual(r2.error!.issues[0].path, ['shared_buffers_mb']);
  assert.equal(p.adapter.server?.provision, 'provision.sh');
});

// The suite's write checks and its reopen, which stops the server.
contractSuite('pgvector', join(PARTICIPANTS_DIR, 'pgvector'), { shared: () => opened, part: 'writes' });

// After the suite's reopen check, which stopped the loaded server (opened.stopKeepingData) and
// its restart: the session restarted here is one on the server started again, without ingest,
// on the data that check left.
test('a restart on the same data directory reopens the table without ingest and answers the same', async () => {
  const { data, participant, handle, ctx } = opened;
  const startOnData = opened.restartOnData;
  assert.equal(handle.alive, false);
  const live = await startOnData('server-live.log');
  let before: number[];
  try {
    const session = await participant.adapter.reopen!({ ...ctx, server: live.handle.connection });
    await session.setKnobs({ ef_search: 100 });
    before = Array.from(await session.search({ vector: queryOf(1), k: 10, filter: null }));
    await session.close();
  } finally {
    await live.handle.stop();
  }
  assert.equal(live.handle.alive, false);
  const again = await startOnData('server2.log');
  try {
    const s2 = await participant.adapter.reopen!({ ...ctx, server: again.handle.connection });
    await s2.setKnobs({ ef_search: 100 });
    assert.deepEqual(Array.from(await s2.search({ vector: queryOf(1), k: 10, filter: null })), before);
    // A plan that falls back to a sequential scan where the settings promise HNSW fails its check.
    const admin = new pg.Client({
      host: again.handle.connection.host,
      port: again.handle.connection.port,
      user: 'postgres',
      database: 'postgres',
      password: String(again.handle.connection.params.password),
    });
    await admin.connect();
    await admin.query('DROP INDEX items_embedding_hnsw');
    await admin.end();
    const req = { vector: queryOf(1), k: 10, filter: null };
    const plan = await s2.explain!(req);
    assert.match(plan, /^path: seq-scan/);
    assert.throws(() => s2.checkPlan!(plan, req), /does not scan the HNSW index/);
    await s2.close();
    assert.equal(data.n > 0, true);
  } finally {
    await again.handle.stop();
  }
});
