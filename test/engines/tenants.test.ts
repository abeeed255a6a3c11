// Tenants (docs/method.md §1, §2): the tenant attribute's Zipf sizes, the tenant groups (asked at
// any size), and the harness's boundary check: a deliberately leaky fake engine, driven through
// the real warm protocol, fails its points with the leak named; real in-process participants
// keep the boundary and find the tenant's own rows (recall against the exact ground truth).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Participant } from '../../src/contracts.ts';
import { hashedAttributes } from '../../src/datasets/attributes.ts';
import { parseGroupList } from '../../src/datasets/groups.ts';
import type { Dataset } from '../../src/datasets/layout.ts';
import { prepareDataset } from '../../src/prepare/registry.ts';
import { summarize } from '../../src/metrics/recall.ts';
import { deriveCells } from '../../src/report/cells.ts';
import { renderTable } from '../../src/report/table.ts';
import type { ResultFile, ResultGroup } from '../../src/results/schema.ts';
import type { GroupEngine } from '../../src/runner/group-run.ts';
import { measureWarmGroup } from '../../src/runner/measure-group.ts';
import { ladderFor, settingsFileSchema, type LoadedParticipant } from '../../src/runner/participants.ts';
import type { PointReply } from '../../src/runner/point-reply.ts';
import { prepareGroups, scorePoint, type AskedGroup } from '../../src/runner/points.ts';
import type { HostRequest } from '../../src/runner/protocol.ts';
import { openOnSynthetic } from '../helpers/participant-harness.ts';
import { emptyGroup, fakeResultOf } from '../helpers/fake-result.ts';

let dir: string;
let ds: Dataset;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vb-tenants-'));
  ds = await prepareDataset(dir, 'synthetic-4000');
});
after(() => rmSync(dir, { recursive: true, force: true }));

describe('the tenant attribute and groups', () => {
  test('tenant sizes are Zipf-skewed: the largest ~10 % of rows, the median a few dozen at 100,000 rows', () => {
    const { tenant } = hashedAttributes(100_000);
    const sizes = new Array(1000).fill(0);
    for (const t of tenant) sizes[t]++;
    assert.ok(sizes[0] > 8_500 && sizes[0] < 10_500, `largest tenant ${sizes[0]} rows`);
    const sorted = [...sizes].sort((a, b) => a - b);
    const median = sorted[500];
    assert.ok(median >= 20 && median <= 60, `median tenant ${median} rows`);
    // Numbered by size: the median tenant and the smallest are far below the largest.
    assert.ok(sizes[499] < sizes[0] / 100 && sizes[999] <= sizes[499], `tenants 0, 499, 999: ${sizes[0]}, ${sizes[499]}, ${sizes[999]}`);
    assert.ok(
      tenant.every((t) => Number.isInteger(t) && t >= 0 && t < 1000),
      'tenant ids are 0..999',
    );
  });

  test('the tenants set: a large, a median and a tiny tenant at k 10 and 100, asked at any size', () => {
    const groups = parseGroupList(['tenants']);
    assert.deepEqual(
      groups.map((g) => `${g.filter}/${g.k}`),
      ['tenant-large/10', 'tenant-median/10', 'tenant-tiny/10', 'tenant-large/100', 'tenant-median/100', 'tenant-tiny/100'],
    );
    const asked = prepareGroups(ds, groups);
    // The tiny tenant keeps a row or two of 4,000, far below 10 x k, and is asked all the same.
    const tiny = asked.find((g) => g.key === 'tenant-tiny/100')!;
    assert.ok(tiny.medianMatches < 10, `tiny tenant: ${tiny.medianMatches} rows`);
    assert.ok(asked.every((g) => g.asked));
    // Every query of a group is confined to the same tenant, with an eq on the tenant field.
    for (const g of asked) assert.ok(g.filters.every((f) => f?.op === 'eq' && f.field === 'tenant'));
  });
});

