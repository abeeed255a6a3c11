// The results page as a string (the browser test loads it for real): every derived cell is
// in the table with its exact numbers, the shared cell-rule cases read the same on the page,
// engine-provided strings are escaped, nothing is fetched at view time, and absent sections
// say "not measured".
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { deriveCells, fmtQps, type DerivedCell } from '../src/report/cells.ts';
import { esc, jsonForScript, miniMarkdown, renderPage, writePage } from '../src/report/html.ts';
import { resultSchema, type ResultFile } from '../src/results/schema.ts';
import { readAllResults, writeResult } from '../src/results/store.ts';
import { CELL_CASES } from './cell-cases.ts';
import { HOSTILE, fixtureResults } from './report-fixtures.ts';

const dir = mkdtempSync(join(tmpdir(), 'vecbench-html-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Every table cell of a page: its data attributes and its text. */
function pageCells(html: string) {
  const out: { attrs: Record<string, string>; text: string }[] = [];
  for (const m of html.matchAll(/<td class="cell[^"]*"([^>]*)>(.*?)<\/td>/g)) {
    const attrs: Record<string, string> = {};
    for (const a of m[1].matchAll(/data-([a-z-]+)="([^"]*)"/g)) attrs[a[1]] = a[2];
    out.push({ attrs, text: m[2].replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').trim() });
  }
  return out;
}

function findCell(html: string, c: Pick<DerivedCell, 'participant' | 'group' | 'target'>) {
  return pageCells(html).find((x) => x.attrs.participant === esc(c.participant) && x.attrs.group === c.group && Number(x.attrs.target) === c.target);
}

const fixtures = fixtureResults();
let page = '';

describe('the results page', () => {
  test('renders, with every derived cell and its exact numbers', async () => {
    page = await renderPage(fixtures);
    const cells = deriveCells(fixtures);
    assert.ok(cells.length > 0);
    for (const c of cells) {
      const cell = findCell(page, c);
      assert.ok(cell, `no cell for ${c.participant} ${c.group} ${c.target}`);
      assert.equal(cell.attrs.status, c.status);
      assert.equal(cell.attrs.value, c.value === null ? '' : String(c.value));
      assert.equal(cell.attrs.lead, c.lead === null ? '' : String(c.lead));
      if (c.value !== null) assert.ok(cell.text.includes(fmtQps(c.value)) && cell.text.includes(`×${c.lead!.toFixed(2)}`), cell.text);
    }
    assert.equal(pageCells(page).length, cells.length, 'no cell the rule did not derive');
  });

  test('the distinct cell kinds are distinct on the page', () => {
    const texts = new Map<string, string[]>();
    for (const c of pageCells(page)) texts.set(c.attrs.status, [...(texts.get(c.attrs.status) ?? []), c.text]);
    assert.ok(texts.get('not_reached')!.includes('max 0.93'), String(texts.get('not_reached')));
    assert.ok(texts.get('not_reached')!.every((t) => /^max 0\.\d\d$/.test(t)));
    assert.deepEqual([...new Set(texts.get('bracket_too_wide'))], ['bracket too wide']);
    assert.deepEqual([...new Set(texts.get('not_asked'))], ['not asked']);
    assert.deepEqual([...new Set(texts.get('unsupported'))], ['unsupported']);
    assert.deepEqual([...new Set(texts.get('none'))], ['failed'], 'a failed group says so');
    for (const t of texts.get('interpolated')!) assert.match(t, /^[\d,.]+ ×\d\.\d\d$/);
  });

  test('engine-provided strings are escaped everywhere', () => {
    assert.ok(!page.includes(HOSTILE), 'the hostile string appears nowhere as markup');
    assert.ok(!/<script>alert/i.test(page));
    assert.ok(page.includes(esc(`1.2.3 ${HOSTILE}`)), 'the version is shown, escaped');
    assert.ok(page.includes(esc(`note ${HOSTILE}`)), 'the settings note is shown, escaped');
    // Exactly two script elements: the data (JSON, with '<' escaped) and the bundled script.
    assert.equal(page.match(/<script\b/gi)?.length, 2);
    const json = /<script type="application\/json" id="vb-data">([\s\S]*?)<\/script>/.exec(page)![1];
    assert.ok(!json.includes('<'));
    assert.ok(JSON.parse(json).series.some((s: { points: { knobs: Record<string, unknown> }[] }) => s.points.some((p) => p.knobs.mode === HOSTILE)), 'the knob survives as data');
    assert.equal(jsonForScript({ a: '</script><!--' }), '{"a":"\\u003c/script>\\u003c!--"}');
    assert.equal(miniMarkdown(`- **why**: ${HOSTILE} \`<b>\``), '<ul><li><strong>why</strong>: &lt;script&gt;alert(1)&lt;/script&gt; <code>&lt;b&gt;</code></li></ul>');
  });

  test('self-contained: no external resource, a CSP that forbids fetching, a viewport for narrow screens', () => {
    assert.ok(!/\b(src|href)\s*=\s*["']?(https?:)?\/\//i.test(page), 'no external src/href');
    assert.ok(!/url\(\s*["']?https?:/i.test(page) && !/@import/i.test(page));
    assert.match(page, /<meta http-equiv="Content-Security-Policy" content="default-src 'none';/);
    assert.match(page, /<meta name="viewport" content="width=device-width/);
    assert.ok(page.length < 2_000_000, `page is ${page.length} bytes`);
  });

  test('the general section renders what is present and says "not measured" for the rest', () => {
    const general = page.slice(page.indexOf('id="general"'), page.indexOf('id="participants"'));
    assert.match(general, /memory\.build\.anon_bytes<\/td><td>49\.6 MiB<\/td><td><span class="nm">not measured<\/span>/);
    assert.match(general, /cold_start\.health_s<\/td><td>50\.0 ms<\/td>/);
    assert.match(general, /points: qps by concurrency/);
    assert.match(general, /Not measured in these results: Open-loop latency; Live churn; Answer quality\./);
    assert.match(general, /disk size<\/td><td>3\.34 MiB<\/td>/);
  });

  test('a top-level resources section is shown, with the reason where a figure is missing', async () => {
    const beta = { ...fixtures[1], resources: { measured_process: 'host', disk_bytes: 2_097_152, mem_serving_anon_bytes: null, cold_accept_s: 0.25, unmeasured: { mem_serving_anon_bytes: 'no /proc here' } } };
    const html = await renderPage([{ ...fixtures[0] }, beta as unknown as ResultFile]);
    const general = html.slice(html.indexOf('id="general"'), html.indexOf('id="participants"'));
    assert.match(general, /<td>mem_serving_anon_bytes<\/td><td><span class="nm">not measured<\/span><\/td><td><span class="nm">not measured: no \/proc here<\/span><\/td>/);
    assert.match(general, /<td>cold_accept_s<\/td><td><span class="nm">not measured<\/span><\/td><td>250 ms<\/td>/);
    assert.match(general, /<td>disk_bytes<\/td><td><span class="nm">not measured<\/span><\/td><td>2\.00 MiB<\/td>/);
  });

  test('selectors for dataset, k and filter; rows tagged for them', () => {
    assert.match(page, /<select id="sel-dataset"><option value="synthetic-fixture" selected>/);
    assert.match(page, /<select id="sel-k"><option value="all">all<\/option><option value="10" selected>10<\/option><option value="100">100<\/option>/);
    assert.match(page, /<select id="sel-filter">.*<option value="cat10">cat10<\/option>/);
    assert.match(page, /<tr class="first-of-group" data-k="100" data-filter="none">/);
  });
});

describe('the shared cell-rule cases read the same on the page', () => {
  // Each QPS case of test/cell-cases.ts becomes a participant's throughput curve; the page's
  // cell must be what the case expects (the page only prints deriveCells, the one rule).
  // Result files hold JSON numbers only: cases with NaN / Infinity points cannot be stored.
  const qpsCases = CELL_CASES.filter((c) => c.better === 'higher' && c.points.every((p) => Number.isFinite(p.recall) && Number.isFinite(p.value)));
  test(`${qpsCases.length} cases`, async () => {
    const results: ResultFile[] = [];
    const targets = new Map<string, number>();
    qpsCases.forEach((c, i) => {
      const name = `case-${i}`;
      targets.set(name, c.target);
      const r = structuredClone(fixtures[1]);
      r.participant = name;
      r.dataset.name = `cases-${i}`;
      r.groups = [
        resultSchema.shape.groups.element.parse({
          key: 'none/10',
          filter: 'none',
          k: 10,
          status: 'measured',
          median_matches: 3000,
          points: c.points.map((p) => ({ ...fixtures[1].groups[0].points[1], ladder_index: p.ladderIndex, knobs: p.knobs, recall: p.recall, qps: p.value })),
        }),
      ];
      results.push(r);
    });
    // deriveCells reads 0.90 / 0.95 / 0.99; a case's own target is read through readCell
    // by deriveCells only when it is one of those.
    const html = await renderPage(results);
    let checked = 0;
    qpsCases.forEach((c, i) => {
      if (![0.9, 0.95, 0.99].includes(c.target)) return;
      const cell = findCell(html, { participant: `case-${i}`, group: 'none/10', target: c.target });
      assert.ok(cell, c.name);
      assert.equal(cell.attrs.status, c.expect.status, c.name);
      if (c.expect.value === undefined) assert.equal(cell.attrs.value, '', c.name);
      else assert.ok(Math.abs(Number(cell.attrs.value) - c.expect.value) <= 1e-9 * c.expect.value, `${c.name}: ${cell.attrs.value}`);
      if (c.expect.status === 'not_reached') assert.equal(cell.text, `max ${c.expect.maxRecall!.toFixed(2)}`, c.name);
      checked++;
    });
    assert.ok(checked >= 20, `checked ${checked} cases`);
  });
});

describe('writePage', () => {
  test('writes DIR/index.html from a results directory; the page inside the results dir is not read as a result', async () => {
    const out = join(dir, 'results');
    for (const r of fixtures) writeResult(out, r);
    const path = await writePage(out, join(out, 'report'));
    assert.equal(path, join(out, 'report', 'index.html'));
    assert.match(readFileSync(path, 'utf8'), /^<!doctype html>/);
    assert.equal(readAllResults(out).length, 2);
  });

  test('a participant README is shown, escaped', async () => {
    const pdir = join(dir, 'participants', 'alpha');
    mkdirSync(pdir, { recursive: true });
    writeFileSync(join(pdir, 'README.md'), `# alpha\n\n- **Why M=16**: memory. ${HOSTILE}\n`);
    const html = await renderPage(fixtures, { participantsDir: join(dir, 'participants') });
    assert.match(html, /<li><strong>Why M=16<\/strong>: memory\. &lt;script&gt;alert\(1\)&lt;\/script&gt;<\/li>/);
    assert.match(html, /No README\.md in participants\/beta\./);
  });
});
