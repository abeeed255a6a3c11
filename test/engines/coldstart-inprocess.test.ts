// Cold start of the in-process participants (real engines): each is loaded on a small synthetic
// set, closed, and opened again from its work directory with reopen() and no ingest; the
// reopened session must answer every query with the same ids as before, at the same recall
// against a naive exact search, and report the same size.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { EngineSession, FilterExpr } from '../../src/contracts.ts';
import { filterKind } from '../../src/datasets/groups.ts';
import { ladderFor, loadParticipant } from '../../src/runner/participants.ts';
import { checkLadder, openOnSynthetic } from '../helpers/participant-harness.ts';

const IN_PROCESS = ['exact', 'hnswlib', 'usearch', 'lancedb', 'pgvector-pglite'];

type Opened = Awaited<ReturnType<typeof openOnSynthetic>>;

/** Every query's ids at the last ladder point of (filter, 10). */
async function answers(opened: Opened, session: EngineSession, filter: string): Promise<number[][]> {
  const { data, participant } = opened;
  const ladder = ladderFor(participant.settings, filter, 10);
  await session.setKnobs(ladder[ladder.length - 1]);
  const kind = filterKind(filter);
  const out: number[][] = [];
  for (let q = 0; q < data.nq; q++) {
    const f: FilterExpr | null = kind.forQuery(q, data.queryAttrs);
    out.push(Array.from(await session.search({ vector: data.queries.slice(q * data.d, (q + 1) * data.d), k: 10, filter: f })));
  }
  return out;
}

for (const name of IN_PROCESS) {
  test(`${name}: close, then reopen without ingest answers with the same ids`, { timeout: 300_000 }, async () => {
    const opened = await openOnSynthetic(name, { n: 2000, nq: 40 });
    const { workDir, data, participant } = opened;
    try {
      const before = { none: await answers(opened, opened.session, 'none'), cat10: await answers(opened, opened.session, 'cat10') };
      const recallBefore = (await checkLadder(opened, 'none', 10)).map((p) => p.recall);
      const bytesBefore = await opened.session.diskBytes!();
      await opened.session.close();
      assert.ok(readdirSync(workDir).length > 0, `${name} left its data in the work directory`);

      assert.ok(participant.adapter.reopen, `${name} has reopen()`);
      const session = await participant.adapter.reopen({
        dataset: { name: 'synthetic-test', n: data.n, d: data.d, metric: data.metric, hasText: false },
        settings: participant.index,
        workDir,
        maxConcurrency: 4,
        log: () => {},
      });
      try {
        // No ingest: the reopened session holds every row the closed one had.
        assert.deepEqual(await answers(opened, session, 'none'), before.none, `${name}: unfiltered answers after reopen`);
        assert.deepEqual(await answers(opened, session, 'cat10'), before.cat10, `${name}: cat10 answers after reopen`);
        const recallAfter = await checkLadder({ ...opened, session }, 'none', 10);
        assert.deepEqual(
          recallAfter.map((p) => p.recall),
          recallBefore,
          `${name}: recall along the ladder after reopen`,
        );
        const top = recallAfter[recallAfter.length - 1];
        assert.ok(top.recall >= 0.9, `${name}: top recall after reopen ${top.recall}`);
        assert.equal(top.unknownOrDuplicate, 0);
        if (name === 'exact') for (const p of recallAfter) assert.equal(p.recall, 1, 'the reference stays exact after reopen');
        assert.equal(await session.diskBytes!(), bytesBefore, `${name}: the reopened data has the same size`);
      } finally {
        await session.close();
      }
    } finally {
      rmSync(workDir, { recursive: true, force: true });
    }
  });
}

test('reopen of an empty work directory fails with a message, never an empty engine', { timeout: 120_000 }, async () => {
  for (const name of IN_PROCESS) {
    const participant = await loadParticipant(name);
    const workDir = mkdtempSync(join(tmpdir(), `vecbench-empty-${name}-`));
    try {
      await assert.rejects(async () => {
        const s = await participant.adapter.reopen!({
          dataset: { name: 'synthetic-test', n: 300, d: 16, metric: 'ip', hasText: false },
          settings: participant.index,
          workDir,
          maxConcurrency: 1,
          log: () => {},
        });
        await s.close();
      }, `${name}: reopen of an empty directory must throw`);
    } finally {
      rmSync(workDir, { recursive: true, force: true });
    }
  }
});
