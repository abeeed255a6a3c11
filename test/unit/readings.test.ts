// A point's readings are declared once (src/results/readings.ts) and computed once
// (src/metrics/recall.ts): the computation covers every declaration, the result schema follows
// it (a reading added later is optional, so older results still read), imports name what the
// other harness did not record, and docs/contracts.md's table is the declaration's.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { summarize, type QueryScore } from '../../src/metrics/recall.ts';
import { READING_NAMES, READINGS, type Reading } from '../../src/results/readings.ts';
import { pointSchema } from '../../src/results/schema.ts';
import { importedReadings } from '../../src/report/import/common.ts';
import { ROOT } from '../../src/util/code-paths.ts';

const score = (tieAware: number, returned: number, short: boolean): QueryScore => ({
  strict: tieAware,
  tieAware,
  threshold: tieAware,
  returned,
  short,
  unknown: 0,
  duplicates: 0,
  violations: 0,
  leaked: [],
});

test('every declared reading is computed, and an empty answer is counted apart from a short one', () => {
  const s = summarize([score(1, 10, false), score(0.3, 4, true), score(0, 0, true), score(0.6, 10, false)]);
  assert.deepEqual(Object.keys(s.readings).sort(), [...READING_NAMES].sort());
  assert.equal(s.readings.short_results, 2);
  assert.equal(s.readings.empty_results, 1);
  assert.equal(s.readings.low_recall_share, 0.5);
  // A query with nothing to find (kt = 0) answered with no id is neither short nor empty.
  assert.equal(summarize([score(1, 0, false)]).readings.empty_results, 0);
});

const storedPoint = (readings: Record<string, number>) => ({
  ladder_index: 0,
  knobs: {},
  view: 'throughput',
  clients: 1,
  queries: 10,
  query_slice: [0, 9],
  ...readings,
  qps: 100,
  duration_s: 0.1,
  latency_ms: { mean: 1, p50: 1, p95: 1, p99: 1, p999: 1, max: 1 },
});

test('the point schema follows the declaration: optional readings may be absent, the others not', () => {
  const all = summarize([score(1, 10, false)]).readings;
  assert.ok(pointSchema.safeParse(storedPoint(all)).success);
  const optional = READING_NAMES.filter((n) => (READINGS[n] as Reading).optional);
  assert.ok(optional.includes('empty_results'), 'a reading added after format 1 is declared optional');
  const older = Object.fromEntries(Object.entries(all).filter(([n]) => !optional.includes(n as never)));
  assert.ok(pointSchema.safeParse(storedPoint(older)).success, 'a point written before the optional readings still reads');
  const { recall_strict: _dropped, ...noStrict } = all;
  assert.equal(pointSchema.safeParse(storedPoint(noStrict)).success, false);
  assert.equal(pointSchema.safeParse(storedPoint({ ...all, short_results: 1.5 })).success, false, 'a count is whole');
});

test('an import names every reading the other harness did not record', () => {
  const missing = new Set<string>();
  const r = importedReadings({ recall: 0.9, short_results: 3 }, missing);
  assert.equal(r.recall, 0.9);
  assert.equal(r.short_results, 3);
  assert.equal(r.recall_strict, 0);
  assert.equal('empty_results' in r, false, 'an optional reading not recorded is left out');
  assert.deepEqual([...missing].sort(), READING_NAMES.filter((n) => n !== 'recall' && n !== 'short_results').sort());
});

/** The table docs/contracts.md carries between its readings markers. */
function readingsTable(): string {
  const rows = READING_NAMES.map((n) => {
    const r = READINGS[n] as Reading;
    return `| \`${n}\`${r.optional ? ' (optional)' : ''} | ${r.kind} | ${r.better} | ${r.means} |`;
  });
  return ['| reading | kind | better | means |', '|---|---|---|---|', ...rows].join('\n');
}

test("docs/contracts.md's readings table is the declaration's", () => {
  const doc = readFileSync(join(ROOT, 'docs', 'contracts.md'), 'utf8');
  const m = /<!-- readings: [^\n]*-->\n([\s\S]*?)\n<!-- \/readings -->/.exec(doc);
  assert.ok(m, 'docs/contracts.md has no readings block');
  assert.equal(m[1], readingsTable(), `replace the block in docs/contracts.md with:\n${readingsTable()}`);
});
