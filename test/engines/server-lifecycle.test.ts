// Server lifecycle (src/runner/server.ts) with real servers: start on a free 127.0.0.1 port,
// health, stop by PID, a server that dies mid-run, and no server outliving a SIGKILLed runner.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { processTree } from '../../src/runner/resources.ts';
import { readAllResults } from '../../src/results/store.ts';
import { run } from '../../src/runner/run.ts';
import { freePort, processAlive, processStartTicks, reapOrphans, registryDir, spawnServer } from '../../src/runner/server.ts';
import { startParticipantServer } from '../helpers/server-harness.ts';

const cleanup: (() => Promise<void> | void)[] = [];
after(async () => {
  for (const c of cleanup.reverse()) await c();
  reapOrphans();
});

/** The processes of a tree that are still the same processes (PID and start time) and alive. */
function survivors(tree: { pid: number; start: number | null }[]): number[] {
  return tree.filter((p) => processAlive(p.pid) && processStartTicks(p.pid) === p.start).map((p) => p.pid);
}

async function waitFor(cond: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (cond()) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return cond();
}

test('freePort gives a port that can be bound on 127.0.0.1', async () => {
  const port = await freePort();
  assert.ok(port > 1024 && port < 65536);
  await new Promise<void>((resolve, reject) => {
    const s = createServer();
    s.on('error', reject);
    s.listen(port, '127.0.0.1', () => s.close(() => resolve()));
  });
});

test('redis: starts on a free port, answers its health check, stops by PID keeping its data', async () => {
  const s = await startParticipantServer('redis', { n: 10, d: 4 });
  cleanup.push(() => rmSync(s.workDir, { recursive: true, force: true }));
  assert.equal(s.handle.connection.host, '127.0.0.1');
  assert.ok(s.acceptS > 0);
  assert.equal(await s.handle.healthy(), true);
  assert.ok(processAlive(s.handle.pid));
  const pidFile = join(registryDir(), `${s.handle.pid}.json`);
  assert.ok(existsSync(pidFile), 'a pid file names the server while it runs');
  assert.equal(JSON.parse(readFileSync(pidFile, 'utf8')).runner, process.pid);
  await s.handle.stop();
  assert.equal(s.handle.alive, false);
  assert.equal(processAlive(s.handle.pid), false);
  assert.equal(existsSync(pidFile), false, 'the pid file goes with the server');
  assert.ok(existsSync(join(s.serverDir, 'dump.rdb')), 'SIGTERM made redis save its data');
  // Health after the stop: nobody answers on the port.
  assert.equal(await s.handle.healthy(), false);
});

test('a server that dies mid-run is detected: alive turns false, with the reason', async () => {
  const s = await startParticipantServer('redis', { n: 10, d: 4 });
  cleanup.push(async () => {
    await s.handle.stop();
    rmSync(s.workDir, { recursive: true, force: true });
  });
  let noticed = false;
  const watched = s.handle.waitExit().then(() => (noticed = true));
  process.kill(s.handle.pid, 'SIGKILL');
  await watched;
  assert.equal(noticed, true);
  assert.equal(s.handle.alive, false);
  assert.match(s.handle.exitReason ?? '', /SIGKILL/);
  assert.equal(await s.handle.healthy(), false);
});

test('a SIGKILLed runner leaves no server behind (PostgreSQL with its children, and Redis)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'vecbench-runner-kill-'));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  const script = join(dir, 'runner.mts');
  const harness = new URL('../helpers/server-harness.ts', import.meta.url).href;
  writeFileSync(
    script,
    `import { startParticipantServer } from ${JSON.stringify(harness)};
const pg = await startParticipantServer('pgvector', { n: 10, d: 4 });
const rd = await startParticipantServer('redis', { n: 10, d: 4 });
process.stdout.write(JSON.stringify({ pg: pg.handle.pid, rd: rd.handle.pid, dirs: [pg.workDir, rd.workDir] }) + '\\n');
setInterval(() => {}, 1000);
`,
  );
  const child = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  const pids = await new Promise<{ pg: number; rd: number; dirs: string[] }>((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0]));
    });
    child.on('exit', (code) => reject(new Error(`the runner exited (${code}) before starting its servers`)));
  });
  cleanup.push(() => pids.dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
  // PostgreSQL runs a tree: postmaster plus checkpointer, writer, launcher... (each child in a
  // session of its own, so only the tree finds them).
  const pgTree = processTree(pids.pg).map((pid) => ({ pid, start: processStartTicks(pid) }));
  assert.ok(pgTree.length >= 3, `postgres tree has ${pgTree.length} processes`);
  assert.ok(processAlive(pids.rd));
  child.kill('SIGKILL');
  assert.ok(await waitFor(() => survivors(pgTree).length === 0, 15_000), `postgres processes left: ${survivors(pgTree)}`);
  assert.ok(await waitFor(() => !processAlive(pids.rd), 15_000), 'redis outlived its runner');
  // Their pid files name a dead runner: the next run's reap removes them.
  reapOrphans();
  for (const pid of [pids.pg, pids.rd]) assert.equal(existsSync(join(registryDir(), `${pid}.json`)), false);
});

