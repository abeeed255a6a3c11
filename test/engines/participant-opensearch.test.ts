// OpenSearch on its real server (OpenSearch 2.19.1 with the k-NN plugin 2.19.1.0, Lucene engine,
// one node started as the runner starts it), end to end on the harness's small synthetic set:
// recall against a naive exact search along the ef_search ladder, filters, writes and a restart on
// the same data (the contract suite), the versions read from the server, the filter translation,
// and both of the server's ports closed to other users while it runs (as root).
// Needs participants/opensearch/provision.sh. The suite's reads run first, the tests here, then its
// writes and reopen (which restarts the server on its data).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { filterQuery } from '../../participants/opensearch/adapter.ts';
import { PARTICIPANTS_DIR } from '../../src/runner/participants.ts';
import { reapOrphans } from '../../src/runner/server.ts';
import { CONTRACT_QUERIES, CONTRACT_ROWS, contractSuite } from '../contract/suite.ts';
import { checkLadder } from '../helpers/participant-harness.ts';
import { openServerOnSynthetic, remoteAnswersAsLoaded } from '../helpers/server-harness.ts';

let opened: Awaited<ReturnType<typeof openServerOnSynthetic>>;

before(async () => {
  opened = await openServerOnSynthetic('opensearch', { n: CONTRACT_ROWS, nq: CONTRACT_QUERIES });
});
after(async () => {
  await opened?.cleanup();
  reapOrphans();
});

contractSuite('opensearch', join(PARTICIPANTS_DIR, 'opensearch'), { shared: () => opened, part: 'reads' });

test('a server the user runs (--connect opensearch=http://host:port): checked, answered through as loaded; an HTTP server that is not OpenSearch refused', async () => {
  const { port } = opened.handle.connection;
  await remoteAnswersAsLoaded(opened, `http://127.0.0.1:${port}`, { ef_search: 64 });
  const remote = opened.participant.adapter.server!.remote!;
  assert.deepEqual(remote.connection(new URL('http://vb:s%40cret@search.example')), {
    host: 'search.example',
    port: 9200,
    dataDir: '',
    params: { user: 'vb', password: 's@cret' },
  });
  const other = createServer((_req, res) => res.end('{"name":"not a search engine"}'));
  await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
  try {
    const otherPort = (other.address() as AddressInfo).port;
    await assert.rejects(remote.check(remote.connection(new URL(`http://127.0.0.1:${otherPort}`))), /does not answer GET \/ as OpenSearch does/);
  } finally {
    other.close();
  }
});

test('the versions are read from the server', async () => {
  assert.match(await opened.participant.adapter.engineVersion(), /^OpenSearch 2\.19\.1 \(Lucene 9\.12\.1\), k-NN plugin 2\.19\.1\.0$/);
});

test('the server started within a minute', (t) => {
  t.diagnostic(`accept time ${opened.started.acceptS.toFixed(1)}s`);
  assert.ok(opened.started.acceptS < 60, `accept time ${opened.started.acceptS}s`);
});

test('the ladder climbs: recall at the top >= 0.95, never lower at the top than at the bottom', async (t) => {
  const pts = await checkLadder(opened, 'none', 10);
  t.diagnostic(`recall along ef_search: ${pts.map((p) => p.recall.toFixed(3)).join(' ')}`);
  assert.ok(pts.at(-1)!.recall >= 0.95, `top recall ${pts.at(-1)!.recall}`);
  assert.ok(pts.at(-1)!.recall >= pts[0].recall);
  for (const p of pts) assert.equal(p.unknownOrDuplicate, 0);
});

test("explain: the profiled query is Lucene's KnnFloatVectorQuery with ef_search as its k (the candidates), cut to k after", async (t) => {
  await opened.session.setKnobs({ ef_search: 64 });
  const vector = opened.data.queries.subarray(0, opened.data.d);
  const plan = await opened.session.explain!({ vector, k: 10, filter: { op: 'eq', field: 'cat10', value: 1 } });
  t.diagnostic(plan.slice(0, 400));
  assert.match(plan, /LuceneEngineKnnVectorQuery/);
  assert.match(plan, /KnnFloatVectorQuery:embedding\[[^\]]*\]\[64\]/);
  assert.equal((await opened.session.search({ vector, k: 10, filter: null })).length, 10);
});

test('filters become term, range and bool queries', () => {
  assert.deepEqual(filterQuery({ op: 'eq', field: 'cat10', value: 3 }), { term: { cat10: 3 } });
  assert.deepEqual(filterQuery({ op: 'range', field: 'num', gte: 5, lt: 9 }), { range: { num: { gte: 5, lt: 9 } } });
  assert.deepEqual(
    filterQuery({
      op: 'and',
      args: [
        { op: 'eq', field: 'tenant', value: 1 },
        { op: 'range', field: 'num', gte: 0, lt: 2 },
      ],
    }),
    { bool: { filter: [{ term: { tenant: 1 } }, { range: { num: { gte: 0, lt: 2 } } }] } },
  );
});

test('knobs of the wrong kind are one line naming the knob', async () => {
  await assert.rejects(opened.session.setKnobs({ ef_search: 0 }), /^UserError: opensearch: knob ef_search must be an integer 1\.\.10000, got 0$/);
  await assert.rejects(opened.session.setKnobs({ ef: 8 }), /unknown knob "ef"/);
});

/** What a connection to port from user `uid` (null: this process's) gets: "refused ..." or "answered". */
function asUser(port: number, uid: number | null): string {
  const code = `const s=require('net').connect(${port},'127.0.0.1');s.on('connect',()=>{console.log('answered');s.destroy()});s.on('error',e=>console.log('refused '+e.code))`;
  const who = uid === null ? {} : { uid, gid: uid };
  return spawnSync(process.execPath, ['-e', code], { ...who, encoding: 'utf8', timeout: 10_000 }).stdout.trim();
}

test('both ports of the server are closed to other local users while it runs (as root)', {
  skip: process.getuid?.() !== 0 && 'needs root (a firewall rule)',
}, () => {
  const { port, params } = opened.handle.connection;
  for (const p of [port, Number(params.transport_port)]) {
    assert.equal(asUser(p, null), 'answered', `port ${p}`);
    assert.match(asUser(p, 65534), /^refused (ECONNREFUSED|ECONNRESET)$/, `port ${p}`);
  }
});

// The suite's write checks and its reopen, which stops the server and starts it again on its data.
contractSuite('opensearch', join(PARTICIPANTS_DIR, 'opensearch'), { shared: () => opened, part: 'writes' });
