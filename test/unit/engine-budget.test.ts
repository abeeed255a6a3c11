// Which engines a memory budget holds from their first start and which only while serving:
// an engine that reopens its files is built outside the budget, except, in a named tier, one
// that declares it holds its whole index in memory (its verdict, not fitting, needs no build).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Dataset } from '../../src/datasets/layout.ts';
import { EngineBudget, foundNotToFit } from '../../src/runner/engine-budget.ts';
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

test('a result stopped as not fitting the same budget stands as measured; stopped otherwise, or under another budget, it is measured again', () => {
  const GIB = 1 << 30;
  const budget = { cgroup: 'v1' as const, asked_bytes: GIB, harness_allowance_bytes: 0, limit_bytes: GIB, peak_bytes: GIB, limit_hits: 0, oom_kills: 1 };
  const stopped = 'participant hnswlib does not fit in 1.00 GiB: the kernel killed it at its memory budget';
  const result = (complete: boolean, oomKills: number, why?: string) =>
    ({
      run: { complete },
      extra: why === undefined ? {} : { stopped: why },
      resources: { memory_budget: { ...budget, oom_kills: oomKills } },
    }) as unknown as Parameters<typeof foundNotToFit>[0];
  assert.equal(foundNotToFit(result(false, 1, stopped), GIB), stopped);
  assert.equal(foundNotToFit(result(false, 1, stopped), 2 * GIB), null, 'a larger budget is tried');
  assert.equal(foundNotToFit(result(false, 1, stopped), undefined), null, 'no budget asked');
  assert.equal(foundNotToFit(result(false, 0, 'the engine crashed'), GIB), null, 'a crash is measured again');
  assert.equal(foundNotToFit(result(false, 1), GIB), null, 'killed but not stopped: resumed');
  assert.equal(foundNotToFit(result(true, 1, stopped), GIB), null, 'a complete result is already measured as such');
});