test('reapOrphans kills a server whose runner is gone and spares one whose runner lives', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'vecbench-reap-'));
  const registry = join(dir, 'registry');
  const prev = process.env.VECBENCH_SERVER_REGISTRY;
  process.env.VECBENCH_SERVER_REGISTRY = registry;
  cleanup.push(() => {
    if (prev === undefined) delete process.env.VECBENCH_SERVER_REGISTRY;
    else process.env.VECBENCH_SERVER_REGISTRY = prev;
    rmSync(dir, { recursive: true, force: true });
  });
  // A live server of this (live) runner, spawned the real way.
  const mine = spawnServer({ name: 'sleeper', command: '/bin/sleep', args: ['300'], dataDir: dir, logFile: join(dir, 'mine.log') });
  cleanup.push(() => mine.killNow());
  // An orphan: a process group whose pid file names a runner that is gone (a finished child).
  const orphan = spawnServer({ name: 'orphan', command: '/bin/sleep', args: ['300'], dataDir: dir, logFile: join(dir, 'orphan.log') });
  cleanup.push(() => orphan.killNow());
  const dead = spawn('/bin/true');
  await new Promise((r) => dead.on('exit', r));
  const file = join(registry, `${orphan.pid}.json`);
  const info = JSON.parse(readFileSync(file, 'utf8'));
  writeFileSync(file, JSON.stringify({ ...info, runner: dead.pid, runnerStart: processStartTicks(process.pid) }));
  const reaped = reapOrphans();
  assert.deepEqual(
    reaped.map((r) => r.pid),
    [orphan.pid],
  );
  await orphan.waitExit();
  assert.equal(processAlive(orphan.pid), false);
  assert.ok(processAlive(mine.pid), "a live runner's server is left alone");
  assert.ok(existsSync(join(registry, `${mine.pid}.json`)));
  await mine.stop(5);
  assert.equal(mine.died, false, 'a stop on purpose is not a death');
});

test('the runner detects a server that dies mid-run: the engine is started again and the reload names the death', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'vecbench-death-'));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  const out = join(dir, 'out');
  let killed: number | null = null;
  const running = run({
    dataset: 'synthetic-2k',
    participants: ['redis'],
    outDir: out,
    dataDir: join(dir, 'data'),
    clients: 4,
    groups: [
      { filter: 'none', k: 10 },
      { filter: 'cat10', k: 10 },
      { filter: 'none', k: 100 },
    ],
    pointTimeoutS: 300,
    loadTimeoutS: 600,
  });
  // Once the load is recorded (the measurements have begun), kill the server from outside.
  const watcher = (async () => {
    for (;;) {
      await new Promise((r) => setTimeout(r, 20));
      let loaded = false;
      try {
        loaded = readAllResults(out).some((r) => r.load !== null);
      } catch {
        loaded = false;
      }
      if (!loaded) continue;
      for (const f of readdirSync(registryDir())) {
        const info = JSON.parse(readFileSync(join(registryDir(), f), 'utf8'));
        if (info.runner === process.pid && info.name === 'redis' && info.dataDir.startsWith(out)) {
          process.kill(info.pid, 'SIGKILL');
          killed = info.pid;
          return;
        }
      }
    }
  })();
  await Promise.race([watcher, running]);
  await running;
  assert.ok(killed !== null, 'the server was killed during the run');
  const [r] = readAllResults(out);
  assert.equal(r.run.complete, true);
  const reloads = r.load!.reloads;
  assert.ok(reloads.length >= 1, 'the engine was loaded again');
  assert.match(reloads[0].reason, new RegExp(`redis server \\(pid ${killed}\\) died mid-run: killed by SIGKILL`));
  assert.ok(!processAlive(killed!));
  assert.deepEqual(reapOrphans(), [], 'no server left behind');
});
