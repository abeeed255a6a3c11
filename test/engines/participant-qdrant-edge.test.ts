// What the contract suite cannot know about qdrant-edge: the version is read from the installed
// package, the strategy follows Qdrant's planner rule on the shard's own estimate, the disk
// layout really puts the originals on disk with TurboQuant codes beside them, a knob of the wrong
// kind is one line naming it, and a host that is killed fails the session in one line.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { loadParticipant } from '../../src/runner/participants.ts';
import { checkLadder, openOnSynthetic } from '../helpers/participant-harness.ts';

let opened: Awaited<ReturnType<typeof openOnSynthetic>>;
before(async () => {
  const p = await loadParticipant('qdrant-edge');
  // A low planner threshold (10 KB = 20 vectors of 128 floats), so a broad filter walks the
  // graph and a selective one reads its matches through the payload index.
  opened = await openOnSynthetic({ ...p, index: { ...(p.index as object), full_scan_threshold_kb: 10 } });
});
after(async () => {
  await opened?.cleanup();
});

test('the version is read from the installed package', async () => {
  assert.equal(await opened.participant.adapter.engineVersion(), 'qdrant-edge-py 0.9.0');
});

test("explain follows Qdrant's planner rule on the shard's estimate: payload index for a selective filter, the graph for a broad one", async () => {
  const { session, data } = opened;
  await session.setKnobs({ hnsw_ef: 64 });
  const vector = data.queries.slice(0, data.d);
  const broad = await session.explain!({ vector, k: 10, filter: { op: 'eq', field: 'cat10', value: data.attrs.cat10[0] } });
  const narrow = await session.explain!({ vector, k: 10, filter: { op: 'eq', field: 'cat1000', value: data.attrs.cat1000[0] } });
  const none = await session.explain!({ vector, k: 10, filter: null });
  assert.match(broad, /^strategy: graph walk with filter$/m);
  assert.match(broad, /estimated matches: \d+ of 3000 points/);
  assert.match(narrow, /^strategy: payload index \+ exact scan of matches$/m);
  assert.match(none, /^strategy: graph walk$/m);
  // Declared, not observed: the library shows no plan.
  assert.deepEqual(session.strategy!({ vector, k: 10, filter: null }, none), { label: 'graph walk', observed: false });
});

test('the ladder climbs: recall at the top >= 0.95, never lower at the top than at the bottom', async () => {
  const pts = await checkLadder(opened, 'none', 10);
  assert.ok(pts.at(-1)!.recall >= 0.95, `top recall ${pts.at(-1)!.recall}`);
  assert.ok(pts.at(-1)!.recall >= pts[0].recall);
});

test('knobs of the wrong kind are one line naming the knob', async () => {
  await assert.rejects(opened.session.setKnobs({ hnsw_ef: 0 }), /^UserError: qdrant-edge: knob hnsw_ef must be an integer 1\.\.100000, got 0$/);
  await assert.rejects(opened.session.setKnobs({ exact: 2 }), /knob exact must be 0 or 1/);
});

test('qdrant-edge-disk: originals memory-mapped from disk, 2-bit TurboQuant codes beside them, rescored answers', async () => {
  const disk = await openOnSynthetic('qdrant-edge-disk', { n: 2000, nq: 30 });
  try {
    const segments = join(disk.workDir, 'shard', 'segments');
    const described = readdirSync(segments).map((s) => readFileSync(join(segments, s, 'segment.json'), 'utf8'));
    const indexed = described.find((t) => /"hnsw"/.test(t));
    assert.ok(indexed, 'an HNSW segment');
    assert.match(indexed, /"storage_type":\s*"Mmap"/);
    assert.match(indexed, /"turbo/i);
    const files = readdirSync(segments, { recursive: true }).map(String);
    assert.ok(
      files.some((f) => f.endsWith('quantized.data')),
      files.join(' '),
    );
    const pts = await checkLadder(disk, 'none', 10);
    assert.ok(pts.at(-1)!.recall >= 0.9, `top recall ${pts.at(-1)!.recall}`);
  } finally {
    await disk.cleanup();
  }
});

test('a host killed mid-run fails the session in one line naming the participant', async () => {
  const other = await openOnSynthetic('qdrant-edge', { n: 500, nq: 5 });
  try {
    const pid = (other.session as unknown as { hostPid: number }).hostPid;
    assert.ok(Number.isInteger(pid) && pid > 0);
    process.kill(pid, 'SIGKILL');
    await assert.rejects(
      other.session.search({ vector: other.data.queries.slice(0, other.data.d), k: 10, filter: null }),
      /^Error: qdrant-edge: its host was killed by SIGKILL$/,
    );
  } finally {
    await other.cleanup().catch(() => {});
  }
});
