// Credentials never reach result files, logs or the page (issue 7, item 4): the redaction rules
// (src/util/redact.ts) on their own, then real servers run by "the user" (a PostgreSQL and a
// Redis started here with a password) given to `vecbench run --connect`, and every byte the run
// leaves (every file under --out, stdout, stderr) searched for the password.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { writeJsonAtomic } from '../../src/util/atomic.ts';
import { MASK, redact, redactUrl, redactValue, registerSecret } from '../../src/util/redact.ts';
import { reapOrphans } from '../../src/runner/server.ts';
import { startParticipantServer, type StartedParticipant } from '../helpers/server-harness.ts';

const BIN = fileURLToPath(new URL('../../bin/vecbench.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'vecbench-secrets-'));
const data = join(dir, 'data');
after(() => {
  rmSync(dir, { recursive: true, force: true });
  reapOrphans();
});

/** Runs the CLI with logs on (no VECBENCH_QUIET): everything it prints is searched. */
function vecbench(args: string[], env: Record<string, string> = {}) {
  const base = { ...process.env };
  delete base.VECBENCH_QUIET;
  for (const k of Object.keys(base)) if (k.startsWith('VECBENCH_CONNECT_') || k === 'VECBENCH_SECRETS') delete base[k];
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env: { ...base, VECBENCH_DATA: data, ...env }, timeout: 900_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Every file under root (hidden ones and engine data included), recursively. */
function allFiles(root: string): string[] {
  if (!existsSync(root)) return [];
  const out: string[] = [];
  for (const e of readdirSync(root, { withFileTypes: true })) {
    const p = join(root, e.name);
    if (e.isDirectory()) out.push(...allFiles(p));
    else if (e.isFile()) out.push(p);
  }
  return out;
}

/** Asserts that no form of the secret is in any file under root, nor in the texts given. */
function assertNowhere(secret: string, root: string, texts: Record<string, string>): number {
  const strict = encodeURIComponent(secret).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  const forms = [...new Set([secret, encodeURIComponent(secret), strict])];
  const files = allFiles(root);
  for (const f of files) {
    const bytes = readFileSync(f);
    for (const s of forms) assert.equal(bytes.includes(s), false, `${f} holds the password (${s})`);
  }
  for (const [name, text] of Object.entries(texts)) for (const s of forms) assert.equal(text.includes(s), false, `${name} holds the password (${s}):\n${text}`);
  return files.length;
}

describe('redaction rules', () => {
  test('URL passwords, key=value and JSON credential pairs are masked; ordinary text is not', () => {
    assert.equal(
      redactUrl('postgres://vb:pa%40ss@db.example:5432/bench?sslpassword=k3y&application_name=x'),
      `postgres://vb:${MASK}@db.example:5432/bench?sslpassword=${MASK}&application_name=x`,
    );
    assert.equal(redact('to redis://:hunter2@10.0.0.1:6379 and postgres://u:p@ss@h/db'), `to redis://:${MASK}@10.0.0.1:6379 and postgres://u:${MASK}@h/db`);
    assert.equal(redact("host=h password=hunter2 user=u api_key = 'a b' X-Api-Key=zz"), `host=h password=${MASK} user=u api_key = ${MASK} X-Api-Key=${MASK}`);
    assert.equal(redact('{"password": "a\\"b", "db_token":"t", "key": "none/10"}'), `{"password": "${MASK}", "db_token":"${MASK}", "key": "none/10"}`);
    for (const plain of [
      'password authentication failed for user "vb"',
      'index.password: Expected string, received number',
      'tokenizer=wink ef_search=40 key=cat10/10',
      'http://127.0.0.1:8000/api/v2/heartbeat',
      'postgres://vb@h/db',
    ]) {
      assert.equal(redact(plain), plain);
    }
  });

  test('a registered secret is masked anywhere, in its URL-encoded form too', () => {
    registerSecret('Zq9!unit-secret');
    assert.equal(redact('said Zq9!unit-secret and Zq9!unit-secret'), `said ${MASK} and ${MASK}`);
    assert.equal(redact('as Zq9%21unit-secret in a URL'), `as ${MASK} in a URL`);
    // Too short to mask by value (it would eat ordinary text); URLs still mask it by rule.
    registerSecret('ab');
    assert.equal(redact('tab stab'), 'tab stab');
  });

  test('values of credential-named keys are masked at any depth; other values only by rule', () => {
    const v = redactValue({
      index: { m: 16, password: 'pw', db_password: 'q', tokenizer: 'x', key: 'none/10' },
      url: 'redis://u:pw@h:1',
      list: ['a', { secret: 's', ok: 3 }],
    });
    assert.deepEqual(v, {
      index: { m: 16, password: MASK, db_password: MASK, tokenizer: 'x', key: 'none/10' },
      url: `redis://u:${MASK}@h:1`,
      list: ['a', { secret: MASK, ok: 3 }],
    });
  });

  test('JSON files written by vecbench hold no credential', () => {
    const path = join(dir, 'unit', 'r.json');
    writeJsonAtomic(path, {
      settings: { index: { api_key: 'K-91x7-secret' } },
      groups: [{ reason: 'connect to redis://:Pw-55x-secret@10.1.1.1:6379 failed' }],
    });
    const text = readFileSync(path, 'utf8');
    assert.ok(!text.includes('K-91x7-secret') && !text.includes('Pw-55x-secret'), text);
    assert.equal(JSON.parse(text).settings.index.api_key, MASK);
  });

  test("a process's stdout and stderr are masked, also in a child that only inherited the secret", () => {
    const script = [
      "import { registerSecret, redactStandardStreams } from './src/util/redact.ts';",
      'redactStandardStreams();',
      "if (process.argv[2] === 'parent') registerSecret('Child-Visible-77');",
      "console.log('out Child-Visible-77');",
      "process.stderr.write(Buffer.from('err Child-Visible-77\\n'));",
      "if (process.argv[2] === 'parent') { const { spawnSync } = await import('node:child_process'); const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', process.argv[3], 'x', 'child'], { encoding: 'utf8', cwd: process.cwd() }); process.stdout.write('child said: ' + r.stdout + r.stderr); }",
    ].join('\n');
    const root = fileURLToPath(new URL('../..', import.meta.url));
    const env = { ...process.env };
    delete env.VECBENCH_SECRETS;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, 'x', 'parent', script], {
      encoding: 'utf8',
      cwd: root,
      env,
    });
    assert.equal(r.status, 0, r.stderr);
    const all = r.stdout + r.stderr;
    assert.ok(!all.includes('Child-Visible-77'), all);
    assert.match(r.stdout, /out \*\*\*/);
    assert.match(r.stderr, /err \*\*\*/);
    assert.match(r.stdout, /child said: out \*\*\*\nerr \*\*\*/);
  });
});

describe('a PostgreSQL given by URL with a password (--connect)', () => {
  const PASSWORD = 'S3cretPW';
  let server: StartedParticipant;
  let port = 0;

  before(async () => {
    const prep = vecbench(['prepare', 'synthetic-2000', '--data', data]);
    assert.equal(prep.code, 0, prep.stderr);
    // "The user's" server: a private cluster started through the participant's own lifecycle,
    // then given a login role with a password and password authentication on TCP.
    server = await startParticipantServer('pgvector', { n: 2000, d: 128 });
    port = server.handle.connection.port;
    const admin = new pg.Client({
      host: '127.0.0.1',
      port,
      user: 'postgres',
      database: 'postgres',
      password: String(server.handle.connection.params.password),
    });
    await admin.connect();
    await admin.query(`CREATE ROLE vb LOGIN PASSWORD '${PASSWORD}'`);
    await admin.query('CREATE DATABASE db OWNER vb');
    await admin.end();
    const inDb = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', database: 'db', password: String(server.handle.connection.params.password) });
    await inDb.connect();
    await inDb.query('CREATE EXTENSION vector');
    const hba = join(server.serverDir, 'pg_hba.conf');
    writeFileSync(hba, `host all vb 127.0.0.1/32 scram-sha-256\n${readFileSync(hba, 'utf8')}`);
    await inDb.query('SELECT pg_reload_conf()');
    await inDb.end();
  });
  after(async () => {
    await server?.handle.stop();
    if (server) rmSync(server.workDir, { recursive: true, force: true });
  });

  test('the run uses that server; no file under --out, no line of stdout or stderr holds the password', async () => {
    const out = join(dir, 'pg-out');
    const url = `postgres://vb:${PASSWORD}@127.0.0.1:${port}/db`;
    const r = vecbench([
      'run',
      '--dataset',
      'synthetic-2000',
      '--participants',
      'pgvector',
      '--groups',
      'none/10',
      '--clients',
      '2',
      '--concurrency',
      '1,2',
      '--out',
      out,
      '--connect',
      `pgvector=${url}`,
    ]);
    assert.equal(r.code, 0, r.stderr);
    const files = assertNowhere(PASSWORD, out, { stdout: r.stdout, stderr: r.stderr });
    assert.ok(files >= 2, `the result and the page were written (${files} files)`);
    assert.ok(existsSync(join(out, 'report', 'index.html')));
    assert.match(r.stderr, new RegExp(`postgres://vb:\\*\\*\\*@127\\.0\\.0\\.1:${port}/db`));

    const result = JSON.parse(readFileSync(join(out, 'synthetic-2000', 'pgvector.json'), 'utf8'));
    assert.equal(result.extra.connection.url, `postgres://vb:***@127.0.0.1:${port}/db`);
    assert.equal(result.extra.connection.started_by, 'user');
    const none10 = result.groups.find((g: { key: string }) => g.key === 'none/10');
    assert.ok(none10.points.length > 0 && none10.points.every((p: { recall: number }) => p.recall > 0), 'points were measured on the server');
    // The sweep's worker clients (the PostgreSQL fast path) authenticated with SCRAM as vb.
    const sweep = result.extra.concurrency as { points: { in_flight: number; requests: number; errors: number; recall: number }[] };
    assert.deepEqual(
      sweep.points.map((p) => p.in_flight),
      [1, 2],
    );
    for (const p of sweep.points) assert.ok(p.requests > 0 && p.errors === 0 && p.recall > 0, JSON.stringify(p));
    assert.match(result.engine_version, /PostgreSQL 15/);
    // Not ours to measure: memory and cold start are null with the reason.
    assert.equal(result.resources.mem_build_peak_bytes, null);
    assert.match(result.resources.unmeasured.cold_accept_s, /--connect/);
    // The rows are in the user's database, as the user vb.
    const c = new pg.Client({ host: '127.0.0.1', port, user: 'vb', password: PASSWORD, database: 'db' });
    await c.connect();
    const n = Number((await c.query<{ n: string }>('SELECT count(*) AS n FROM items')).rows[0].n);
    await c.end();
    assert.equal(n, 2000);

    // The page's data is the masked result; the page itself was searched above.
    const page = readFileSync(join(out, 'report', 'index.html'), 'utf8');
    assert.ok(page.includes(`postgres://vb:***@127.0.0.1:${port}/db`), 'the page shows where the engine was, masked');
  });

  test('a wrong password (from VECBENCH_CONNECT_PGVECTOR): one line, exit 2, the password in no output', () => {
    const out = join(dir, 'pg-wrong');
    const wrong = 'WrongPW-7781';
    const r = vecbench(['run', '--dataset', 'synthetic-2000', '--participants', 'pgvector', '--groups', 'none/10', '--out', out], {
      VECBENCH_CONNECT_PGVECTOR: `postgres://vb:${wrong}@127.0.0.1:${port}/db`,
    });
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(
      r.stderr,
      new RegExp(
        `^vecbench: the pgvector server at 127\\.0\\.0\\.1:${port} given by postgres://vb:\\*\\*\\*@127\\.0\\.0\\.1:${port}/db refused the connection: password authentication failed for user "vb"; check the user, password and database in the URL given with --connect pgvector=URL \\(or VECBENCH_CONNECT_PGVECTOR\\)`,
      ),
    );
    assertNowhere(wrong, out, { stdout: r.stdout, stderr: r.stderr });
    assertNowhere(PASSWORD, out, { stdout: r.stdout, stderr: r.stderr });
    assert.deepEqual(allFiles(out), [], 'nothing written');
  });

  test('a malformed --connect value is one line that masks the password too', () => {
    const r = vecbench([
      'run',
      '--dataset',
      'synthetic-2000',
      '--participants',
      'pgvector',
      '--connect',
      `pgvector postgres://vb:${PASSWORD}@127.0.0.1:${port}/db`,
    ]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^vecbench: write --connect as PARTICIPANT=URL/);
    assert.ok(!r.stderr.includes(PASSWORD) && !r.stdout.includes(PASSWORD), r.stderr);
  });
});

/** One Redis command on a fresh connection (inline form), the first reply line; with `auth`,
 * after an AUTH with that password (whose +OK is not returned). */
function redisCommand(port: number, line: string, auth?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = connect({ host: '127.0.0.1', port });
    let buf = '';
    const skip = auth === undefined ? 0 : 1;
    sock.on('error', reject);
    sock.on('connect', () => sock.write(`${auth === undefined ? '' : `AUTH ${auth}\r\n`}${line}\r\n`));
    sock.on('data', (d) => {
      buf += d.toString('latin1');
      const lines = buf.split('\r\n');
      if (lines.length > skip + 1) {
        sock.destroy();
        resolve(skip === 1 && lines[0] !== '+OK' ? lines[0] : lines[skip]);
      }
    });
  });
}

