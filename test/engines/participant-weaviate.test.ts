// Weaviate on its real server (v1.39.0 built from source by participants/weaviate/provision.sh,
// started as the runner starts it), end to end on the harness's small synthetic set over REST:
// recall against a naive exact search along the ef ladder, filters, writes and a restart on the
// same data (the contract suite), the version read from the server, ef applied by a schema
// update, requests without the API key refused, and every port closed to other users and hosts
// while it runs (as root). The suite's reads run first, the tests here, then its writes and reopen.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { request } from 'undici';
import { answers, CLASS } from '../../participants/weaviate/adapter.ts';
import { STANDARD_KINDS } from '../../src/datasets/groups.ts';
import { PARTICIPANTS_DIR } from '../../src/runner/participants.ts';
import { reapOrphans } from '../../src/runner/server.ts';
import { CONTRACT_QUERIES, CONTRACT_ROWS, contractSuite } from '../contract/suite.ts';
import { assertClean, checkLadder, checkPoint } from '../helpers/participant-harness.ts';
import { openServerOnSynthetic, remoteAnswersAsLoaded } from '../helpers/server-harness.ts';

let opened: Awaited<ReturnType<typeof openServerOnSynthetic>>;

before(async () => {
  opened = await openServerOnSynthetic('weaviate', { n: CONTRACT_ROWS, nq: CONTRACT_QUERIES });
});
after(async () => {
  await opened?.cleanup();
  reapOrphans();
});

contractSuite('weaviate', join(PARTICIPANTS_DIR, 'weaviate'), { shared: () => opened, part: 'reads' });

/** The server's listening ports, from its environment (REST is the runner's). */
function serverPorts(): number[] {
  const env = readFileSync(`/proc/${opened.handle.pid}/environ`, 'utf8').split('\0');
  const port = (name: string) => Number(env.find((e) => e.startsWith(`${name}=`))?.split('=')[1]);
  const names = ['GRPC_PORT', 'CLUSTER_GOSSIP_BIND_PORT', 'CLUSTER_DATA_BIND_PORT', 'RAFT_PORT', 'RAFT_INTERNAL_RPC_PORT'];
  return [opened.handle.connection.port, ...names.map(port)];
}

test('a server the user runs (--connect weaviate=http://:KEY@host:port): checked, a wrong key refused, and answered through as loaded', async () => {
  const { port, params } = opened.handle.connection;
  await remoteAnswersAsLoaded(opened, `http://:${params.apiKey}@127.0.0.1:${port}`, { ef: 64 });
  const remote = opened.participant.adapter.server!.remote!;
  await assert.rejects(remote.check(remote.connection(new URL(`http://:wrong-key@127.0.0.1:${port}`))), /refused the API key \(401\)/);
  assert.deepEqual(remote.connection(new URL('http://db.example:9000')), { host: 'db.example', port: 9000, dataDir: '', params: {} });
});

test('the version is read from the server', async () => {
  assert.equal(await opened.participant.adapter.engineVersion(), 'Weaviate 1.39.0');
});

test('the ladder climbs: recall at the top >= 0.95, never lower at the top than at the bottom', async (t) => {
  const pts = await checkLadder(opened, 'none', 10);
  t.diagnostic(`none/10 recall along ef: ${pts.map((p) => `${p.knobs.ef}:${p.recall.toFixed(3)}`).join(' ')}`);
  assert.ok(pts.at(-1)!.recall >= 0.95, `top recall ${pts.at(-1)!.recall}`);
  assert.ok(pts.at(-1)!.recall >= pts[0].recall);
  assertClean(pts);
});

test('filters are never violated, at every point of the k = 10 ladder', async (t) => {
  for (const kind of STANDARD_KINDS) {
    if (kind.name === 'none') continue;
    const pts = await checkLadder(opened, kind.name, 10);
    t.diagnostic(`${kind.name}/10 recall at the top: ${pts.at(-1)!.recall.toFixed(3)}`);
    assertClean(pts);
  }
});

test('ef reaches the class by a schema update', async () => {
  const { port, params } = opened.handle.connection;
  const efOf = async () => {
    const r = await request(`http://127.0.0.1:${port}/v1/schema/${CLASS}`, { headers: { authorization: `Bearer ${params.apiKey}` } });
    return ((await r.body.json()) as { vectorIndexConfig: { ef: number } }).vectorIndexConfig.ef;
  };
  await opened.session.setKnobs({ ef: 77 });
  assert.equal(await efOf(), 77);
  await opened.session.setKnobs({ ef: 384 });
  assert.equal(await efOf(), 384);
});