/** A fake participant with one ladder point; filters on the tenant field. */
function fakeParticipant(): LoadedParticipant {
  const settings = settingsFileSchema.parse({ index: {}, ladders: [{ knobs: { ef: [10, 20] } }] });
  const adapter = {
    engine: 'fake',
    concurrentSearch: false,
    filters: { fields: ['tenant'], ops: ['eq'] },
    filterStrategy: 'none',
  } as unknown as Participant<unknown>;
  return { name: 'fake', dir, adapter, settings, index: {}, settingsPath: join(dir, 'settings.json') };
}

/** A row of another tenant than `tenant`. */
function outsider(tenant: number): number {
  for (let r = 0; r < ds.n; r++) if (ds.attrs.tenant[r] !== tenant) return r;
  throw new Error('every row is in one tenant');
}

/** An engine answering with the exact ground truth, except that `leaky` puts a row of another
 * tenant first in the answer of every query whose index is a multiple of 100. */
function fakeEngine(g: AskedGroup, leaky: boolean): GroupEngine {
  const stranger = outsider(0);
  const answer = (req: Extract<HostRequest, { type: 'point' }>): PointReply => {
    const offsets = new Int32Array(req.queries.length + 1);
    const ids: number[] = [];
    req.queries.forEach((q, i) => {
      const truth = Array.from(g.gt.ids.subarray(q * g.gt.depth, q * g.gt.depth + req.k)).filter((id) => id >= 0);
      if (leaky && q % 100 === 0) truth.splice(0, 1, stranger);
      ids.push(...truth);
      offsets[i + 1] = ids.length;
    });
    const n = req.queries.length;
    return {
      ids: Int32Array.from(ids),
      offsets,
      latenciesMs: new Float64Array(n).fill(0.05),
      wallS: n * 5e-5,
      errors: new Array(n).fill(null),
      digests: new Uint32Array(n),
    };
  };
  return {
    async beforeGroup() {},
    loadPids: () => ({ engine: undefined, engineTree: false, host: undefined }),
    async request(req: HostRequest) {
      if (req.type === 'point') return { type: 'point', reply: answer(req) } as never;
      if (req.type === 'explain') return { type: 'explained', plan: null, planError: null } as never;
      if (req.type === 'null-pass')
        return { type: 'null-pass', reply: { ...answer({ ...req, type: 'point', knobs: {}, filters: [], ids: false }), wallS: 1e-6 } } as never;
      if (req.type === 'loadgen-ceiling') return { type: 'loadgen-result', reply: { wallS: 1e-6 } } as never;
      throw new Error(`unexpected request ${req.type}`);
    },
  };
}

async function measureTenantGroup(leaky: boolean): Promise<{ group: ResultGroup; result: ResultFile }> {
  const [g] = prepareGroups(ds, [{ filter: 'tenant-large', k: 10 }]);
  const group = emptyGroup(g);
  await measureWarmGroup({
    engine: fakeEngine(g, leaky),
    p: fakeParticipant(),
    ds,
    g,
    group,
    queries: Array.from({ length: 1000 }, (_, i) => i),
    clients: 1,
    threads: 1,
    pointTimeoutS: 60,
    timing: { minPasses: 2, minSeconds: 0, maxPasses: 3 },
    build: 0,
    busyCores: 64,
    onProgress: () => {},
    save: () => {},
    loadMeter: { start() {}, stop: () => ({ otherCores: 0, steal: 0 }) },
  });
  const result = fakeResultOf(ds, group, 1);
  return { group, result };
}

