// Chroma on a real local server (`chroma run`), end to end on the harness's small synthetic set:
// recall against a naive exact search along the ef ladder (one collection per ef value), where
// filters, a restart on the same data, deletes. Needs participants/chroma/provision.sh.
// The contract suite runs on the same load: its reads first, the tests here, then its writes and
// reopen, then the restart test here (on the data the suite's reopen left).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { FilterExpr } from '../../src/contracts.ts';
import { passes } from '../../src/datasets/groups.ts';
import { PARTICIPANTS_DIR } from '../../src/runner/participants.ts';
import { reapOrphans } from '../../src/runner/server.ts';
import { request } from 'undici';
import { collectionName, filterToWhere, metadataKey } from '../../participants/chroma/adapter.ts';
import { CONTRACT_QUERIES, CONTRACT_ROWS, contractSuite } from '../contract/suite.ts';
import { checkLadder } from '../helpers/participant-harness.ts';
import { openServerOnSynthetic } from '../helpers/server-harness.ts';

let opened: Awaited<ReturnType<typeof openServerOnSynthetic>>;

before(async () => {
  opened = await openServerOnSynthetic('chroma', { n: CONTRACT_ROWS, nq: CONTRACT_QUERIES });
});
after(async () => {
  await opened?.cleanup();
  reapOrphans();
});

contractSuite('chroma', join(PARTICIPANTS_DIR, 'chroma'), { shared: () => opened, part: 'reads' });

test('FilterExpr becomes a Chroma where document', () => {
  assert.deepEqual(filterToWhere({ op: 'eq', field: 'cat10', value: 3 }), { cat10: { $eq: 3 } });
  assert.deepEqual(
    filterToWhere({
      op: 'and',
      args: [
        { op: 'eq', field: 'lang', value: 1 },
        { op: 'range', field: 'num', gte: 5, lt: 9 },
      ],
    }),
    {
      $and: [{ lang: { $eq: 1 } }, { $and: [{ num: { $gte: 5 } }, { num: { $lt: 9 } }] }],
    },
  );
  assert.throws(() => filterToWhere({ op: 'eq', field: 'color' as 'cat10', value: 1 }), /unknown filter field/);
});

test("a where document names the collection's own metadata keys", () => {
  const f: FilterExpr = {
    op: 'and',
    args: [
      { op: 'eq', field: 'cat10', value: 2 },
      { op: 'range', field: 'num', gte: 5, lt: 9 },
    ],
  };
  assert.deepEqual(
    filterToWhere(f, (a) => metadataKey(a, 40)),
    {
      $and: [{ cat10_ef40: { $eq: 2 } }, { $and: [{ num_ef40: { $gte: 5 } }, { num_ef40: { $lt: 9 } }] }],
    },
  );
});

test('each ef collection holds the attributes under its own keys, so a filter reads only its rows', async () => {
  const { handle, data } = opened;
  const api = `http://${handle.connection.host}:${handle.connection.port}/api/v2/tenants/default_tenant/databases/default_database`;
  const call = async (method: string, path: string, body?: unknown) => {
    const r = await request(api + path, {
      method: method as 'GET',
      body: body === undefined ? undefined : JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
    });
    const text = await r.body.text();
    assert.ok(r.statusCode < 300, text);
    return JSON.parse(text) as unknown;
  };
  const all = (await call('GET', '/collections')) as { id: string; name: string }[];
  const c10 = all.find((c) => c.name === collectionName(10))!;
  const c400 = all.find((c) => c.name === collectionName(400))!;
  const got = (await call('POST', `/collections/${c10.id}/get`, { ids: ['7'], include: ['metadatas'] })) as { metadatas: Record<string, number>[] };
  assert.deepEqual(got.metadatas[0], Object.fromEntries(Object.entries(data.attrs).map(([a, v]) => [metadataKey(a as 'num', 10), v[7]])));
  // The same range on another collection's keys matches none of this collection's rows.
  const range = { op: 'range', field: 'num', gte: 0, lt: 500_000 } as const;
  const own = (await call('POST', `/collections/${c10.id}/get`, { where: filterToWhere(range, (a) => metadataKey(a, 10)), include: [] })) as { ids: string[] };
  const want = Array.from(data.attrs.num).filter((v) => v < 500_000).length;
  assert.equal(own.ids.length, want);
  const foreign = (await call('POST', `/collections/${c400.id}/get`, { where: filterToWhere(range, (a) => metadataKey(a, 10)), include: [] })) as {
    ids: string[];
  };
  assert.equal(foreign.ids.length, 0);
});

