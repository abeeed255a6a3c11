// The selectivity x correlation grid (docs/method.md §2): sel{1,5,20,50} x {scattered, clustered}
// as opt-in query groups. Scattered rows come from a hash of the row id (a range on num),
// clustered ones from the regions around the query (a range on region); both keep the same
// share, only the clustered ones agree with the vector; the `not asked` rule applies; and real
// in-process participants answer them through their existing range support, scored against the
// exact ground truth.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { allGroups, filterKind, matchingRows, parseGroupList, passes } from '../../src/datasets/groups.ts';
import type { Dataset } from '../../src/datasets/layout.ts';
import { prepareDataset } from '../../src/prepare/registry.ts';
import { summarize } from '../../src/metrics/recall.ts';
import type { DerivedCell } from '../../src/report/cells.ts';
import { readAllResults } from '../../src/results/store.ts';
import { ladderFor } from '../../src/runner/participants.ts';
import type { PointReply } from '../../src/runner/point-reply.ts';
import { prepareGroups, scorePoint } from '../../src/runner/points.ts';
import { UserError } from '../../src/util/errors.ts';
import { openOnSynthetic } from '../helpers/participant-harness.ts';

const SELECTIVITIES = [1, 5, 20, 50];
const KINDS = SELECTIVITIES.flatMap((pct) => [`sel${pct}-scattered`, `sel${pct}-clustered`]);

let dir: string;
let ds: Dataset;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vb-grid-'));
  ds = await prepareDataset(dir, 'synthetic-4000');
});
after(() => rmSync(dir, { recursive: true, force: true }));

describe('the grid groups', () => {
  test('are opt-in: `--groups grid` names them at k 10 and 100; the standard groups (allGroups) leave them out', () => {
    const grid = parseGroupList(['grid']);
    assert.deepEqual(
      grid.map((g) => `${g.filter}/${g.k}`),
      [...KINDS.map((k) => `${k}/10`), ...KINDS.map((k) => `${k}/100`)],
    );
    assert.ok(allGroups().every((g) => !KINDS.includes(g.filter) && !g.filter.startsWith('tenant-')));
    // Keys and sets mix, each group once.
    assert.equal(parseGroupList(['none/10', 'grid', 'sel5-clustered/10']).length, 1 + grid.length);
    assert.throws(
      () => parseGroupList(['grids']),
      (e) => e instanceof UserError && /name a set \(grid, tenants\)/.test(e.message),
    );
  });

  test('regions cut the rows into 100 equal parts, and prepare stores no file for them (the hash stays)', () => {
    const sizes = new Array(100).fill(0);
    for (const r of ds.attrs.region) sizes[r]++;
    assert.ok(
      sizes.every((s) => s === ds.n / 100),
      `region sizes ${Math.min(...sizes)}..${Math.max(...sizes)}`,
    );
    assert.ok(ds.queryAttrs.region.every((r) => r >= 0 && r < 100));
    for (const file of ['base.region.i32', 'base.tenant.i32', 'queries.region.i32']) assert.equal(ds.manifest.files[file], undefined, file);
  });

  test('scattered and clustered keep the same share; only the clustered rows agree with the vector', () => {
    const queries = 200;
    const unfiltered = prepareGroups(ds, [{ filter: 'none', k: 10 }])[0].gt;
    for (const pct of SELECTIVITIES) {
      const share: Record<string, number> = {};
      const inside: Record<string, number> = {};
      for (const corr of ['scattered', 'clustered']) {
        const kind = filterKind(`sel${pct}-${corr}`);
        let kept = 0;
        let agree = 0;
        for (let q = 0; q < queries; q++) {
          const f = kind.forQuery(q, ds.queryAttrs);
          assert.ok(f?.op === 'range' && f.field === (corr === 'scattered' ? 'num' : 'region'), JSON.stringify(f));
          kept += matchingRows(f, ds.attrs, ds.n).length;
          for (let j = 0; j < 10; j++) if (passes(f, ds.attrs, unfiltered.ids[q * unfiltered.depth + j])) agree++;
        }
        share[corr] = kept / queries / ds.n;
        inside[corr] = agree / queries / 10;
        assert.ok(Math.abs(share[corr] - pct / 100) <= 0.15 * (pct / 100), `sel${pct}-${corr}: keeps ${share[corr]}`);
      }
      // The query's nearest rows: about the selectivity of them pass a scattered filter, most
      // of them a clustered one.
      assert.ok(Math.abs(inside.scattered - pct / 100) < 0.05 + pct / 200, `sel${pct}-scattered: ${inside.scattered} of the top 10 inside`);
      assert.ok(inside.clustered > Math.min(0.9, 0.5 + pct / 100), `sel${pct}-clustered: only ${inside.clustered} of the top 10 inside`);
    }
  });

  test('the `not asked` rule applies: a filter keeping fewer than 10 x k rows is not asked', () => {
    const asked = new Map(prepareGroups(ds, parseGroupList(['grid'])).map((g) => [g.key, g.asked]));
    // 4,000 rows: 1 % keeps 40, 5 % 200, 20 % 800, 50 % 2,000.
    for (const corr of ['scattered', 'clustered']) {
      assert.equal(asked.get(`sel1-${corr}/10`), false);
      assert.equal(asked.get(`sel5-${corr}/10`), true);
      assert.equal(asked.get(`sel20-${corr}/100`), false);
      assert.equal(asked.get(`sel50-${corr}/100`), true);
    }
  });
});

