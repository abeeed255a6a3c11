// Server data directories a server's own user can reach (src/runner/server-data.ts): a real
// pgvector run (PostgreSQL runs as postgres) with --out under a 0700 directory, as any clone in
// /root is; the relocated data's link, owner and clean-up; reaping data whose home is gone; and
// a base or link someone else planted is never used or followed. Runs as root, as CI does.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { after, test } from 'node:test';
import { discardHome, engineHome, engineWorkDir } from '../../src/runner/engine-home.ts';
import { run } from '../../src/runner/run.ts';
import { makeServerDataDir, reapServerData, removeServerData, serverDataBase, type ServerUser } from '../../src/runner/server-data.ts';
import { reapOrphans, userIds } from '../../src/runner/server.ts';
import { UserError } from '../../src/util/errors.ts';

const cleanup: (() => void)[] = [];
after(() => {
  for (const c of cleanup.reverse()) c();
  reapOrphans();
});

/** A directory closed to every other user, like /root. */
function closedDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  assert.equal(statSync(dir).mode & 0o777, 0o700);
  return dir;
}

function postgresUser(): ServerUser {
  const ids = userIds('postgres');
  assert.ok(ids, 'the postgres user exists (npm run setup)');
  return { name: 'postgres', ...ids };
}

test('pgvector runs with --out under a 0700 directory; its data is linked from the engine home and goes with it', async () => {
  const closed = closedDir('vecbench-closed-');
  const out = join(closed, 'out');
  const results = await run({
    dataset: 'synthetic-2k',
    participants: ['pgvector'],
    outDir: out,
    dataDir: join(closed, 'data'),
    clients: 2,
    groups: [{ filter: 'none', k: 10 }],
    pointTimeoutS: 300,
    loadTimeoutS: 600,
    keepEngines: true,
  });
  assert.equal(results.length, 1, 'pgvector was measured (not stopped)');
  const [r] = results;
  assert.equal(r.run.complete, true);
  assert.ok(r.groups[0].points.length > 0);
  // The cold start restarted the server on the same (relocated) data.
  assert.ok(r.resources?.cold_first_query_s, `cold start: ${JSON.stringify(r.resources?.unmeasured)}`);

  const home = engineHome(out, 'synthetic-2k', 'pgvector');
  const link = join(engineWorkDir(home), 'server');
  assert.ok(lstatSync(link).isSymbolicLink(), '--keep-engines keeps the link in the home');
  const data = readlinkSync(link);
  assert.equal(dirname(data), serverDataBase());
  const st = statSync(data);
  assert.equal(st.mode & 0o777, 0o700);
  assert.equal(st.uid, postgresUser().uid, "owned by the server's user");
  assert.ok(existsSync(join(data, 'PG_VERSION')), 'the kept cluster is there');
  assert.equal(JSON.parse(readFileSync(`${data}.json`, 'utf8')).link, link);

  discardHome(home);
  assert.equal(existsSync(data), false, 'removed with the home');
  assert.equal(existsSync(`${data}.json`), false);
});

test('relocated data whose engine home is gone is reaped; data a home still links to is kept', async () => {
  const closed = closedDir('vecbench-reap-data-');
  const user = postgresUser();
  const keptWork = join(closed, 'kept', 'work');
  const goneWork = join(closed, 'gone', 'work');
  const kept = makeServerDataDir(keptWork, user, 'test-kept');
  const gone = makeServerDataDir(goneWork, user, 'test-gone');
  cleanup.push(() => [kept, gone].forEach((d) => rmSync(d, { recursive: true, force: true })));
  assert.equal(dirname(kept), serverDataBase());
  // Their runner is gone: a finished child's PID.
  const dead = spawn('/bin/true');
  await new Promise((r) => dead.on('exit', r));
  for (const dir of [kept, gone]) {
    const claim = JSON.parse(readFileSync(`${dir}.json`, 'utf8'));
    writeFileSync(`${dir}.json`, JSON.stringify({ ...claim, runner: dead.pid }));
  }
  // A live runner's data is never reaped, whatever its link says.
  const mine = makeServerDataDir(join(closed, 'mine', 'work'), user, 'test-mine');
  rmSync(join(closed, 'mine'), { recursive: true, force: true });
  cleanup.push(() => rmSync(mine, { recursive: true, force: true }));

  rmSync(join(closed, 'gone'), { recursive: true, force: true });
  const reaped = reapServerData();
  assert.ok(reaped.includes(basename(gone)));
  assert.equal(existsSync(gone), false);
  assert.equal(existsSync(`${gone}.json`), false);
  assert.ok(existsSync(kept), 'a home still links to it');
  assert.ok(existsSync(mine), 'its runner is alive');
  removeServerData(keptWork);
  assert.equal(existsSync(kept), false);
});

test('a server its user can reach keeps its data in the work directory', () => {
  const open = mkdtempSync(join(tmpdir(), 'vecbench-open-'));
  cleanup.push(() => rmSync(open, { recursive: true, force: true }));
  chmodSync(open, 0o755);
  const dir = makeServerDataDir(join(open, 'work'), postgresUser(), 'test-open');
  assert.equal(dir, join(open, 'work', 'server'));
  assert.ok(lstatSync(dir).isDirectory());
});

test('a base someone else can write is refused, and a link outside the base is never followed', () => {
  const closed = closedDir('vecbench-hostile-base-');
  const base = join(closed, 'base');
  mkdirSync(base);
  chmodSync(base, 0o777);
  chmodSync(closed, 0o755);
  const prev = process.env.VECBENCH_SERVER_DATA;
  process.env.VECBENCH_SERVER_DATA = base;
  try {
    const work = join(closed, 'shut', 'work');
    mkdirSync(dirname(work), { mode: 0o700 });
    assert.throws(
      () => makeServerDataDir(work, postgresUser(), 'test'),
      (e: Error) => e instanceof UserError && /not a directory of yours that only you can write/.test(e.message) && !e.message.includes('\n'),
    );
    // A planted link to a victim directory: removing the data removes the link only.
    const victim = join(closed, 'victim');
    mkdirSync(victim);
    writeFileSync(join(victim, 'precious'), 'x');
    mkdirSync(work, { recursive: true });
    symlinkSync(victim, join(work, 'server'));
    removeServerData(work);
    assert.ok(existsSync(join(victim, 'precious')));
    assert.equal(existsSync(join(work, 'server')), false);
  } finally {
    if (prev === undefined) delete process.env.VECBENCH_SERVER_DATA;
    else process.env.VECBENCH_SERVER_DATA = prev;
  }
});
