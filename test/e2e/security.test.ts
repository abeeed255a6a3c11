// What an attacker tried (docs/security.md lists each case): files that are input (a ground-truth
// plan, a Slurm partition), shared temporary directories another local user prepared first
// (the server registry, the server data base, the transpiler's cache), and a load worker's port
// reached without its secret, replayed against the fixed code. Each test did harm on the code before the fix; each now ends in one line and
// leaves the victim untouched. The local attacker is the user nobody (65534) where ownership
// matters; the tests run as root, as CI does, and skip nothing when they do not.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { writePrepared } from '../../src/datasets/layout.ts';
import { generateSynthetic } from '../../src/prepare/synthetic.ts';
import { MAX_SHARDS, readPlan, writePlan } from '../../src/groundtruth/plan.ts';
import { writeSlurmScripts } from '../../src/groundtruth/schedulers.ts';
import { reapServerData } from '../../src/runner/server-data.ts';
import { reapOrphans, spawnServer } from '../../src/runner/server.ts';
import { UserError } from '../../src/util/errors.ts';
import { proof } from '../../src/loadgen/remote-auth.ts';
import { LIMITS, PROTOCOL_VERSION } from '../../src/loadgen/remote-wire.ts';
import { startLoadWorker } from '../../src/loadgen/remote-worker.ts';

