// What the contract suite cannot know about lucene: the version is read from the jar the JVM
// loaded, the strategy follows Lucene's per-segment rule on the filter's live matches (and the
// plan reports what the query did), searches in flight together get the answers they get one at
// a time, a knob of the wrong kind is one line naming it, a missing install names provision.sh,
// and a host that is killed fails the session in one line. Needs participants/lucene/provision.sh.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { loadParticipant } from '../../src/runner/participants.ts';
import { checkLadder, openOnSynthetic } from '../helpers/participant-harness.ts';

let opened: Awaited<ReturnType<typeof openOnSynthetic>>;
before(async () => {
  opened = await openOnSynthetic('lucene');
});
after(async () => {
  await opened?.cleanup();
});

test('the version is read from the jar the JVM loaded', async () => {
  assert.equal(await opened.participant.adapter.engineVersion(), 'Lucene 9.12.3');
});

test("explain follows Lucene's rule: an exact scan when the filter's matches are no more than the candidates, else the filtered walk", async () => {
  const { session, data } = opened;
  const vector = data.queries.slice(0, data.d);
  // cat10 matches about 300 of the 3000 rows, cat1000 about 3.
  const broad = { op: 'eq', field: 'cat10', value: data.attrs.cat10[0] } as const;
  const narrow = { op: 'eq', field: 'cat1000', value: data.attrs.cat1000[0] } as const;
  const broadMatches = Array.from(data.attrs.cat10).filter((v) => v === broad.value).length;
  assert.ok(broadMatches > 40 && broadMatches < 1000, `cat10 = ${broad.value} matches ${broadMatches} rows`);

  await session.setKnobs({ candidates: 40 });
  const none = await session.explain!({ vector, k: 10, filter: null });
  const walk = await session.explain!({ vector, k: 10, filter: broad });
  const exact = await session.explain!({ vector, k: 10, filter: narrow });
  assert.match(none, /^strategy: graph walk$/m);
  assert.match(none, /^this query, per segment: 1 graph walk\(s\) visiting \d+ nodes, 0 gave up, 0 exact scan\(s\)$/m);
  assert.match(walk, /^strategy: filtered graph walk$/m);
  assert.match(walk, new RegExp(`^filter matches: ${broadMatches} live docs; per segment: ${broadMatches} \\(walk\\)$`, 'm'));
  assert.match(walk, /^this query, per segment: 1 graph walk\(s\)/m);
  assert.match(exact, /^strategy: exact scan of filter matches$/m);
  assert.match(exact, /^this query, per segment: 0 graph walk\(s\) visiting 0 nodes, 0 gave up, 1 exact scan\(s\)$/m);
  assert.match(exact, /^candidates: 40 \(KnnFloatVectorQuery k/m);

  // The same broad filter turns exact once the candidates outnumber its matches.
  await session.setKnobs({ candidates: 1000 });
  const wide = await session.explain!({ vector, k: 10, filter: broad });
  assert.match(wide, /^strategy: exact scan of filter matches$/m);
  // Declared, not observed: Lucene shows no plan.
  assert.deepEqual(session.strategy!({ vector, k: 10, filter: broad }, wide), { label: 'exact scan of filter matches', observed: false });
});

test('the ladder climbs: recall at the top >= 0.95, never lower at the top than at the bottom', async () => {
  const pts = await checkLadder(opened, 'none', 10);
  assert.ok(pts.at(-1)!.recall >= 0.95, `top recall ${pts.at(-1)!.recall}`);
  assert.ok(pts.at(-1)!.recall >= pts[0].recall);
  for (const p of pts) assert.equal(p.unknownOrDuplicate, 0);
});

test('searches in flight together (the host answers from its thread pool) get the answers they get one at a time', async () => {
  const { session, data } = opened;
  await session.setKnobs({ candidates: 64 });
  const requests = Array.from({ length: 40 }, (_, q) => ({
    vector: data.queries.slice(q * data.d, (q + 1) * data.d),
    k: 10,
    filter: q % 2 === 0 ? null : ({ op: 'range', field: 'num', gte: 0, lt: 600_000 } as const),
  }));
  const one = [];
  for (const r of requests) one.push(Array.from(await session.search(r)));
  const together = await Promise.all(requests.map(async (r) => Array.from(await session.search(r))));
  assert.deepEqual(together, one);
});

test('knobs of the wrong kind are one line naming the knob', async () => {
  await assert.rejects(opened.session.setKnobs({ candidates: 0 }), /^UserError: lucene: knob candidates must be an integer 1\.\.100000, got 0$/);
  await assert.rejects(opened.session.setKnobs({ candidates: 'many' }), /^UserError: lucene: knob candidates must be an integer 1\.\.100000, got "many"$/);
  await assert.rejects(opened.session.setKnobs({ candidates: 2.5 }), /knob candidates must be an integer/);
  await assert.rejects(opened.session.setKnobs({ ef: 64 }), /^UserError: lucene: unknown knob "ef"; its knobs are candidates$/);
});

test('without the provisioned jar and classes, opening names provision.sh in one line', async () => {
  const empty = mkdtempSync(join(tmpdir(), 'vecbench-lucene-cache-'));
  const saved = process.env.VECBENCH_CACHE;
  process.env.VECBENCH_CACHE = empty;
  try {
    const p = await loadParticipant('lucene');
    await assert.rejects(p.adapter.open({ ...opened.ctx, settings: p.index }), (e: Error) => {
      assert.equal(e.name, 'SetupNeeded');
      assert.match(e.message, /participants\/lucene\/provision\.sh/);
      assert.ok(!e.message.includes('\n'));
      return true;
    });
  } finally {
    if (saved === undefined) delete process.env.VECBENCH_CACHE;
    else process.env.VECBENCH_CACHE = saved;
    rmSync(empty, { recursive: true, force: true });
  }
});

test('a host killed mid-run fails the session in one line naming the participant', async () => {
  const other = await openOnSynthetic('lucene', { n: 500, nq: 5 });
  try {
    const pid = (other.session as unknown as { hostPid: number }).hostPid;
    assert.ok(Number.isInteger(pid) && pid > 0);
    process.kill(pid, 'SIGKILL');
    await assert.rejects(
      other.session.search({ vector: other.data.queries.slice(0, other.data.d), k: 10, filter: null }),
      /^Error: lucene: its host was killed by SIGKILL$/,
    );
  } finally {
    await other.cleanup().catch(() => {});
  }
});
