// Reads from storage under a memory budget (docs/runs.md, "Memory budget"; docs/method.md, "The
// disk tier"): a real in-process engine in its disk layout (usearch-disk: the built index searched
// from its file, memory-mapped) reads from storage on every pass when its budget leaves the page
// cache less than the file, and the same engine and queries without a budget read (near) nothing
// once warm. The engine runs in a small process of its own so that its budget can be set exactly:
// its use after a pass, less the index's pages (the runtime with its heap grown, the engine), plus
// 90 % of the file. (With half the file, a pass of 200 queries read about 600 MB per query: each
// fault on the mapping reads a readahead window, evicting pages the walk needs next.) The test asserts the order of the two counts, not that a count is >= 0.
// vecbench-test: alone (memory cgroups and the page cache).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { createInterface } from 'node:readline';
import { ROOT } from '../../src/util/code-paths.ts';
import { MemoryBudget, memoryCgroupVersion } from '../../src/runner/memory-budget.ts';
import { evictPageCache, haveVmtouch } from '../../src/runner/page-cache.ts';
import { ioBetween, snapshotIo } from '../../src/runner/engine-io.ts';
import { openOnSynthetic } from '../helpers/participant-harness.ts';

const QUERIES = 50;
let built: Awaited<ReturnType<typeof openOnSynthetic>>;
let indexFile = '';
let queriesFile = '';

before(async () => {
  // 20,000 x 128: a 13 MB index file, built and saved by the participant itself.
  built = await openOnSynthetic('usearch-disk', { n: 20_000, nq: QUERIES });
  await built.stopKeepingData();
  indexFile = join(built.workDir, 'usearch.index');
  queriesFile = join(built.workDir, 'queries.f32');
  writeFileSync(queriesFile, new Uint8Array(built.data.queries.buffer, built.data.queries.byteOffset, built.data.queries.byteLength));
});
after(() => built?.cleanup());

/** The engine alone in a process: USearch viewing the file; each line on stdin runs every query
 * once; a pass's reads are the process's read_bytes around it (src/runner/engine-io.ts). */
function engineProcess(d: number) {
  const script = `
    import { readFileSync } from 'node:fs';
    import { createInterface } from 'node:readline';
    import usearch from 'usearch';
    const { Index, MetricKind, ScalarKind } = usearch;
    const index = new Index({ dimensions: ${d}, metric: MetricKind.IP, quantization: ScalarKind.F32, connectivity: 16, expansion_add: 128, expansion_search: 64, multi: false });
    index.view(${JSON.stringify(indexFile)});
    const q = new Float32Array(readFileSync(${JSON.stringify(queriesFile)}).buffer.slice(0));
    console.log('ready');
    for await (const _ of createInterface({ input: process.stdin })) {
      for (let i = 0; i < ${QUERIES}; i++) index.search(q.subarray(i * ${d}, (i + 1) * ${d}), 10, 1);
      console.log('done');
    }`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async () => {
    const r = await lines.next();
    assert.ok(!r.done, 'the engine process ended early');
    return r.value;
  };
  // Bytes the process read from storage over one pass, by the runner's own counter.
  const pass = async () => {
    const before = snapshotIo([child.pid!]);
    child.stdin.write('go\n');
    assert.equal(await next(), 'done');
    const io = ioBetween(before, snapshotIo([child.pid!]));
    assert.ok(io, '/proc/PID/io of the engine process is readable');
    return io.readBytes;
  };
  return { pid: child.pid!, ready: next, pass, stop: () => child.kill() };
}

test('under a budget that leaves the page cache 90 % of its file, an engine searching from disk reads on every pass; without one, none once warm', async (t) => {
  assert.equal(memoryCgroupVersion(), 'v1', 'these machines mount the cgroup v1 memory controller');
  assert.ok(haveVmtouch(), 'vmtouch is installed (scripts/setup.sh installs it)');
  const size = statSync(indexFile).size;
  const d = built.data.d;

  const budget = MemoryBudget.create('test-disk-reads', 1 << 30);
  // The build left the file in the page cache, charged to this process: out, so that the engine's
  // own process brings its pages in, charged to its budget.
  evictPageCache(built.workDir);
  const capped = engineProcess(d);
  let cappedReads: number[];
  try {
    budget.add(capped.pid);
    assert.equal(await capped.ready(), 'ready');
    // One pass first, so the runtime's heap has grown to what a pass needs before it is counted.
    await capped.pass();
    // Pages the process maps stay resident through an eviction: they are counted and taken off.
    const resident = evictPageCache(built.workDir).resident_after_bytes;
    // What the process holds without the index's pages, then room for 90 % of them.
    const use = budget.usage();
    assert.ok(use !== null && use > resident, `the budget's usage reads ${use}, the index's resident pages ${resident}`);
    budget.setLimit(use - resident + Math.floor(size * 0.9));
    const t0 = performance.now();
    cappedReads = [await capped.pass(), await capped.pass(), await capped.pass()];
    t.diagnostic(`three passes under the budget took ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    assert.equal(budget.oomKills(), 0, 'a mapped index is paged, never killed');
  } finally {
    capped.stop();
    await new Promise((r) => setTimeout(r, 200));
    budget.dispose();
  }

  const free = engineProcess(d);
  let freeReads: number[];
  try {
    assert.equal(await free.ready(), 'ready');
    await free.pass(); // warm: the file's pages come in once
    freeReads = [await free.pass(), await free.pass()];
  } finally {
    free.stop();
  }
  const perQuery = (b: number) => b / QUERIES;
  t.diagnostic(`index file ${size} bytes; read per query under the budget ${cappedReads.map(perQuery)}, without ${freeReads.map(perQuery)}`);
  // Passes after the first under the budget still read: the file does not fit what is left.
  for (const b of cappedReads.slice(1)) assert.ok(perQuery(b) >= 4096, `under the budget a warm pass read ${perQuery(b)} bytes per query (file ${size} bytes)`);
  for (const b of freeReads) assert.ok(perQuery(b) <= 512, `without a budget a warm pass read ${perQuery(b)} bytes per query`);
  assert.ok(Math.min(...cappedReads.slice(1)) > 10 * Math.max(...freeReads, 4096), `capped ${cappedReads}, free ${freeReads}`);
});
