// The disk tier's advice on read-ahead: a disk above Linux's default gets the one line that sets
// it back, naming the queue of the disk (a partition's is its disk's); at the default, nothing.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { LINUX_READ_AHEAD_KB, readAheadAdvice } from '../../src/commands/tiers.ts';

const sys = mkdtempSync(join(tmpdir(), 'vecbench-sysblock-'));
after(() => rmSync(sys, { recursive: true, force: true }));
mkdirSync(join(sys, 'vda', 'queue'), { recursive: true });
mkdirSync(join(sys, 'vda1'), { recursive: true });

test('read-ahead above the default is said with the command that sets it back; at the default, nothing', () => {
  assert.equal(readAheadAdvice({ device: 'vda', read_ahead_kb: LINUX_READ_AHEAD_KB }, sys), '');
  assert.equal(readAheadAdvice({ device: 'vda', read_ahead_kb: 64 }, sys), '');
  const disk = readAheadAdvice({ device: 'vda', read_ahead_kb: 8192 }, sys);
  assert.match(disk, new RegExp(`echo 128 > ${join(sys, 'vda', 'queue')}/read_ahead_kb`));
  const partition = readAheadAdvice({ device: 'vda1', read_ahead_kb: 8192 }, sys);
  assert.match(partition, new RegExp(`echo 128 > ${join(sys, 'vda1')}/\\.\\./queue/read_ahead_kb`));
});