describe('the boundary check in the harness scoring', () => {
  test('a leaky engine: every point counts and names its cross-tenant rows, never sets a cell, and the cells read LEAK', async () => {
    const stderr: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string | Uint8Array) => stderr.push(String(chunk)) > 0) as typeof process.stderr.write;
    let measured: Awaited<ReturnType<typeof measureTenantGroup>>;
    try {
      measured = await measureTenantGroup(true);
    } finally {
      process.stderr.write = write;
    }
    const { group, result } = measured;
    const stranger = outsider(0);
    assert.ok(group.points.length > 0);
    for (const p of group.points) {
      // Queries 0, 100, ..., 900 of the 1,000: ten leaks, the first at query 0.
      assert.equal(p.tenant_leaks, 10, `point ${p.ladder_index} (${p.view})`);
      assert.deepEqual(p.tenant_leak, { query: 0, query_tenant: 0, row: stranger, row_tenant: ds.attrs.tenant[stranger] });
      assert.ok(p.flags.includes('invalid-results'));
    }
    const said = stderr.join('');
    assert.match(
      said,
      new RegExp(
        `SECURITY: tenant-large/10: 10 cross-tenant row\\(s\\) returned; first: query 0 \\(tenant 0\\) got row ${stranger} of tenant ${ds.attrs.tenant[stranger]}`,
      ),
    );
    const cells = deriveCells([result]);
    assert.equal(cells.length, 3);
    for (const c of cells) {
      assert.equal(c.status, 'leak');
      assert.equal(c.value, null);
      assert.match(
        c.reason ?? '',
        new RegExp(
          `^security: \\d+ cross-tenant row\\(s\\) at ${group.points.length} point\\(s\\); first: query 0 \\(tenant 0\\) got row ${stranger} of tenant \\d+$`,
        ),
      );
    }
    const table = renderTable(cells);
    assert.match(table, /LEAK/);
    assert.match(table, /fake tenant-large\/10 LEAK: security: /);
  });

  test('the same engine without the leak: no leak recorded, the cells read their values', async () => {
    const { group, result } = await measureTenantGroup(false);
    for (const p of group.points) {
      assert.equal(p.tenant_leaks, undefined);
      assert.equal(p.tenant_leak, undefined);
      assert.ok(!p.flags.includes('invalid-results'));
    }
    assert.ok(deriveCells([result]).every((c) => c.status !== 'leak' && c.value !== null));
  });
});

for (const name of ['exact', 'hnswlib']) {
  describe(`${name} keeps the tenant boundary`, () => {
    let opened: Awaited<ReturnType<typeof openOnSynthetic>>;
    before(async () => {
      opened = await openOnSynthetic(name, { data: ds });
    });
    after(async () => {
      await opened?.cleanup();
    });

    for (const filter of ['tenant-large', 'tenant-median', 'tenant-tiny']) {
      test(`${filter}/10 at the top of the ladder: no cross-tenant row, recall against the exact ground truth`, async () => {
        const [g] = prepareGroups(ds, [{ filter, k: 10 }]);
        const knobs = ladderFor(opened.participant.settings, filter, 10).at(-1)!;
        await opened.session.setKnobs(knobs);
        const queries = Array.from({ length: 100 }, (_, i) => i);
        const offsets = new Int32Array(queries.length + 1);
        const ids: number[] = [];
        for (const [i, q] of queries.entries()) {
          const got = await opened.session.search({ vector: ds.queries.subarray(q * ds.d, (q + 1) * ds.d), k: 10, filter: g.filters[q] });
          ids.push(...Array.from(got));
          offsets[i + 1] = ids.length;
        }
        const n = queries.length;
        const reply: PointReply = { ids: Int32Array.from(ids), offsets, latenciesMs: new Float64Array(n), wallS: 1, errors: new Array(n).fill(null) };
        const s = summarize(scorePoint(ds, g, queries, reply));
        assert.equal(s.tenantLeaks, 0);
        assert.equal(s.filterViolations + s.unknownIds + s.duplicateIds, 0);
        const min = name === 'exact' ? 1 : 0.9;
        assert.ok(s.recall >= min, `${name} ${filter}: recall ${s.recall.toFixed(3)} at ${JSON.stringify(knobs)} (${g.medianMatches} rows), below ${min}`);
      });
    }
  });
}