process.env.VECBENCH_QUIET = '1';
const BIN = join(import.meta.dirname, '..', '..', 'bin', 'vecbench.js');
const NOBODY = 65534;
const dir = mkdtempSync(join(tmpdir(), 'vecbench-security-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A one-line UserError whose message matches `re`. */
function refused(re: RegExp) {
  return (e: unknown) => {
    assert.ok(e instanceof UserError, `not a UserError: ${e}`);
    assert.ok(!e.message.includes('\n'), `not one line: ${JSON.stringify(e.message)}`);
    assert.match(e.message, re);
    return true;
  };
}

describe('a ground-truth plan is input', () => {
  const data = join(dir, 'data');
  const planDir = join(dir, 'plan');
  let good: Record<string, unknown>;
  before(async () => {
    await writePrepared(data, 'small', generateSynthetic(400, 20));
    await writePlan(data, 'small', 2, planDir);
    good = JSON.parse(readFileSync(join(planDir, 'plan.json'), 'utf8'));
  });
  /** Writes a plan edited by `edit` into a directory of its own and reads it back. */
  function readEdited(name: string, edit: (p: Record<string, any>) => void) {
    const d = join(dir, `plan-${name}`);
    mkdirSync(d, { recursive: true });
    const p = structuredClone(good) as Record<string, any>;
    edit(p);
    writeFileSync(join(d, 'plan.json'), JSON.stringify(p));
    return () => readPlan(d);
  }

  test('a newline in the dataset name (a shell line in shards.sbatch) is refused, and the scripts never carry one', () => {
    assert.throws(
      readEdited('newline', (p) => (p.dataset.name = 'x\nid > /tmp/pwned #')),
      refused(/field dataset\.name: not a dataset name/),
    );
    // Even a plan that skipped readPlan cannot put a line into the scripts.
    const plan = readPlan(planDir);
    assert.throws(() => writeSlurmScripts(planDir, { ...plan, dataset: { ...plan.dataset, name: 'x\nid' } }), refused(/line break or control character/));
    assert.throws(() => writeSlurmScripts(planDir, plan, { partition: 'debug\n$(id)' }), refused(/--partition .* is not a Slurm partition name/));
    assert.throws(() => writeSlurmScripts(planDir, plan, { partition: '`id`' }), refused(/not a Slurm partition name/));
    const ok = writeSlurmScripts(planDir, plan, { partition: 'batch,debug' });
    for (const f of [ok.shards, ok.merge]) {
      const text = readFileSync(f, 'utf8');
      for (const line of text.split('\n').filter((l) => !l.startsWith('#') && l.trim() !== ''))
        assert.match(line, /^(set -euo pipefail|exec '[^']+' '[^']+' groundtruth)/, line);
    }
  });

  test('a shard output or filter name that leaves the plan directory is refused before anything is written or removed', () => {
    const victim = join(dir, 'escaped', 'victim.txt');
    mkdirSync(join(dir, 'escaped'), { recursive: true });
    writeFileSync(victim, 'keep me');
    assert.throws(
      readEdited('output', (p) => (p.shards[0].output = '../escaped/victim.txt')),
      refused(/field shards\.0\.output: not a shard output name/),
    );
    assert.throws(
      readEdited('filter', (p) => (p.filters[0] = '/../../escaped/important')),
      refused(/field filters\.0: not a standard filter kind/),
    );
    assert.throws(
      readEdited('unit-filter', (p) => (p.shards[0].units[0].filter = '../x')),
      refused(/not a standard filter kind/),
    );
    assert.throws(
      readEdited('input', (p) => (p.inputs[0].file = '../../etc/passwd')),
      refused(/field inputs\.0\.file: not a file name of the dataset/),
    );
    assert.equal(readFileSync(victim, 'utf8'), 'keep me');
  });

  test(`a plan of 300,000 shards is one line, not a stack overflow (at most ${MAX_SHARDS})`, () => {
    assert.throws(
      readEdited('huge', (p) => {
        const rows = p.shards[0].rows;
        p.shards = Array.from({ length: 300_000 }, (_, i) => ({ index: i, output: `shard-${i}.bin`, rows, units: [{ filter: 'none', queries: [i % 20] }] }));
      }),
      refused(/field shards: /),
    );
  });
});

describe('shared temporary directories another user prepared', () => {
  const saved = { registry: process.env.VECBENCH_SERVER_REGISTRY, data: process.env.VECBENCH_SERVER_DATA };
  after(() => {
    for (const [k, v] of [
      ['VECBENCH_SERVER_REGISTRY', saved.registry],
      ['VECBENCH_SERVER_DATA', saved.data],
    ] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });

  test("the server registry: a directory of another user's, or a link, is refused; a server is never started on it and nothing in the target is removed", () => {
    // The attacker's directory, with a forged pid file and a victim file.
    const theirs = join(dir, 'their-registry');
    mkdirSync(theirs, { mode: 0o777 });
    writeFileSync(join(theirs, '1.json'), JSON.stringify({ name: 'x', pid: 1, start: 0, runner: 999999, runnerStart: 0, dataDir: '/', started: '' }));
    chownSync(theirs, NOBODY, NOBODY);
    process.env.VECBENCH_SERVER_REGISTRY = theirs;
    assert.throws(() => reapOrphans(), refused(/belongs to uid 65534, not to you/));
    assert.throws(
      () => spawnServer({ name: 'sleeper', command: '/bin/sleep', args: ['30'], dataDir: dir, logFile: join(dir, 'sleeper.log') }),
      refused(/their-registry belongs to uid 65534/),
    );
    assert.deepEqual(readdirSync(theirs), ['1.json']);

    // A link to a victim directory full of *.json files.
    const victims = join(dir, 'victims');
    mkdirSync(victims);
    writeFileSync(join(victims, 'precious.json'), '{}');
    const link = join(dir, 'link-registry');
    symlinkSync(victims, link);
    process.env.VECBENCH_SERVER_REGISTRY = link;
    assert.throws(() => reapOrphans(), refused(/link-registry is a symbolic link/));
    assert.deepEqual(readdirSync(victims), ['precious.json']);
  });

  test('the server registry of our own: a planted link in place of a pid file is never written through', () => {
    const mine = join(dir, 'my-registry');
    process.env.VECBENCH_SERVER_REGISTRY = mine;
    const target = join(dir, 'secret.txt');
    writeFileSync(target, 'secret', { mode: 0o600 });
    const server = spawnServer({ name: 'sleeper', command: '/bin/sleep', args: ['30'], dataDir: dir, logFile: join(dir, 'sleeper2.log') });
    try {
      // The pid file was created exclusively in a directory only we can write.
      const files = readdirSync(mine);
      assert.deepEqual(files, [`${server.pid}.json`]);
      // A link planted under a pid file's name is skipped by the reaper, never followed.
      symlinkSync(target, join(mine, '424242.json'));
      reapOrphans();
      assert.equal(readFileSync(target, 'utf8'), 'secret');
      assert.ok(existsSync(join(mine, `${server.pid}.json`)), 'the live server of a live runner is kept');
    } finally {
      server.killNow();
    }
  });

  test("a server's environment holds no secret of vecbench's (connect URLs, masked secrets, the load secret, declared credentials)", () => {
    process.env.VECBENCH_SERVER_REGISTRY = join(dir, 'env-registry');
    const env = {
      ...process.env,
      VECBENCH_CONNECT_PGVECTOR: 'postgres://u:Pw-secret-1@h/db',
      VECBENCH_SECRETS: 'Pw-secret-2',
      VECBENCH_LOAD_SECRET: 'Pw-secret-3-long-enough',
      PGPASSWORD: 'Pw-secret-4',
      REDISCLI_AUTH: 'Pw-secret-5',
      HARMLESS: 'kept',
    };
    const server = spawnServer({ name: 'env-probe', command: '/bin/sleep', args: ['30'], env, dataDir: dir, logFile: join(dir, 'env.log') });
    try {
      // setpriv execs the command in place: the pid is the server's.
      let seen = '';
      for (let i = 0; i < 100 && !seen.includes('HARMLESS'); i++) {
        seen = readFileSync(`/proc/${server.pid}/environ`, 'utf8');
        if (!seen.includes('HARMLESS')) spawnSync('sleep', ['0.05']);
      }
      assert.match(seen, /(^|\0)HARMLESS=kept(\0|$)/);
      assert.doesNotMatch(seen, /Pw-secret/);
    } finally {
      server.killNow();
    }
  });

  test("the server data base: another user's directory is refused before anything in it is removed", () => {
    const base = join(dir, 'their-data');
    mkdirSync(base, { mode: 0o755 });
    mkdirSync(join(base, 'precious'));
    writeFileSync(join(base, 'precious.json'), JSON.stringify({ link: '/nowhere', runner: 999999, runnerStart: 0, created: '' }));
    chownSync(base, NOBODY, NOBODY);
    process.env.VECBENCH_SERVER_DATA = base;
    assert.throws(() => reapServerData(), refused(/is not a directory of yours that only you can write/));
    assert.ok(existsSync(join(base, 'precious')));
  });

  test('the CLI transpiles nothing at start: no tsx cache under its temporary directory', () => {
    const tmp = join(dir, 'cli-tmp');
    mkdirSync(tmp);
    const r = spawnSync(process.execPath, [BIN, '--help'], { env: { ...process.env, TMPDIR: tmp }, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(
      readdirSync(tmp).filter((f) => f.startsWith('tsx')),
      [],
    );
  });
});

describe('--connect', () => {
  test('its help says a password on the command line is visible in ps, and names the variable that keeps it off', () => {
    const r = spawnSync(process.execPath, [BIN, 'run', '--help'], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const help = r.stdout.replace(/\s+/g, ' ');
    assert.match(
      help,
      /a password written here is visible to every local user in ps while the run lasts: give the URL in VECBENCH_CONNECT_<PARTICIPANT> instead/,
    );
  });
});

describe('a server that checks no credential is closed to other local users', { skip: process.getuid?.() !== 0 && 'needs root (a firewall rule)' }, () => {
  /** What a connection from the user nobody to port gets: "answered" or "refused CODE". */
  const asNobody = (port: number): string => {
    const code = `const s=require('net').connect(${port},'127.0.0.1');s.on('connect',()=>{console.log('answered');s.destroy()});s.on('error',e=>console.log('refused '+e.code))`;
    return spawnSync(process.execPath, ['-e', code], { uid: NOBODY, gid: NOBODY, encoding: 'utf8', timeout: 10_000 }).stdout.trim();
  };
  const asMe = (port: number) =>
    new Promise<string>((resolve) => {
      const s = createConnection({ host: '127.0.0.1', port }, () => {
        s.destroy();
        resolve('answered');
      });
      s.on('error', (e: NodeJS.ErrnoException) => resolve(`refused ${e.code}`));
    });

  test("while it runs only the run's user connects; once stopped, the rule is gone; a dead runner's rule is reaped", async () => {
    const { freePort } = await import('../../src/runner/server.ts');
    const port = await freePort();
    const log = join(dir, 'guarded.log');
    const proc = spawnServer({
      name: 'guarded',
      command: process.execPath,
      args: ['-e', `require('net').createServer((s) => s.end()).listen(${port}, '127.0.0.1')`],
      dataDir: dir,
      logFile: log,
      closeToOthers: port,
    });
    try {
      assert.equal(proc.portGuard?.closed, true);
      for (let i = 0; i < 50 && (await asMe(port)) !== 'answered'; i++) await new Promise((r) => setTimeout(r, 100));
      assert.equal(await asMe(port), 'answered');
      assert.match(asNobody(port), /^refused (ECONNREFUSED|ECONNRESET)$/);
    } finally {
      await proc.stop();
    }
    const tables = spawnSync('nft', ['list', 'tables'], { encoding: 'utf8' }).stdout;
    assert.ok(!tables.includes(`vecbench_${process.pid}_${port}`), tables);
    // A rule left by a runner that was killed (its PID is gone) goes with the next reap.
    const stale = 'vecbench_999999999_1';
    assert.equal(spawnSync('nft', ['add', 'table', 'inet', stale]).status, 0);
    reapOrphans();
    assert.ok(!spawnSync('nft', ['list', 'tables'], { encoding: 'utf8' }).stdout.includes(stale));
  });

  test('a server on several ports of every interface: each is closed to other users, and other hosts are refused on every interface but loopback', async () => {
    const { freePort } = await import('../../src/runner/server.ts');
    const ports = [await freePort(), await freePort()];
    const proc = spawnServer({
      name: 'guarded-many',
      command: process.execPath,
      args: ['-e', `for (const p of ${JSON.stringify(ports)}) require('net').createServer((s) => s.end()).listen(p, '0.0.0.0')`],
      dataDir: dir,
      logFile: join(dir, 'guarded-many.log'),
      closeToOthers: { ports, everyInterface: true },
    });
    const table = `vecbench_${process.pid}_${ports[0]}`;
    try {
      assert.equal(proc.portGuard?.closed, true);
      for (const port of ports) {
        for (let i = 0; i < 50 && (await asMe(port)) !== 'answered'; i++) await new Promise((r) => setTimeout(r, 100));
        assert.equal(await asMe(port), 'answered');
        assert.match(asNobody(port), /^refused (ECONNREFUSED|ECONNRESET)$/);
      }
      const rules = spawnSync('nft', ['list', 'table', 'inet', table], { encoding: 'utf8' }).stdout;
      // (nft may list a set's elements in its own order.)
      const set = `\\{ (${ports[0]}, ${ports[1]}|${ports[1]}, ${ports[0]}) \\}`;
      assert.match(rules, new RegExp(`oif "lo" tcp dport ${set} meta skuid != 0 reject with tcp reset`));
      assert.match(rules, new RegExp(`iif != "lo" tcp dport ${set} reject with tcp reset`));
    } finally {
      await proc.stop();
    }
    assert.ok(!spawnSync('nft', ['list', 'tables'], { encoding: 'utf8' }).stdout.includes(table));
  });
});

describe('the load worker trusts no coordinator without the secret', () => {
  const SECRET = 'a-test-secret-of-enough-length';
  let server: Awaited<ReturnType<typeof startLoadWorker>>['server'];
  let port = 0;
  before(async () => {
    const w = await startLoadWorker('127.0.0.1', 0, 2, SECRET);
    server = w.server;
    port = w.port;
  });
  after(() => server.close());

  /** Sends raw lines to the worker; resolves with every line it answered until it closed. */
  function talk(lines: (challenge: string) => string[], raw?: Buffer): Promise<Record<string, any>[]> {
    return new Promise((resolve, reject) => {
      const sock = createConnection({ host: '127.0.0.1', port });
      const got: Record<string, any>[] = [];
      let buf = '';
      sock.on('data', (d) => {
        buf += d.toString('utf8');
        for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
          const m = JSON.parse(buf.slice(0, nl));
          buf = buf.slice(nl + 1);
          got.push(m);
          if (m.type === 'challenge') {
            if (raw) sock.write(raw);
            for (const l of lines(m.nonce)) sock.write(`${l}\n`);
          }
        }
      });
      sock.on('close', () => resolve(got));
      sock.on('error', reject);
      setTimeout(() => sock.end(), 3000);
    });
  }
  const hello = (nonce: string, secret: string) => {
    const mine = 'ab'.repeat(32);
    return JSON.stringify({ type: 'hello', id: 1, version: PROTOCOL_VERSION, nonce: mine, proof: proof(secret, 'coordinator', nonce, mine) });
  };
  const init = (module: string) =>
    JSON.stringify({ type: 'init', id: 2, spec: { module, options: {} }, maxInFlight: 1, d: 2, queries: Buffer.alloc(8).toString('base64') });

  test('an init without hello (the remote code execution) is refused and the connection closed; the data: module never runs', async () => {
    const marker = join(dir, 'rce-marker');
    const code = `import('node:fs').then((fs) => fs.writeFileSync(${JSON.stringify(marker)}, 'pwned'))`;
    const got = await talk(() => [init(`data:text/javascript,${encodeURIComponent(code)}`)]);
    assert.equal(got[0].type, 'challenge');
    assert.equal(got[1].type, 'error');
    assert.match(got[1].message, /hello with the shared secret first/);
    assert.equal(got.length, 2, 'nothing answered after the refusal');
    assert.equal(existsSync(marker), false);
  });

  test('a coordinator with another secret is refused in one line', async () => {
    const got = await talk((nonce) => [hello(nonce, 'not-the-secret-at-all-no')]);
    assert.equal(got[1].type, 'error');
    assert.match(got[1].message, /^authentication failed: the coordinator's secret is not this load-worker's/);
    assert.equal(got.length, 2);
  });

  test('with the secret, a data: module or a path is still refused: clients are named, and caps hold', async () => {
    const marker = join(dir, 'rce-marker-2');
    const code = `import('node:fs').then((fs) => fs.writeFileSync(${JSON.stringify(marker)}, 'pwned'))`;
    const got = await talk((nonce) => [
      hello(nonce, SECRET),
      init(`data:text/javascript,${encodeURIComponent(code)}`),
      JSON.stringify({ type: 'init', id: 3, spec: { client: '../../../tmp/x', options: {} }, maxInFlight: 1, d: 2, queries: '' }),
      JSON.stringify({ type: 'init', id: 4, spec: { client: 'builtin/http-json', options: {} }, workers: 800, maxInFlight: 1, d: 2, queries: '' }),
      JSON.stringify({ type: 'init', id: 5, spec: { client: 'builtin/http-json', options: {} }, maxInFlight: 10_000_000, d: 2, queries: '' }),
    ]);
    const byId = (id: number): Record<string, any> => got.find((m) => m.id === id) ?? {};
    assert.equal(byId(1).type, 'hello');
    assert.equal(byId(1).proof, proof(SECRET, 'worker', got[0].nonce, 'ab'.repeat(32)), 'the worker proves the secret too');
    assert.equal(byId(2).type, 'error');
    assert.match(byId(2).message, /spec/);
    assert.equal(byId(3).type, 'error');
    assert.match(byId(3).message, /no load client is named/);
    assert.match(byId(4).message, /800 client threads asked, at most 8 here/);
    assert.equal(byId(5).type, 'error');
    assert.equal(existsSync(marker), false);
  });

  test('a line past the cap is refused without holding it, and the worker serves the next coordinator', async () => {
    const huge = Buffer.alloc(LIMITS.lineBytes + 1024, 0x61);
    const got = await talk(() => [], huge);
    assert.equal(got.at(-1)?.type, 'error');
    assert.match(got.at(-1)?.message, /a message longer than \d+ bytes/);
    const again = await talk((nonce) => [hello(nonce, SECRET)]);
    assert.equal(again[1].type, 'hello');
  });

  test('without a secret the load worker does not start (one line)', () => {
    const env = { ...process.env };
    delete env.VECBENCH_LOAD_SECRET;
    delete env.VECBENCH_LOAD_SECRET_FILE;
    const r = spawnSync(process.execPath, [BIN, 'load-worker', '--listen', '127.0.0.1:0'], { env, encoding: 'utf8', timeout: 20_000 });
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /^vecbench: load workers need a shared secret: set VECBENCH_LOAD_SECRET .*\n$/);
  });
});
