// Live churn on the real servers (pgvector, Chroma, Redis float32 and int8), through the command
// line: the runner starts each server for the runbook and stops it after, as `vecbench churn`
// does. The same short runbook and checks as the in-process engines (test/e2e/churn.test.ts), plus
// what is particular to each: a harness-measured data directory for Chroma (it reports no bytes
// of its own), pgvector's compaction (VACUUM), and no server left behind. Needs the servers'
// provision.sh (run by .ci/run).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { reapOrphans } from '../../src/runner/server.ts';
import { SHORT_RUNBOOK, checkReportChurn, checkShortRun, type ShortRunExpect } from '../helpers/churn-short.ts';

const BIN = fileURLToPath(new URL('../../bin/vecbench.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'vecbench-churn-servers-'));
// PostgreSQL runs as its own user: it must reach its data directory under this one.
chmodSync(dir, 0o755);
after(() => {
  reapOrphans();
  rmSync(dir, { recursive: true, force: true });
});

const SERVERS: Record<string, ShortRunExpect> = {
  // A dead tuple keeps its ef_search slot until VACUUM: short results right after the deletes.
  pgvector: { minRecall: 0.85, minMixedRecall: 0.8, lowAfterDeletes: true },
  chroma: { minRecall: 0.85, minMixedRecall: 0.8 },
  redis: { minRecall: 0.85, minMixedRecall: 0.8 },
  // int8 components: its best ladder point reaches ~0.90 on the synthetic sets.
  'redis-q8': { minRecall: 0.8, minMixedRecall: 0.75 },
};
const NAMES = Object.keys(SERVERS);

/** Server processes the test's runs may have left (their data directories live under `dir`). */
function serversUnder(path: string): string[] {
  const r = spawnSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' });
  return r.stdout.split('\n').filter((l) => l.includes(path));
}

describe('servers through a short runbook', () => {
  const data = join(dir, 'data');
  const out = join(dir, 'results');
  const runbookFile = join(dir, 'short.json');
  const vecbench = (...args: string[]) => {
    const r = spawnSync(process.execPath, [BIN, ...args], {
      encoding: 'utf8',
      env: { ...process.env, VECBENCH_QUIET: '1', VECBENCH_DATA: data },
      timeout: 1_500_000,
    });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };

  test(`${NAMES.join(', ')}: freshness, reads under writes, delete + reinsert, no leaks, and the report`, () => {
    writeFileSync(runbookFile, JSON.stringify(SHORT_RUNBOOK));
    const r = vecbench('churn', '--dataset', 'synthetic-3000', '--participants', NAMES.join(','), '--runbook', runbookFile, '--out', out);
    assert.equal(r.code, 0, r.stderr);
    checkShortRun(out, 'synthetic-3000', 3000, SERVERS);
    const runbook = (name: string) => JSON.parse(readFileSync(join(out, 'synthetic-3000', `${name}.json`), 'utf8')).extra.churn.runbooks.short;

    // Every runbook got a server of its own, started and stopped by the runner.
    assert.deepEqual(serversUnder(out), []);
    for (const name of NAMES)
      assert.match(runbook(name).engine_version, name === 'pgvector' ? /PostgreSQL .*pgvector/ : name === 'chroma' ? /^Chroma / : /^Redis 8/, name);

    // Chroma counts no bytes itself: the harness measures its server's data directory (SQLite
    // log and metadata, HNSW segments), which grows with the writes.
    const chroma = runbook('chroma');
    assert.equal(chroma.caps.disk, false);
    assert.equal(chroma.caps.upsert, true);
    assert.equal(chroma.steps[2].disk.bytes, null);
    assert.ok(chroma.steps[2].disk.dir_bytes > 0 && chroma.steps[12].disk.dir_bytes > 0, JSON.stringify(chroma.steps[12].disk));
    assert.equal(chroma.steps[7].status, 'done', 'Chroma upserts');
    assert.equal(chroma.steps[10].status, 'unsupported', 'Chroma applies its log before a write returns: nothing to wait for');

    // pgvector's compact() is VACUUM, timed; after it the searches are full again.
    const pg = runbook('pgvector');
    assert.equal(pg.steps[10].status, 'done');
    assert.ok(pg.steps[10].wait.duration_s > 0);
    assert.equal(pg.steps[11].search.short_results, 0, 'no short result after VACUUM');
    assert.ok(
      pg.steps[2].disk.bytes > 0 && pg.steps[2].disk.dir_bytes > pg.steps[2].disk.bytes,
      'the server directory holds more than the table and its indexes',
    );

    // Redis: VREM unlinks at once; no compaction.
    for (const name of ['redis', 'redis-q8']) assert.equal(runbook(name).steps[10].status, 'unsupported', name);

    const rep = vecbench('report', '--out', out, '--json');
    assert.equal(rep.code, 0, rep.stderr);
    checkReportChurn(JSON.parse(rep.stdout).churn, 'synthetic-3000', NAMES);
  });

  test('a server that cannot start fails its runbook with the reason, and the command exits 1', () => {
    const tiny = join(dir, 'tiny.json');
    writeFileSync(
      tiny,
      JSON.stringify({
        name: 'tiny',
        steps: [
          { op: 'load', rows: [0, 100] },
          { op: 'freshness', writes: 2 },
        ],
      }),
    );
    const failedOut = join(dir, 'failed');
    const r = spawnSync(process.execPath, [BIN, 'churn', '--dataset', 'synthetic-3000', '--participants', 'redis', '--runbook', tiny, '--out', failedOut], {
      encoding: 'utf8',
      env: { ...process.env, VECBENCH_QUIET: '1', VECBENCH_DATA: join(dir, 'data'), VECBENCH_CACHE: '/nonexistent-vecbench-cache' },
    });
    assert.equal(r.status, 1, r.stderr);
    const rr = JSON.parse(readFileSync(join(failedOut, 'synthetic-3000', 'redis.json'), 'utf8')).extra.churn.runbooks.tiny;
    assert.equal(rr.status, 'failed');
    assert.match(rr.reason, /participants\/redis\/provision\.sh/);
    assert.match(r.stdout, /redis: tiny: .*provision\.sh/);
  });
});
