// The load generator's worker-thread clients of the network participants (participants/<name>/
// load-client.ts), each against its real server: a closed-loop sweep at in-flight 1, 2, 4 from
// two worker threads returns the right ids (recall against a naive exact search written here,
// no filter violations, the same answers the participant's own session gives), unfiltered and
// filtered. Needs the servers' provision scripts (CI runs them).
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { FilterExpr, Knobs } from '../../src/contracts.ts';
import type { PreparedData } from '../../src/datasets/layout.ts';
import { filterKind, matchingRows, passes } from '../../src/datasets/groups.ts';
import { encodeExecution, encodeSetup, PgIdConnections } from '../../src/loadgen/clients/pg-ids.ts';
import { OK } from '../../src/loadgen/driver.ts';
import { WorkerPool } from '../../src/loadgen/pool.ts';
import { reapOrphans } from '../../src/runner/server.ts';
import { openServerOnSynthetic, startParticipantServer } from '../helpers/server-harness.ts';
import { rmSync } from 'node:fs';

after(() => {
  reapOrphans();
});

/** Exact top-k ids by brute force (ip: highest dot product first; ties by id). */
function exactTopK(data: PreparedData, q: number, k: number, filter: FilterExpr | null): number[] {
  const { d, base, queries } = data;
  const scored: [number, number][] = [];
  for (const r of matchingRows(filter, data.attrs, data.n)) {
    let s = 0;
    for (let j = 0; j < d; j++) s += base[r * d + j] * queries[q * d + j];
    scored.push([-s, r]);
  }
  scored.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  return scored.slice(0, k).map((x) => x[1]);
}

const K = 10;

const cases: { name: string; knobs: Knobs; minRecall: number }[] = [
  { name: 'pgvector', knobs: { ef_search: 200, iterative_scan: 'relaxed_order' }, minRecall: 0.9 },
  { name: 'redis', knobs: { ef: 200, filter_ef: 20000 }, minRecall: 0.9 },
  { name: 'redis-q8', knobs: { ef: 200, filter_ef: 20000 }, minRecall: 0.85 },
  { name: 'chroma', knobs: { ef: 200 }, minRecall: 0.9 },
];

for (const c of cases) {
  describe(`${c.name}: load client in worker threads`, () => {
    test('sweep at in-flight 1, 2, 4: correct ids, unfiltered and filtered', async () => {
      const opened = await openServerOnSynthetic(c.name, { n: 3000, nq: 40, maxConcurrency: 4 });
      const { data, session } = opened;
      let pool: WorkerPool | null = null;
      try {
        await session.setKnobs(c.knobs);
        const spec = session.loadClient?.();
        assert.ok(spec, `${c.name} offers a load client`);
        assert.match(spec.module, new RegExp(`participants/${c.name === 'redis-q8' ? 'redis' : c.name}/load-client\\.ts$`));
        pool = await WorkerPool.start(spec, 2, 4, data.queries, data.d);
        assert.equal(pool.size, 2);
        await pool.setKnobs(c.knobs);
        const nq = data.nq;
        for (const filterName of ['none', 'cat10']) {
          const kind = filterKind(filterName);
          const filters = Array.from({ length: nq }, (_, q) => kind.forQuery(q, data.queryAttrs));
          const truth = Array.from({ length: nq }, (_, q) => exactTopK(data, q, K, filters[q]));
          // The participant's own session, for the same queries at the same knobs.
          const own: number[][] = [];
          for (let q = 0; q < nq; q++)
            own.push(Array.from(await session.search({ vector: data.queries.slice(q * data.d, (q + 1) * data.d), k: K, filter: filters[q] })));
          for (const inFlight of [1, 2, 4]) {
            const queries = Array.from({ length: nq }, (_, q) => q);
            const r = await pool.closed(K, queries, filters, inFlight, 30_000);
            assert.equal(r.errors + r.timeouts, 0, `${filterName} in-flight ${inFlight}: ${r.firstError}`);
            let recall = 0;
            let same = 0;
            for (let q = 0; q < nq; q++) {
              assert.equal(r.status[q], OK);
              const got = Array.from(r.ids.subarray(r.offsets[q], r.offsets[q + 1]));
              assert.equal(new Set(got).size, got.length, 'no duplicate ids');
              for (const id of got) {
                assert.ok(Number.isInteger(id) && id >= 0 && id < data.n, `id ${id} is a row`);
                assert.ok(passes(filters[q], data.attrs, id), `id ${id} passes ${filterName}`);
              }
              const want = new Set(truth[q]);
              recall += got.filter((id) => want.has(id)).length / truth[q].length;
              if (got.join() === own[q].join()) same++;
            }
            recall /= nq;
            assert.ok(recall >= c.minRecall, `${filterName} in-flight ${inFlight}: recall ${recall.toFixed(3)}`);
            // The workers ran the session's own query at its knobs: the same answers (an HNSW
            // walk may differ in a rare tie, hence not all).
            assert.ok(same >= 0.9 * nq, `${filterName} in-flight ${inFlight}: ${same} of ${nq} answers equal the session's`);
          }
        }
      } finally {
        await pool?.close();
        await opened.cleanup();
      }
    });
  });
}

describe('the PostgreSQL fast path (src/loadgen/clients/pg-ids.ts) on a real server', () => {
  test('ids of each execution; settings applied ahead where missing and again after a failure; more executions than connections queue', async () => {
    const started = await startParticipantServer('pgvector', { n: 10, d: 4 });
    const { host, port, params } = started.handle.connection;
    const conns = await PgIdConnections.open({ host, port, user: 'postgres', database: 'postgres', password: String(params.password) }, 2);
    try {
      assert.equal(conns.size, 2);
      const series = (from: number) => encodeExecution('vb_series', 'SELECT g FROM generate_series($1::int, $1::int + 4) AS g', [from]);
      assert.deepEqual(await conns.execute(series(7)), [7, 8, 9, 10, 11]);
      // More outstanding than connections (what a time-out leaves behind): they queue, all answer.
      const many = await Promise.all(Array.from({ length: 6 }, (_, i) => conns.execute(series(i * 10))));
      assert.deepEqual(
        many.map((ids) => ids[0]),
        [0, 10, 20, 30, 40, 50],
      );
      // A setting travels ahead of the execution on each connection that lacks it.
      const workMem = encodeExecution('vb_work_mem', "SELECT setting::int FROM pg_settings WHERE name = 'work_mem'", []);
      const setup = encodeSetup(['SET work_mem = 4321', "SET application_name = 'vb'"]);
      // (Two at once: both connections run one; one after the other could reuse one connection.)
      for (let i = 0; i < 2; i++) assert.deepEqual(await Promise.all([conns.execute(workMem, setup), conns.execute(workMem, setup)]), [[4321], [4321]]);
      // A failing execution rolls its batch's SETs back; the connection stays usable and gets
      // the settings again with its next execution.
      const other = encodeSetup(['SET work_mem = 5555']);
      const failing = encodeExecution('vb_fail', 'SELECT 1 / ($1::int - 1)', [1]);
      await assert.rejects(Promise.all([conns.execute(failing, other), conns.execute(failing, other)]), /division by zero/);
      assert.deepEqual(await Promise.all([conns.execute(workMem), conns.execute(workMem)]), [[4321], [4321]], 'the failed batches left the earlier setting');
      assert.deepEqual(await conns.execute(workMem, other), [5555]);
      assert.deepEqual(await conns.execute(series(1)), [1, 2, 3, 4, 5]);
    } finally {
      await conns.close();
      await started.handle.stop();
      rmSync(started.workDir, { recursive: true, force: true });
    }
  });
});