describe('a Redis given by URL with a password (AUTH)', () => {
  const PASSWORD = 'R3dis!PW-x';
  let server: StartedParticipant;
  let port = 0;

  before(async () => {
    if (!existsSync(join(data, 'synthetic-2000', 'manifest.json'))) assert.equal(vecbench(['prepare', 'synthetic-2000', '--data', data]).code, 0);
    server = await startParticipantServer('redis', { n: 2000, d: 128 });
    port = server.handle.connection.port;
    // The server the harness started has a password of its own; this test's replaces it (through
    // ACL: the harness' server has no CONFIG command).
    assert.equal(await redisCommand(port, `ACL SETUSER default resetpass >${PASSWORD}`, String(server.handle.connection.params.password)), '+OK');
  });
  after(async () => {
    await server?.handle.stop();
    if (server) rmSync(server.workDir, { recursive: true, force: true });
  });

  test('runs against it; the password (plain or URL-encoded) is in no file and no output; a wrong one is one line', async () => {
    const out = join(dir, 'redis-out');
    // '!' written escaped, as a careful user would: the decoded password is masked as well.
    const url = `redis://:${PASSWORD.replace('!', '%21')}@127.0.0.1:${port}`;
    const r = vecbench(['run', '--dataset', 'synthetic-2000', '--participants', 'redis', '--groups', 'none/10', '--clients', '2', '--out', out], {
      VECBENCH_CONNECT_REDIS: url,
    });
    assert.equal(r.code, 0, r.stderr);
    assertNowhere(PASSWORD, out, { stdout: r.stdout, stderr: r.stderr });
    const result = JSON.parse(readFileSync(join(out, 'synthetic-2000', 'redis.json'), 'utf8'));
    assert.equal(result.extra.connection.url, `redis://:***@127.0.0.1:${port}`);
    assert.ok(result.groups.find((g: { key: string }) => g.key === 'none/10').points.length > 0);
    assert.equal(await redisCommand(port, `AUTH ${PASSWORD}`), '+OK');

    const wrongOut = join(dir, 'redis-wrong');
    const w = vecbench([
      'run',
      '--dataset',
      'synthetic-2000',
      '--participants',
      'redis',
      '--groups',
      'none/10',
      '--out',
      wrongOut,
      '--connect',
      `redis=redis://:not-${encodeURIComponent(PASSWORD)}@127.0.0.1:${port}`,
    ]);
    assert.equal(w.code, 2, w.stderr);
    assert.equal(w.stderr.trim().split('\n').length, 1, w.stderr);
    assert.match(w.stderr, /^vecbench: the redis server at .* refused the connection: WRONGPASS/);
    assertNowhere(`not-${PASSWORD}`, wrongOut, { stdout: w.stdout, stderr: w.stderr });
    assertNowhere(PASSWORD, wrongOut, { stdout: w.stdout, stderr: w.stderr });
    assert.deepEqual(allFiles(wrongOut), []);
  });
});

