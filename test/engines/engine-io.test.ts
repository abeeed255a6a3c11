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
import { engineProcesses, ioDelta, readIo } from '../../src/runner/engine-io.ts';
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
    const pids = engineProcesses({ engine: r.pid, engineTree: false });
    assert.deepEqual(pids, [r.pid]);
    evictPageCache(dir);
    const before = readIo(pids);
    assert.ok(before, '/proc/PID/io is readable');
    await r.readOnce();
    const cold = ioDelta(before, readIo(pids))!;
    assert.ok(cold.readBytes >= SIZE * 0.9, `an evicted file read ${cold.readBytes} bytes from storage, expected about ${SIZE}`);
    const again = readIo(pids);
    await r.readOnce();
    const warm = ioDelta(again, readIo(pids))!;
    assert.ok(warm.readBytes < SIZE / 10, `a cached file read ${warm.readBytes} bytes from storage`);
  } finally {
    r.stop();
  }
});

test('no process, or a process gone between readings, reads as unknown', () => {
  assert.deepEqual(engineProcesses({ engine: undefined, engineTree: false }), []);
  assert.equal(readIo([]), null);
  assert.equal(ioDelta({ readBytes: 10, majorFaults: 1 }, { readBytes: 5, majorFaults: 1 }), null);
  assert.equal(ioDelta(null, { readBytes: 5, majorFaults: 1 }), null);
});