test('knobs of the wrong kind are one line naming the knob', async () => {
  await assert.rejects(opened.session.setKnobs({ ef: -1 }), /^UserError: weaviate: knob ef must be an integer 1\.\.100000 .*, got -1$/);
  await assert.rejects(opened.session.setKnobs({ nprobe: 8 }), /unknown knob "nprobe"/);
});

test('requests without the API key, or with another, are refused; with it, answered', async () => {
  const { port, params } = opened.handle.connection;
  assert.equal(await answers(port, String(params.apiKey)), true);
  assert.equal(await answers(port, 'not-the-key'), false);
  const anonymous = await request(`http://127.0.0.1:${port}/v1/schema`);
  await anonymous.body.dump();
  assert.equal(anonymous.statusCode, 401);
  // The internal cluster API asks for its own password (basic auth).
  const dataPort = serverPorts()[3];
  const internal = await request(`http://127.0.0.1:${dataPort}/nodes/status`);
  await internal.body.dump();
  assert.equal(internal.statusCode, 401);
});

/** What a connection to port from user `uid` (null: this process's) gets: "refused ..." or "answered". */
function asUser(port: number, uid: number | null): string {
  const code = `const s=require('net').connect(${port},'127.0.0.1');s.on('connect',()=>{console.log('answered');s.destroy()});s.on('error',e=>console.log('refused '+e.code))`;
  const who = uid === null ? {} : { uid, gid: uid };
  return spawnSync(process.execPath, ['-e', code], { ...who, encoding: 'utf8', timeout: 10_000 }).stdout.trim();
}

test('every port of the server is closed to other local users and to other hosts while it runs (as root)', {
  skip: process.getuid?.() !== 0 && 'needs root (a firewall rule)',
}, () => {
  const ports = serverPorts();
  assert.equal(new Set(ports).size, 6, ports.join(' '));
  for (const port of ports) {
    assert.equal(asUser(port, null), 'answered', `port ${port}`);
    assert.match(asUser(port, 65534), /^refused (ECONNREFUSED|ECONNRESET)$/, `port ${port}`);
  }
  const table = spawnSync('nft', ['list', 'table', 'inet', `vecbench_${process.pid}_${ports[0]}`], { encoding: 'utf8' }).stdout;
  assert.match(table, /iif != "lo" tcp dport \{ [\d, ]+ \} reject with tcp reset/);
  for (const port of ports) assert.ok(table.includes(String(port)), `port ${port} in\n${table}`);
});

// The suite's write checks and its reopen, which stops the server and starts it again on its data.
contractSuite('weaviate', join(PARTICIPANTS_DIR, 'weaviate'), { shared: () => opened, part: 'writes' });

// The suite's 3,000 rows are fewer than flatSearchCutoff (40,000), so every filtered search above
// was an exact scan of the matches. Here the cutoff is 0: each filter kind goes through the
// filtered HNSW walk, ACORN and sweeping, on a server of its own. (ACORN in 1.39.0 repeats its
// entry point in some answers; the adapter drops the copy, and such an answer comes back short.)
for (const strategy of ['acorn', 'sweeping'] as const) {
  test(`filtered graph walks (${strategy}, flatSearchCutoff 0) never violate a filter`, async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'vecbench-weaviate-settings-'));
    const settingsPath = join(dir, 'settings.json');
    const settings = JSON.parse(readFileSync(join(PARTICIPANTS_DIR, 'weaviate', 'settings.json'), 'utf8')) as { index: Record<string, unknown> };
    settings.index = { ...settings.index, filterStrategy: strategy, flatSearchCutoff: 0 };
    writeFileSync(settingsPath, JSON.stringify(settings));
    const walked = await openServerOnSynthetic('weaviate', { n: CONTRACT_ROWS, nq: CONTRACT_QUERIES, settingsPath });
    try {
      const recalls: string[] = [];
      for (const kind of STANDARD_KINDS) {
        if (kind.name === 'none') continue;
        const top = await checkPoint(walked, kind.name, 10, { ef: 512 });
        assertClean([top]);
        recalls.push(`${kind.name}:${top.recall.toFixed(3)}${top.shortResults ? ` (${top.shortResults} short)` : ''}`);
        // ACORN's recall is only recorded: on 3,000 rows a filter keeping 1 % of them (30 rows)
        // leaves its two-hop walk short of the matches (README: measured figures).
        if (strategy === 'sweeping') assert.ok(top.recall >= 0.8, `${kind.name}/10 recall ${top.recall} at ef 512`);
      }
      t.diagnostic(`recall@10 at ef 512: ${recalls.join(' ')}`);
    } finally {
      await walked.cleanup();
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
