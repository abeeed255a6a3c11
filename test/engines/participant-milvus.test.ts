// Milvus on its real server (Milvus 2.3.5 standalone from the `milvus` wheel, started as the
// runner starts it), end to end on the harness's small synthetic set through the Python host:
// recall against a naive exact search along the ef ladder, filters, writes and a restart on the
// same data (the contract suite), the version read from the server, a login without the password
// refused, and every port of the server closed to other users and hosts while it runs (as root).
// Needs participants/milvus/provision.sh. The suite's reads run first, the tests here, then its
// writes and reopen (which restarts the server on its data).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { loggedIn } from '../../participants/milvus/adapter.ts';
import { PARTICIPANTS_DIR } from '../../src/runner/participants.ts';
import { reapOrphans } from '../../src/runner/server.ts';
import { CONTRACT_QUERIES, CONTRACT_ROWS, contractSuite } from '../contract/suite.ts';
import { checkLadder } from '../helpers/participant-harness.ts';
import { openServerOnSynthetic, remoteAnswersAsLoaded } from '../helpers/server-harness.ts';

let opened: Awaited<ReturnType<typeof openServerOnSynthetic>>;

before(async () => {
  opened = await openServerOnSynthetic('milvus', { n: CONTRACT_ROWS, nq: CONTRACT_QUERIES });
});
after(async () => {
  await opened?.cleanup();
  reapOrphans();
});

contractSuite('milvus', join(PARTICIPANTS_DIR, 'milvus'), { shared: () => opened, part: 'reads' });

const venvPython = join(process.env.VECBENCH_CACHE ?? '/var/cache/vecbench', 'venv', 'milvus', 'bin', 'python');

/** The ports the server was started on: the launcher's argument (its command line holds no secret). */
function serverPorts(): Record<string, number> {
  const args = readFileSync(`/proc/${opened.handle.pid}/cmdline`, 'utf8').split('\0');
  const json = args.find((a) => a.startsWith('{"proxy"'));
  assert.ok(json, args.join(' '));
  return JSON.parse(json) as Record<string, number>;
}

test('a server the user runs (--connect milvus=http://user:password@host:port): checked, a wrong password refused, answered through as loaded', async () => {
  const { port, params } = opened.handle.connection;
  await remoteAnswersAsLoaded(opened, `http://root:${encodeURIComponent(String(params.password))}@127.0.0.1:${port}`, { ef: 64 });
  const remote = opened.participant.adapter.server!.remote!;
  await assert.rejects(remote.check(remote.connection(new URL(`http://root:wrong@127.0.0.1:${port}`))), /the login was refused/);
  assert.deepEqual(remote.connection(new URL('http://milvus.example')), { host: 'milvus.example', port: 19530, dataDir: '', params: {} });
});

test('the version is read from the server', async () => {
  assert.match(await opened.participant.adapter.engineVersion(), /^Milvus v2\.3\.5-lite \(server; pymilvus 2\.3\.8\)$/);
});

test('the ladder climbs: recall at the top >= 0.95, never lower at the top than at the bottom', async () => {
  const pts = await checkLadder(opened, 'none', 10);
  assert.ok(pts.at(-1)!.recall >= 0.95, `top recall ${pts.at(-1)!.recall}`);
  assert.ok(pts.at(-1)!.recall >= pts[0].recall);
  for (const p of pts) assert.equal(p.unknownOrDuplicate, 0);
});

test('knobs of the wrong kind are one line naming the knob', async () => {
  await assert.rejects(opened.session.setKnobs({ ef: 0 }), /^UserError: milvus: knob ef must be an integer 1\.\.32768, got 0$/);
  await assert.rejects(opened.session.setKnobs({ nprobe: 8 }), /unknown knob "nprobe"/);
});

test('a login without the password, or with another, is refused; with it, accepted', async () => {
  const { port, params } = opened.handle.connection;
  assert.equal(await loggedIn(port, String(params.password)), true);
  assert.equal(await loggedIn(port, 'Milvus'), false, 'the default password is gone');
  // pymilvus over gRPC: no credentials, then root's default password.
  const script = `
import sys
from pymilvus import connections, utility
for user, password in (("", ""), ("root", "Milvus")):
    try:
        connections.connect("t", host="127.0.0.1", port=sys.argv[1], user=user, password=password, timeout=20)
        utility.list_collections(using="t")
        print("accepted")
    except Exception as e:
        print("refused", "UNAUTHENTICATED" if "UNAUTHENTICATED" in str(e) else str(e).splitlines()[0])
    connections.disconnect("t")
`;
  const r = spawnSync(venvPython, ['-c', script, String(port)], { encoding: 'utf8', timeout: 120_000 });
  assert.deepEqual(r.stdout.trim().split('\n'), ['refused UNAUTHENTICATED', 'refused UNAUTHENTICATED'], r.stderr);
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
  assert.equal(Object.keys(ports).length, 12);
  let listening = 0;
  for (const [name, port] of Object.entries(ports)) {
    // A port the server does not use (Milvus 2.3 merged the index coordinator into the data
    // coordinator) refuses everyone: only the ports this user reaches are compared.
    if (!asUser(port, null).startsWith('answered')) continue;
    listening++;
    assert.match(asUser(port, 65534), /^refused (ECONNREFUSED|ECONNRESET)$/, `port ${name} ${port}`);
  }
  assert.ok(listening >= 10, `${listening} ports answered`);
  // Other hosts: the same ports are refused on every interface but loopback.
  const table = spawnSync('nft', ['list', 'table', 'inet', `vecbench_${process.pid}_${ports.proxy}`], { encoding: 'utf8' }).stdout;
  assert.match(table, /hook input/);
  assert.match(table, /iif != "lo" tcp dport \{ [\d, ]+ \} reject with tcp reset/);
  for (const port of Object.values(ports)) assert.ok(table.includes(String(port)), `port ${port} in\n${table}`);
});

// The suite's write checks and its reopen, which stops the server and starts it again on its data.
contractSuite('milvus', join(PARTICIPANTS_DIR, 'milvus'), { shared: () => opened, part: 'writes' });