describe('a --connect URL that does not parse (a / in the password, a typo in the scheme)', () => {
  // Each: the participant, the URL as a user might write it, its password, and what the one
  // line must say is wrong.
  const cases = [
    {
      participant: 'pgvector',
      url: 'postgres://vb:Ab3/xY9+Qz@127.0.0.1:5432/db',
      password: 'Ab3/xY9+Qz',
      says: /"postgres:\/\/vb:\*\*\*@127\.0\.0\.1:5432\/db": its password holds one of \/ \? #, .*percent-encoded \(\/ as %2F/,
    },
    {
      participant: 'pgvector',
      url: 'postgres:/u:S3cretPass@127.0.0.1:5432/db',
      password: 'S3cretPass',
      says: /"postgres:\/u:\*\*\*@127\.0\.0\.1:5432\/db" does not start with postgres:\/\/ or postgresql:\/\//,
    },
    {
      participant: 'pgvector',
      url: 'postgres//u:S3cretPass@127.0.0.1:5432/db',
      password: 'S3cretPass',
      says: /"postgres\/\/u:\*\*\*@127\.0\.0\.1:5432\/db" does not start with postgres:\/\//,
    },
    {
      participant: 'pgvector',
      url: 'u:S3cretPass@127.0.0.1:1/db',
      password: 'S3cretPass',
      says: /"u:\*\*\*@127\.0\.0\.1:1\/db" does not start with postgres:\/\/ or postgresql:\/\/; write it as postgres:\/\//,
    },
    {
      participant: 'redis',
      url: 'redis://:Ab3/xY9+Qz@127.0.0.1:6379',
      password: 'Ab3/xY9+Qz',
      says: /"redis:\/\/:\*\*\*@127\.0\.0\.1:6379": its password holds one of \/ \? #/,
    },
  ];

  test('the masking rule covers each form on its own', () => {
    for (const c of cases) {
      assert.ok(!redactUrl(c.url).includes(c.password), redactUrl(c.url));
      assert.ok(redactUrl(c.url).includes(MASK), redactUrl(c.url));
    }
  });

  let n = 0;
  for (const c of cases) {
    for (const via of ['--connect', 'VECBENCH_CONNECT'] as const) {
      test(`${c.url} through ${via}: one line saying what is wrong, exit 2, the password in no output`, () => {
        const out = join(dir, `unparsable-${n++}`);
        const args = ['run', '--dataset', 'synthetic-2000', '--participants', c.participant, '--groups', 'none/10', '--out', out];
        const r =
          via === '--connect'
            ? vecbench([...args, '--connect', `${c.participant}=${c.url}`])
            : vecbench(args, { [`VECBENCH_CONNECT_${c.participant.toUpperCase()}`]: c.url });
        assert.equal(r.code, 2, r.stderr);
        assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
        assert.match(r.stderr, new RegExp(`^vecbench: --connect ${c.participant}=URL \\(or VECBENCH_CONNECT_${c.participant.toUpperCase()}\\): `));
        assert.match(r.stderr, c.says);
        assert.doesNotMatch(r.stderr, / is a \w+ URL/, 'the scheme the parser guessed is not named as if the user meant it');
        assertNowhere(c.password, out, { stdout: r.stdout, stderr: r.stderr });
        assert.deepEqual(allFiles(out), [], 'nothing written');
      });
    }
  }

  test('a --connect value without = holding such a URL is masked too', () => {
    const r = vecbench(['run', '--dataset', 'synthetic-2000', '--participants', 'redis', '--connect', 'redis redis://:Ab3/xY9+Qz@127.0.0.1:6379']);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /^vecbench: write --connect as PARTICIPANT=URL/);
    assertNowhere('Ab3/xY9+Qz', join(dir, 'none'), { stdout: r.stdout, stderr: r.stderr });
  });
});