for (const name of ['exact', 'hnswlib']) {
  describe(`${name} answers the grid through its range filter`, () => {
    let opened: Awaited<ReturnType<typeof openOnSynthetic>>;
    before(async () => {
      opened = await openOnSynthetic(name, { data: ds });
    });
    after(async () => {
      await opened?.cleanup();
    });

    for (const filter of KINDS) {
      test(`${filter}/10 at the top of the ladder: no violation, recall against the exact ground truth`, async () => {
        const [g] = prepareGroups(ds, [{ filter, k: 10 }]);
        const knobs = ladderFor(opened.participant.settings, filter, 10).at(-1)!;
        await opened.session.setKnobs(knobs);
        const queries = Array.from({ length: 100 }, (_, i) => i);
        const offsets = new Int32Array(queries.length + 1);
        const ids: number[] = [];
        for (const [i, q] of queries.entries()) {
          ids.push(...Array.from(await opened.session.search({ vector: ds.queries.subarray(q * ds.d, (q + 1) * ds.d), k: 10, filter: g.filters[q] })));
          offsets[i + 1] = ids.length;
        }
        const n = queries.length;
        const reply: PointReply = { ids: Int32Array.from(ids), offsets, latenciesMs: new Float64Array(n), wallS: 1, errors: new Array(n).fill(null) };
        const s = summarize(scorePoint(ds, g, queries, reply));
        assert.equal(s.filterViolations + s.unknownIds + s.duplicateIds, 0);
        const min = name === 'exact' ? 1 : 0.9;
        assert.ok(s.recall >= min, `${name} ${filter}: recall ${s.recall.toFixed(3)} at ${JSON.stringify(knobs)}, below ${min}`);
      });
    }
  });
}

test('vecbench run --dataset without --groups asks the standard groups and the grid and tenants at k 10 and 100 under the not-asked rule (tenants at any size), and reports their cells with the shares and strategies', () => {
  const bin = fileURLToPath(new URL('../../bin/vecbench.js', import.meta.url));
  const out = join(dir, 'out');
  const env = { ...process.env, VECBENCH_QUIET: '1' };
  const common = ['--out', out];
  const ran = spawnSync(
    process.execPath,
    [bin, 'run', '--dataset', 'synthetic-2k', '--participants', 'exact', '--data', join(dir, 'data'), '--builds', '1', ...common],
    { encoding: 'utf8', env, timeout: 600_000 },
  );
  assert.equal(ran.status, 0, `${ran.stderr}\n${ran.stdout}`);
  const [stored] = readAllResults(out);
  const status = new Map(stored.groups.map((g) => [g.key, g.status]));
  assert.deepEqual(
    stored.groups.map((g) => g.key),
    [...allGroups(), ...parseGroupList(['grid', 'tenants'])].map((g) => `${g.filter}/${g.k}`),
  );
  // 2,000 rows: 1 % keeps 20 (not asked at k 10), 5 % 100 (asked at 10, not at 100), 50 % 1,000.
  for (const corr of ['scattered', 'clustered']) {
    assert.equal(status.get(`sel1-${corr}/10`), 'not_asked');
    assert.equal(status.get(`sel5-${corr}/10`), 'measured');
    assert.equal(status.get(`sel5-${corr}/100`), 'not_asked');
    assert.equal(status.get(`sel50-${corr}/100`), 'measured');
  }
  for (const size of ['large', 'median', 'tiny']) for (const k of [10, 100]) assert.equal(status.get(`tenant-${size}/${k}`), 'measured');
  for (const g of stored.groups.filter((x) => x.status === 'measured')) {
    for (const p of g.points) {
      assert.ok(p.recall > 0.999, `${g.key}: an exact scan reads recall ${p.recall}`);
      assert.equal(p.tenant_leaks, undefined);
    }
  }
  assert.match(ran.stdout, /^sel5-clustered\/10 /m);
  assert.match(ran.stdout, /^tenant-tiny\/10 /m);
  const json = spawnSync(process.execPath, [bin, 'report', '--json', ...common], { encoding: 'utf8', env });
  assert.equal(json.status, 0, json.stderr);
  const cells = (JSON.parse(json.stdout) as { cells: DerivedCell[] }).cells;
  const read = cells.filter((c) => c.group === 'sel50-clustered/100' && c.view === 'throughput');
  assert.ok(read.length > 0 && read.every((c) => 'short_share' in c && 'low_recall_share' in c));
  // An exact scan answers every query in full: no short answers, no query under recall 0.5.
  assert.ok(read.every((c) => c.value === null || (c.short_share === 0 && c.low_recall_share === 0)));
  // Each point read carries the strategy it ran with.
  assert.ok(read.some((c) => c.value !== null) && read.every((c) => c.value === null || typeof c.strategy === 'string'), JSON.stringify(read[0]));
});
