// The terminal table: a failed group (e.g. its plan check) reads "failed" with its reason under
// the table, an unsupported one its reason; neither is only a blank or "none" cell.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deriveCells } from '../src/report/cells.ts';
import { renderTable } from '../src/report/table.ts';
import { HOSTILE, fixtureResults } from './report-fixtures.ts';

test('failed and unsupported groups say so, with their reasons, once per participant and group', () => {
  const text = renderTable(deriveCells(fixtureResults()));
  const rows = text.split('\n').filter((l) => l.startsWith('lang/10 '));
  assert.equal(rows.length, 3);
  for (const r of rows) assert.match(r, /\bfailed\s+unsupported$/);
  const notes = text.split('\n').filter((l) => /^(alpha|beta) lang\/10 /.test(l));
  assert.deepEqual(notes, [`alpha lang/10 failed: plan check: ${HOSTILE}`, 'beta lang/10 unsupported: filter field lang is not supported']);
  // Not-asked groups keep their one folded line.
  assert.match(text, /^not asked \(filter keeps fewer than 10 x k rows\): cat1000\/10$/m);
});
