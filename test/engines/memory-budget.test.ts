// The memory budget (--memory-limit; src/runner/memory-budget.ts) on this machine's memory cgroup:
// a process that outgrows its budget is killed by the kernel and counted; one within it runs on
// and its peak is recorded; a real run records the budget with the result, and a real server
// engine that does not fit is reported as not fitting while the run goes on.
// vecbench-test: alone (memory cgroups and the page cache).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { Dataset } from '../../src/datasets/layout.ts';
import { HostError } from '../../src/runner/client.ts';
import { EngineBudget } from '../../src/runner/engine-budget.ts';
import { MemoryBudget, memoryCgroupVersion, parseSize } from '../../src/runner/memory-budget.ts';
import type { LoadedParticipant } from '../../src/runner/participants.ts';
import { run } from '../../src/runner/run.ts';
import { deriveGeneral, renderGeneral } from '../../src/report/general.ts';
import { resultSchema } from '../../src/results/schema.ts';

const dir = mkdtempSync(join(tmpdir(), 'vb-budget-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const MiB = 2 ** 20;

test('sizes: 512M, 1G, 1.5G, bytes; a bad or tiny size is one line naming the form', () => {
  assert.equal(parseSize('512M'), 512 * MiB);
  assert.equal(parseSize('1G'), 1024 * MiB);
  assert.equal(parseSize('1.5g'), 1536 * MiB);
  assert.equal(parseSize(String(64 * MiB)), 64 * MiB);
  assert.throws(() => parseSize('lots'), /--memory-limit lots: write a size such as 512M/);
  assert.throws(() => parseSize('1M'), /below 16M/);
});

/** A child that allocates `mb` MiB, touching every page, then waits to be told to exit. */
function allocate(budget: MemoryBudget, mb: number) {
  const child = spawn(
    process.execPath,
    ['-e', `const a=[];for(let i=0;i<${mb};i++)a.push(Buffer.alloc(${MiB},1));process.stdout.write('done');setInterval(()=>{},1000);`],
    {
      stdio: ['ignore', 'pipe', 'ignore'],
    },
  );
  budget.add(child.pid!);
  const ended = new Promise<string>((resolve) => {
    child.stdout.on('data', () => resolve('done'));
    child.on('exit', (_code, signal) => resolve(`killed by ${signal}`));
  });
  return { ended, stop: () => child.kill() };
}

test('a process that outgrows its budget is killed by the kernel and counted; one within it runs on', async () => {
  assert.equal(memoryCgroupVersion(), 'v1', 'these machines mount the cgroup v1 memory controller');
  const budget = MemoryBudget.create('test-budget', 96 * MiB);
  try {
    // Started in the parent's group, then moved: the allocation starts after the move.
    const small = allocate(budget, 8);
    assert.equal(await small.ended, 'done');
    small.stop();
    const big = allocate(budget, 400);
    assert.equal(await big.ended, 'killed by SIGKILL');
    const r = budget.reading();
    assert.equal(r.cgroup, 'v1');
    assert.equal(r.limit_bytes, 96 * MiB);
    assert.ok(r.oom_kills >= 1, `OOM kills ${r.oom_kills}`);
    assert.ok(r.peak_bytes !== null && r.peak_bytes <= 96 * MiB && r.peak_bytes > 32 * MiB, `peak ${r.peak_bytes}`);
  } finally {
    budget.dispose();
  }
  assert.ok(!existsSync(budget.dir), 'the cgroup is removed');
});

test("an engine killed at its budget between requests is found so: one 'does not fit' error, reported once", async () => {
  const server = { name: 'srv', adapter: { server: {}, reopen: async () => ({}) }, settings: {} } as unknown as LoadedParticipant;
  const engine = new EngineBudget(server, {} as Dataset, { memoryLimit: 96 * MiB });
  const budget = engine.get()!;
  try {
    const small = allocate(budget, 8);
    assert.equal(await small.ended, 'done');
    assert.equal(engine.killedAtBudget(), null, 'nothing killed yet');
    small.stop();
    const big = allocate(budget, 400);
    assert.equal(await big.ended, 'killed by SIGKILL');
    const e = engine.killedAtBudget();
    assert.ok(e instanceof HostError);
    assert.match(e.message, /^participant srv does not fit in 96 MiB: the kernel killed it at its memory budget \(limit 96 MiB, peak \d+ MiB, 1 OOM kill\)$/);
    assert.equal(engine.killedAtBudget(), null, 'a kill is reported once');
    // An error of the same engine after it is not turned into a second verdict.
    const other = new HostError('pipe closed');
    assert.equal(engine.overBudget(other), other);
  } finally {
    engine.dispose();
  }
});

test('a real run records each engine budget, and a server engine that does not fit is reported as such while the run goes on', async () => {
  const out = join(dir, 'run');
  process.env.VECBENCH_QUIET = '1';
  const exitBefore = process.exitCode;
  try {
    await run({
      dataset: 'synthetic-2k',
      participants: ['exact', 'pgvector'],
      outDir: out,
      dataDir: join(dir, 'data'),
      clients: 4,
      groups: [{ filter: 'none', k: 10 }],
      pointTimeoutS: 300,
      loadTimeoutS: 600,
      timing: { minPasses: 2, minSeconds: 0, maxPasses: 3 },
      busyCores: 64,
      builds: 1,
      memoryLimit: 2 * MiB,
    });
  } finally {
    delete process.env.VECBENCH_QUIET;
    process.exitCode = exitBefore;
  }
  const read = (name: string) => resultSchema.parse(JSON.parse(readFileSync(join(out, 'synthetic-2k', `${name}.json`), 'utf8')));
  // The exact engine's host fits (its budget gets the harness's copy of the data on top).
  const exact = read('exact');
  assert.equal(exact.run.memory_limit_bytes, 2 * MiB);
  const eb = exact.resources!.memory_budget!;
  assert.equal(eb.asked_bytes, 2 * MiB);
  assert.ok(eb.harness_allowance_bytes > 0 && eb.limit_bytes === eb.asked_bytes + eb.harness_allowance_bytes);
  assert.equal(eb.oom_kills, 0);
  assert.ok(eb.peak_bytes !== null && eb.peak_bytes > 0 && eb.peak_bytes <= eb.limit_bytes);
  assert.ok(exact.groups[0].points.length > 0 && exact.groups[0].points.every((p) => p.recall === 1));
  // Both reopen their files: built outside the budget, served within it.
  assert.equal(eb.holds, 'serving');
  // PostgreSQL's serving (a backend per connection, the buffers its queries touch) does not fit
  // in 2 MiB: killed at the budget, said so.
  const pg = read('pgvector');
  const pb = pg.resources!.memory_budget!;
  assert.equal(pb.holds, 'serving');
  assert.equal(pb.harness_allowance_bytes, 0);
  assert.ok(pb.oom_kills >= 1, `OOM kills ${pb.oom_kills}`);
  // Killed while loading (the result says why it stopped) or while measuring (the points say).
  const reasons = [String(pg.extra.stopped ?? ''), ...pg.groups.flatMap((g) => [g.reason ?? '', ...g.skipped.map((s) => s.reason)])].join('\n');
  assert.match(reasons, /participant pgvector does not fit in 2 MiB: the kernel killed it at its memory budget/);
  // The general table shows each budget, its peak, limit hits and OOM kills.
  const rows = deriveGeneral([exact, pg]);
  const pgRow = rows.find((r) => r.participant === 'pgvector')!;
  assert.equal(pgRow.memory_limit_bytes, pb.limit_bytes);
  assert.equal(pgRow.memory_oom_kills, pb.oom_kills);
  assert.equal(rows.find((r) => r.participant === 'exact')!.memory_peak_bytes, eb.peak_bytes);
  const text = renderGeneral(rows);
  assert.match(text, /budget +peak in budget +limit hits +OOM kills +read\/query/);
  const pgLine = text.split('\n').find((l) => l.startsWith('pgvector '))!;
  assert.match(pgLine, new RegExp(` ${pb.limit_hits} +${pb.oom_kills} +\\S+( [KMGT]?B)?$`), pgLine);
});
