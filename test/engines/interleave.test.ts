// Interleaved timing in a real run (docs/measurement.md, "Interleaved timing"): two real in-process
// engines loaded together have their timed passes in shared rounds, so each one's passes span
// the other's; with interleave off, one participant is timed after the other. Recall is checked
// against exact ground truth either way.
// vecbench-test: alone (it times real engines and reads the machine's load between rounds).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { ResultFile } from '../../src/results/schema.ts';
import { run } from '../../src/runner/run.ts';

let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'vb-interleave-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

async function measure(out: string, interleave: boolean): Promise<ResultFile[]> {
  process.env.VECBENCH_QUIET = '1';
  try {
    return await run({
      dataset: 'synthetic-2k',
      participants: ['exact', 'hnswlib'],
      outDir: join(dir, out),
      dataDir: join(dir, 'data'),
      clients: 4,
      groups: [{ filter: 'none', k: 10 }],
      pointTimeoutS: 300,
      loadTimeoutS: 600,
      interleave,
      timing: { minPasses: 4, minSeconds: 0, maxPasses: 8 },
      busyCores: 64,
    });
  } finally {
    delete process.env.VECBENCH_QUIET;
  }
}

/** The start times of every timed pass of a result, in seconds. */
const passTimes = (r: ResultFile) => r.groups.flatMap((g) => g.points.flatMap((p) => p.pass?.at_unix_s ?? []));
/** The shared rounds (their start times) a result's passes were taken in. */
const passRounds = (r: ResultFile) => new Set(r.groups.flatMap((g) => g.points.flatMap((p) => p.pass?.round_at_unix_s ?? [])));

test('interleaved: both engines are timed in shared rounds, and say with whom', async () => {
  const results = await measure('together', true);
  assert.equal(results.length, 2);
  const [exact, hnsw] = ['exact', 'hnswlib'].map((n) => results.find((r) => r.participant === n)!);
  assert.deepEqual(exact.run.interleaved_with, ['hnswlib']);
  assert.deepEqual(hnsw.run.interleaved_with, ['exact']);
  const a = passTimes(exact);
  const b = passTimes(hnsw);
  assert.ok(a.length >= 8 && b.length >= 8, `passes: exact ${a.length}, hnswlib ${b.length}`);
  // Each engine has timed passes both before and after some pass of the other.
  assert.ok(Math.min(...a) < Math.max(...b) && Math.min(...b) < Math.max(...a), 'the two timings overlap in time');
  const between = b.filter((t) => t > Math.min(...a) && t < Math.max(...a)).length;
  assert.ok(between >= 2, `${between} hnswlib passes fall within exact's timing`);
  // Each pass names its shared round (its start, at or before the pass): rounds both took passes in.
  for (const r of results)
    for (const p of r.groups.flatMap((g) => g.points))
      p.pass!.round_at_unix_s!.forEach((round, i) => assert.ok(round !== null && round <= p.pass!.at_unix_s![i], `${r.participant}: round ${round}`));
  const shared = [...passRounds(exact)].filter((x) => passRounds(hnsw).has(x));
  assert.ok(shared.length >= 2, `${shared.length} rounds hold passes of both`);
  for (const r of results) {
    assert.equal(r.run.complete, true);
    const none = r.groups.find((g) => g.key === 'none/10')!;
    assert.equal(none.status, 'measured');
    const best = Math.max(...none.points.map((p) => p.recall));
    assert.ok(best >= 0.95, `${r.participant} reaches recall ${best}`);
  }
  assert.ok(
    exact.groups[0].points.every((p) => p.recall === 1),
    'the exact engine answers exactly',
  );
  // Every point says what its engine read from storage per query (warm data: next to nothing).
  for (const r of results)
    for (const p of r.groups[0].points) {
      assert.ok(p.io && p.io.read_bytes_per_query >= 0 && p.io.major_faults_per_query >= 0, `${r.participant}: io ${JSON.stringify(p.io)}`);
      assert.equal(p.pass!.read_bytes!.length, p.pass!.at_unix_s!.length);
    }
});

test('not interleaved: one participant is timed after the other', async () => {
  const results = await measure('apart', false);
  const [exact, hnsw] = ['exact', 'hnswlib'].map((n) => results.find((r) => r.participant === n)!);
  assert.deepEqual(exact.run.interleaved_with, []);
  assert.deepEqual(hnsw.run.interleaved_with, []);
  assert.ok(Math.max(...passTimes(exact)) < Math.min(...passTimes(hnsw)), "exact's passes all come before hnswlib's");
  assert.ok(![...passRounds(exact)].some((x) => passRounds(hnsw).has(x)), 'timed apart, no round is shared');
});