/** What a connection from another local user (nobody) to port gets: "refused" or "answered". */
function asNobody(port: number): string {
  const code = `const s=require('net').connect(${port},'127.0.0.1');s.on('connect',()=>{console.log('answered');s.destroy()});s.on('error',e=>console.log('refused '+e.code))`;
  const r = spawnSync(process.execPath, ['-e', code], { uid: 65534, gid: 65534, encoding: 'utf8', timeout: 10_000 });
  return r.stdout.trim();
}

test('Chroma checks no token, so its port is closed to other local users while it runs (as root)', {
  skip: process.getuid?.() !== 0 && 'needs root (a firewall rule)',
}, async () => {
  const { port } = opened.handle.connection;
  assert.match(asNobody(port), /^refused (ECONNREFUSED|ECONNRESET)$/);
  // The harness (this user) still reaches it.
  assert.match(await opened.participant.adapter.engineVersion(), /^Chroma /);
});

test('the version is read from the server', async () => {
  assert.match(await opened.participant.adapter.engineVersion(), /^Chroma \d+\.\d+\.\d+ \(chromadb-js-bindings 1\.0\.5\)$/);
});

test('unfiltered k=10: recall >= 0.95 at the top of the ef ladder, never falling along it by much', async () => {
  const pts = await checkLadder(opened, 'none', 10);
  assert.equal(pts.length, 6);
  assert.ok(pts[pts.length - 1].recall >= 0.95, `top recall ${pts[pts.length - 1].recall}`);
  for (let i = 1; i < pts.length; i++) assert.ok(pts[i].recall >= pts[i - 1].recall - 0.03);
  for (const p of pts) assert.equal(p.unknownOrDuplicate, 0);
});

for (const filter of ['cat10', 'num1', 'cat10+num10']) {
  test(`filter ${filter}: no violations, recall >= 0.9 at the top`, async () => {
    const pts = await checkLadder(opened, filter, 10);
    for (const p of pts) assert.equal(p.violations, 0, `violations at ${JSON.stringify(p.knobs)}`);
    assert.ok(pts[pts.length - 1].recall >= 0.9, `top recall ${pts[pts.length - 1].recall}`);
  });
}

test('an ef value with no collection is refused, naming the setting', async () => {
  await assert.rejects(opened.session.setKnobs({ ef: 33 }), /index\.ef_search/);
});

test('deleted ids never come back', async () => {
  const { session, data } = opened;
  await session.setKnobs({ ef: 100 });
  const vec = (id: number) => data.base.slice(id * data.d, (id + 1) * data.d);
  await session.delete!(Int32Array.from([11, 12]));
  for (const id of [11, 12]) assert.ok(!Array.from(await session.search({ vector: vec(id), k: 10, filter: null })).includes(id));
  const f = { op: 'eq', field: 'cat10', value: data.attrs.cat10[13] } as const;
  const got = Array.from(await session.search({ vector: vec(13), k: 10, filter: f }));
  assert.equal(got[0], 13);
  for (const id of got) assert.ok(passes(f, data.attrs, id));
});

// The suite's write checks and its reopen, which stops the server. The deletes above leave base
// rows only.
contractSuite('chroma', join(PARTICIPANTS_DIR, 'chroma'), { shared: () => opened, part: 'writes' });

// After the suite's reopen check, which stopped the loaded server and its restart: the session
// restarted here is one on the server started again, without ingest, on the data that check left.
test('a restart on the same directory reopens the collections and answers the same', async () => {
  const { participant, ctx, data } = opened;
  const startOnData = opened.restartOnData;
  const q = data.queries.slice(0, data.d);
  const live = await startOnData('server-live.log');
  let want: number[];
  try {
    const session = await participant.adapter.reopen!({ ...ctx, server: live.handle.connection });
    await session.setKnobs({ ef: 100 });
    want = Array.from(await session.search({ vector: q, k: 10, filter: null }));
    await session.close();
  } finally {
    await live.handle.stop();
  }
  const again = await startOnData('server2.log');
  try {
    const s2 = await participant.adapter.reopen!({ ...ctx, server: again.handle.connection });
    await s2.setKnobs({ ef: 100 });
    assert.deepEqual(Array.from(await s2.search({ vector: q, k: 10, filter: null })), want);
    await s2.close();
  } finally {
    await again.handle.stop();
  }
});
