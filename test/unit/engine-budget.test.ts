// Which engines a memory budget holds from their first start and which only while serving:
// an engine that reopens its files is built outside the budget, except, in a named tier, one
// that declares it holds its whole index in memory (its verdict, not fitting, needs no build).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Dataset } from '../../src/datasets/layout.ts';
import { EngineBudget } from '../../src/runner/engine-budget.ts';
import { oneThreadBecause, threadsFor } from '../../src/runner/run-options.ts';
import type { LoadedParticipant } from '../../src/runner/participants.ts';

const participant = (reopen: boolean, memory?: 'resident') =>
  ({
    name: 'eng',
    adapter: { reopen: reopen ? async () => ({}) : undefined },
    settings: { registry: memory ? { memory } : undefined },
  }) as unknown as LoadedParticipant;
const ds = {} as Dataset;
const GiB = 2 ** 30;

test('a budget holds serving only for an engine that reopens its files, unless a tier runs one that holds its index in memory', () => {
  assert.equal(new EngineBudget(participant(true), ds, { memoryLimit: GiB }).servingOnly, true);
  assert.equal(new EngineBudget(participant(true), ds, { memoryLimit: GiB, tier: 'disk' }).servingOnly, true);
  assert.equal(new EngineBudget(participant(true, 'resident'), ds, { memoryLimit: GiB }).servingOnly, true, 'outside a tier, as any engine');
  assert.equal(new EngineBudget(participant(true, 'resident'), ds, { memoryLimit: GiB, tier: 'disk' }).servingOnly, false);
  assert.equal(new EngineBudget(participant(false), ds, { memoryLimit: GiB, tier: 'disk' }).servingOnly, false, 'no reopen: every start');
  assert.equal(new EngineBudget(participant(true), ds, {}).servingOnly, false, 'no budget');
  assert.equal(new EngineBudget(participant(true), ds, { memoryLimit: GiB, connect: { eng: 'postgres://h/db' } }).servingOnly, false, "a user's server");
});

test('a participant whose search threads each copy its files gets one under the cold protocol or a budget, and what it is given otherwise', () => {
  const copying = { adapter: { reopenInThreads: 'copy' as const } };
  const sharing = { adapter: { reopenInThreads: true } };
  assert.equal(threadsFor(copying, { threads: 4, cold: true }), 1);
  assert.equal(threadsFor(copying, { threads: 4, memoryLimit: GiB }), 1);
  assert.match(oneThreadBecause(copying, { cold: true })!, /copies of its files just written, not the evicted files/);
  assert.equal(threadsFor(copying, { threads: 4 }), 4, 'warm, no budget: every thread');
  assert.equal(threadsFor(sharing, { threads: 4, cold: true, memoryLimit: GiB }), 4, 'threads that share the files keep their count');
  assert.equal(oneThreadBecause(sharing, { cold: true }), null);
});
