// Bytes read from storage per pass (src/runner/engine-io.ts): a process that reads a file just
// evicted from the page cache shows the file's bytes in read_bytes; one that reads it again from
// the cache shows none. The counters are the kernel's, not estimates.
// vecbench-test: alone (it evicts files from the page cache and counts bytes read).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { engineProcesses, ioBetween, snapshotIo } from '../../src/runner/engine-io.ts';
import { evictPageCache, haveVmtouch } from '../../src/runner/page-cache.ts';

const dir = mkdtempSync(join(tmpdir(), 'vb-io-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const SIZE = 8 << 20;

/** A child that reads the file whenever told to, and says when it has. */
function reader(file: string) {
  const child = spawn(
    process.execPath,
    ['-e', `const fs=require('fs');process.stdin.on('data',()=>{fs.readFileSync(${JSON.stringify(file)});process.stdout.write('r');});`],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const readOnce = () =>
    new Promise<void>((resolve) => {
      child.stdout.once('data', () => resolve());
      child.stdin.write('x');
    });
  return { pid: child.pid!, readOnce, stop: () => child.kill() };
}

test('read_bytes counts a read from storage, not one from the page cache', async () => {
  assert.ok(haveVmtouch(), 'vmtouch is installed (scripts/setup.sh installs it)');
  const file = join(dir, 'data.bin');
  writeFileSync(file, Buffer.alloc(SIZE, 7));
  const r = reader(file);
  try {
    const pids = engineProcesses({ engine: r.pid });
    assert.deepEqual(pids, [r.pid]);
    evictPageCache(dir);
    const before = snapshotIo(pids);
    assert.equal(before.size, 1, '/proc/PID/io is readable');
    await r.readOnce();
    const cold = ioBetween(before, snapshotIo(pids))!;
    assert.ok(cold.readBytes >= SIZE * 0.9, `an evicted file read ${cold.readBytes} bytes from storage, expected about ${SIZE}`);
    const again = snapshotIo(pids);
    await r.readOnce();
    const warm = ioBetween(again, snapshotIo(pids))!;
    assert.ok(warm.readBytes < SIZE / 10, `a cached file read ${warm.readBytes} bytes from storage`);
  } finally {
    r.stop();
  }
});

test("the reads of an engine's process that its host started (another language's engine) count as the engine's", async () => {
  const file = join(dir, 'child.bin');
  writeFileSync(file, Buffer.alloc(SIZE, 5));
  // A host that starts the engine as its child, as a Python or Java participant's host does.
  const host = spawn(
    process.execPath,
    [
      '-e',
      `const c=require('child_process').spawn(process.execPath,['-e',${JSON.stringify(`const fs=require('fs');process.stdin.on('data',()=>{fs.readFileSync(${JSON.stringify(file)});process.stdout.write('r');});`)}],{stdio:'inherit'});process.on('SIGTERM',()=>{c.kill();process.exit();});`,
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  try {
    let pids: number[] = [];
    for (let i = 0; i < 100 && pids.length < 2; i++) {
      await new Promise((r) => setTimeout(r, 50));
      pids = engineProcesses({ engine: host.pid! });
    }
    assert.equal(pids.length, 2, `the host and its engine: ${pids}`);
    evictPageCache(dir);
    const before = snapshotIo(pids);
    await new Promise<void>((resolve) => {
      host.stdout.once('data', () => resolve());
      host.stdin.write('x');
    });
    const io = ioBetween(before, snapshotIo(engineProcesses({ engine: host.pid! })))!;
    assert.ok(io.readBytes >= SIZE * 0.9, `the engine child's ${io.readBytes} bytes counted, expected about ${SIZE}`);
  } finally {
    host.kill();
  }
});

test('a process born between two snapshots counts whole, one gone takes its counts, none readable is unknown', async () => {
  assert.deepEqual(engineProcesses({ engine: undefined }), []);
  assert.equal(ioBetween(snapshotIo([]), snapshotIo([])), null);
  const file = join(dir, 'born.bin');
  writeFileSync(file, Buffer.alloc(SIZE, 3));
  const old = reader(file);
  try {
    const before = snapshotIo([old.pid]);
    evictPageCache(dir);
    // A reader started after the first snapshot (as a server forks a backend for a connection a
    // pass opens) reads the evicted file: its bytes count although it was not there before.
    const born = reader(file);
    try {
      await born.readOnce();
      const io = ioBetween(before, snapshotIo([old.pid, born.pid]))!;
      assert.ok(io.readBytes >= SIZE * 0.9, `the new process's ${io.readBytes} bytes counted, expected about ${SIZE}`);
    } finally {
      born.stop();
    }
  } finally {
    old.stop();
  }
  // A counter below its first reading is another process under a reused pid: counted whole.
  const reused = ioBetween(new Map([[7, { readBytes: 100, majorFaults: 4 }]]), new Map([[7, { readBytes: 30, majorFaults: 1 }]]));
  assert.deepEqual(reused, { readBytes: 30, majorFaults: 1 });
  const gone = ioBetween(new Map([[7, { readBytes: 100, majorFaults: 4 }]]), new Map());
  assert.deepEqual(gone, { readBytes: 0, majorFaults: 0 });
});
