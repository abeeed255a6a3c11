// The results page as a string (the browser test loads it for real): every derived cell is
// in the table with its exact numbers, the shared cell-rule cases read the same on the page,
// engine-provided strings are escaped, nothing is fetched at view time, and absent sections
// say "not measured". Exact-search points have a column of their own.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { deriveCells, fmtMaxRecall, fmtPct, fmtQps, halfWidth, type DerivedCell } from '../../src/report/cells.ts';
import { esc, jsonForScript, miniMarkdown, renderPage, writePage } from '../../src/report/html.ts';
import { resultSchema, type ResultFile } from '../../src/results/schema.ts';
import { readAllResults, writeResult } from '../../src/results/store.ts';
import { CELL_CASES } from '../helpers/cell-cases.ts';
import { HOSTILE, STABLE_DATASET, exactSearchFixture, fixtureResults, stableFixtureResults } from '../helpers/report-fixtures.ts';

const dir = mkdtempSync(join(tmpdir(), 'vecbench-html-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Undoes esc() for comparing attribute text. */
const unesc = (s: string) =>
  s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');

/** Every table cell of a page: its data attributes, class, title, inner markup and text. */
function pageCells(html: string) {
  const out: { attrs: Record<string, string>; cls: string; title: string; inner: string; text: string }[] = [];
  for (const m of html.matchAll(/<td class="(cell[^"]*)"([^>]*)>(.*?)<\/td>/g)) {
    const attrs: Record<string, string> = {};
    for (const a of m[2].matchAll(/data-([a-z-]+)="([^"]*)"/g)) attrs[a[1]] = a[2];
    const title = unesc(/ title="([^"]*)"/.exec(m[2])?.[1] ?? '');
    out.push({
      attrs,
      cls: m[1],
      title,
      inner: m[3],
      text: m[3]
        .replace(/<[^>]+>/g, ' ')
        .replace(/\s+/g, ' ')
        .trim(),
    });
  }
  return out;
}

function findCell(html: string, c: Pick<DerivedCell, 'participant' | 'group' | 'target'> & { search?: DerivedCell['search'] }) {
  return pageCells(html).find(
    (x) =>
      x.attrs.participant === esc(c.participant) && x.attrs.group === c.group && Number(x.attrs.target) === c.target && x.attrs.search === (c.search ?? 'ann'),
  );
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
      assert.equal(cell.attrs['ci-low'], '', 'old results carry no interval');
      if (c.value !== null) assert.ok(cell.text.includes(fmtQps(c.value)) && cell.text.includes(`×${c.lead!.toFixed(2)}`), cell.text);
    }
    assert.equal(pageCells(page).length, cells.length, 'no cell the rule did not derive');
  });

  test('the distinct cell kinds are distinct on the page', () => {
    const texts = new Map<string, string[]>();
    for (const c of pageCells(page)) texts.set(c.attrs.status, [...(texts.get(c.attrs.status) ?? []), c.text]);
    assert.ok(texts.get('not_reached')!.includes('max 0.930'), String(texts.get('not_reached')));
    assert.ok(texts.get('not_reached')!.every((t) => /^max 0\.\d\d\d$/.test(t)));
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
    assert.ok(
      JSON.parse(json).series.some((s: { points: { knobs: Record<string, unknown> }[] }) => s.points.some((p) => p.knobs.mode === HOSTILE)),
      'the knob survives as data',
    );
    assert.equal(jsonForScript({ a: '</script><!--' }), '{"a":"\\u003c/script>\\u003c!--"}');
    assert.equal(
      miniMarkdown(`- **why**: ${HOSTILE} \`<b>\``),
      '<ul><li><strong>why</strong>: &lt;script&gt;alert(1)&lt;/script&gt; <code>&lt;b&gt;</code></li></ul>',
    );
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
    const beta = {
      ...fixtures[1],
      resources: {
        measured_process: 'host',
        disk_bytes: 2_097_152,
        mem_serving_anon_bytes: null,
        cold_accept_s: 0.25,
        unmeasured: { mem_serving_anon_bytes: 'no /proc here' },
      },
    };
    const html = await renderPage([{ ...fixtures[0] }, beta as unknown as ResultFile]);
    const general = html.slice(html.indexOf('id="general"'), html.indexOf('id="participants"'));
    // A row per participant under labelled columns; alpha has no top-level resources.
    const row = (table: string, who: string) =>
      new RegExp(`<table class="resources ${table}">.*?<tr data-participant="${who}">(.*?)</tr>`).exec(general)?.[1] ?? '';
    assert.match(
      row('memory', 'alpha'),
      /<td colspan="11" class="none"><span class="nm" title="measured before resources were recorded">not measured<sup>1<\/sup><\/span><\/td>/,
    );
    assert.match(row('memory', 'beta'), /<span class="driven">host process \(engine \+ dataset copy\)<\/span>/);
    // Serving anon (the sixth figure) is missing with its reason as a numbered note.
    const memory = [...row('memory', 'beta').matchAll(/<td>(.*?)<\/td>/g)].map((m) => m[1]);
    assert.equal(memory[5], '<span class="nm" title="no /proc here">not measured<sup>2</sup></span>');
    assert.match(general, /<ol class="notes"><li>measured before resources were recorded<\/li><li>no \/proc here<\/li><\/ol>/);
    const cold = [...row('cold', 'beta').matchAll(/<td>(.*?)<\/td>/g)].map((m) => m[1]);
    assert.equal(cold[0], '2.00 MiB', 'disk after load');
    assert.equal(cold[2], '250 ms', 'cold start: accepting');
    assert.match(general, /<th colspan="3" scope="colgroup" class="grp-head">Cold start<\/th>/);
    assert.doesNotMatch(general, /mem_serving_anon_bytes|cold_accept_s|disk_bytes/);
  });

  test("results without stable points: how they were driven falls back to the run's clients; points carry no new field", () => {
    assert.match(page, /<th scope="col">alpha<span class="driven">4 clients<\/span><\/th>/);
    assert.match(page, /<td>throughput view driven<\/td><td>4 clients<\/td><td>4 clients<\/td>/);
    assert.match(page, /<dt>driven<\/dt><dd>throughput view: 4 clients<\/dd>/);
    const json = JSON.parse(/<script type="application\/json" id="vb-data">([\s\S]*?)<\/script>/.exec(page)![1]) as {
      series: { points: Record<string, unknown>[] }[];
    };
    const points = json.series.flatMap((s) => s.points);
    assert.ok(points.length > 0);
    for (const field of ['ci', 'calibrated_for', 'build', 'driven', 'passes'])
      assert.ok(
        points.every((p) => !(field in p)),
        `${field} stays absent`,
      );
  });

  test('selectors for dataset, k and filter; rows tagged for them', () => {
    assert.match(page, /<select id="sel-tier"><option value="in RAM" selected>in RAM<\/option><\/select>/);
    assert.match(page, /<select id="sel-dataset"><option value="synthetic-fixture" data-tier="in RAM" selected>/);
    assert.match(page, /<select id="sel-k"><option value="all">all<\/option><option value="10" selected>10<\/option><option value="100">100<\/option>/);
    assert.match(page, /<select id="sel-filter">.*<option value="cat10">cat10<\/option>/);
    assert.match(page, /<tr class="first-of-group" data-k="100" data-filter="none">/);
    assert.match(page, /<select id="sel-xaxis"><option value="linear" selected>linear<\/option><option value="nines">/);
    assert.match(page, /recall 1\.0 is drawn at 0\.99999/);
  });
});

describe('exact-search points on the page', () => {
  test("a column of their own beside the participant's; the index's column reads not reached at 0.99", async () => {
    const r = exactSearchFixture();
    const html = await renderPage([r]);
    const cells = deriveCells([r]);
    assert.ok(cells.some((c) => c.search === 'exact'));
    for (const c of cells) {
      const shown = findCell(html, c);
      assert.ok(shown, `no cell for ${c.participant} ${c.search} ${c.group} ${c.target}`);
      assert.equal(shown.attrs.status, c.status);
      assert.equal(shown.attrs.value, c.value === null ? '' : String(c.value));
    }
    assert.equal(pageCells(html).filter((x) => x.attrs.status !== 'missing').length, cells.length);
    assert.match(
      html,
      /<th scope="col">epsilon<span class="driven">4 clients<\/span><\/th>\n<th scope="col" data-search="exact">epsilon<span class="badge exact"[^>]*>exact<\/span>/,
    );
    assert.equal(findCell(html, { participant: 'epsilon', group: 'none/10', target: 0.99 })!.text, 'max 0.985');
    assert.equal(findCell(html, { participant: 'epsilon', search: 'exact', group: 'none/10', target: 0.99 })!.attrs.status, 'above');
    // cat10/10 has no exact point: its exact cells are the missing dash.
    assert.equal(findCell(html, { participant: 'epsilon', search: 'exact', group: 'cat10/10', target: 0.9 })!.attrs.status, 'missing');
    // The curves mark the scan's points, so they get a frontier of their own.
    const data = JSON.parse(/<script type="application\/json" id="vb-data">([\s\S]*?)<\/script>/.exec(html)![1]) as {
      series: { group: string; points: { knobs: Record<string, unknown>; exact?: boolean }[] }[];
    };
    const none10 = data.series.find((x) => x.group === 'none/10')!.points;
    assert.ok(none10.every((p) => (p.exact === true) === (p.knobs.ef_search === 'exact')));
  });
});

describe('stable points on the page: intervals, ties, calibration, flags, builds, driving', () => {
  const stable = stableFixtureResults();
  const cells = deriveCells(stable);
  const find = (participant: string, group: string, target: number) => {
    const derived = cells.find((c) => c.participant === participant && c.group === group && c.target === target)!;
    return { derived, shown: findCell(html, derived)! };
  };
  let html = '';

  test('every cell carries its interval: exact bounds in data attributes and the title, ± in small text', async () => {
    html = await renderPage(stable);
    assert.equal(pageCells(html).length, cells.length);
    let withCi = 0;
    for (const c of cells) {
      const cell = findCell(html, c)!;
      assert.equal(cell.attrs['ci-low'], c.ci_low === null ? '' : String(c.ci_low));
      assert.equal(cell.attrs['ci-high'], c.ci_high === null ? '' : String(c.ci_high));
      assert.equal(cell.attrs.tie, c.tie ? '1' : '0');
      if (c.ci_low === null || c.ci_high === null) continue;
      withCi++;
      assert.ok(c.ci_low < c.value! && c.value! < c.ci_high);
      assert.ok(cell.inner.includes(`<span class="ci">±${fmtPct(halfWidth(c))}</span>`), cell.inner);
      assert.ok(
        cell.title.includes(`95 % interval: ${Math.round(c.ci_low).toLocaleString('en-US')} – ${Math.round(c.ci_high).toLocaleString('en-US')} QPS`),
        cell.title,
      );
    }
    assert.equal(withCi, 8, 'every cell with a value has an interval');
  });

  test('a tie shows ≈ and says no lead counts; a clear lead keeps its ×lead and best mark', () => {
    const tied = find('delta', 'none/10', 0.95);
    assert.ok(tied.derived.tie && tied.derived.lead! < 0.99, 'the fixture ties below the best value');
    assert.ok(tied.shown.text.includes('≈'), tied.shown.text);
    assert.ok(!tied.shown.text.includes(`×${tied.derived.lead!.toFixed(2)}`), tied.shown.text);
    assert.ok(tied.shown.title.includes(`no lead counts: the lead's interval holds ×1`), tied.shown.title);
    // The fixture's passes carry no times: the lead is the two intervals' bound, and says so.
    assert.equal(tied.derived.lead_method, 'unpaired');
    assert.ok(tied.shown.title.includes('unpaired: no passes laid out in time'), tied.shown.title);
    const tiedBest = find('gamma', 'none/10', 0.95);
    assert.equal(tiedBest.derived.lead, 1);
    assert.match(tiedBest.shown.cls, /\btie\b/);
    assert.doesNotMatch(tiedBest.shown.cls, /\bbest\b/, 'a tie claims no best');

    const led = find('delta', 'none/10', 0.9);
    assert.equal(led.derived.tie, false);
    assert.ok(led.shown.text.includes(`×${led.derived.lead!.toFixed(2)}`) && !led.shown.text.includes('≈'), led.shown.text);
    assert.ok(!led.shown.title.includes('no lead counts'));
    assert.ok(find('gamma', 'none/10', 0.9).shown.title.includes('the best in its row'));
    assert.match(find('gamma', 'none/10', 0.9).shown.cls, /\bbest\b/);
  });

  test('a calibrated cell renders like a point, read without the flagged points', () => {
    const { derived, shown } = find('gamma', 'none/10', 0.95);
    assert.equal(shown.attrs.status, 'calibrated');
    // Build 0's busy-machine point (12,000 QPS at 0.975) would set the cell if it were read.
    assert.equal(derived.value, 5100);
    assert.match(shown.text, /^5,100 ±5\.0% ≈×1\.00 ⚑1$/);
    assert.ok(shown.title.startsWith('calibrated for 0.95: a measured point'), shown.title);
    assert.match(find('gamma', 'none/10', 0.99).shown.text, /^1,938 ±5\.0% ×1\.00 ⚑1$/);
  });

  test('why a cell is above, too wide or not reached is in its title', () => {
    assert.ok(find('gamma', 'cat10/10', 0.9).shown.title.includes('why: the lowest ef already reaches 0.930'));
    assert.ok(find('gamma', 'cat10/10', 0.95).shown.title.includes('why: a probe timed out'));
    assert.ok(find('gamma', 'cat10/10', 0.99).shown.title.includes('why: the highest ef reaches 0.970'));
    assert.ok(!find('delta', 'cat10/10', 0.99).shown.title.includes('why:'), 'no account without calibration');
  });

  test('points left off the frontier: a mark with the counts by flag', () => {
    const gamma = find('gamma', 'none/10', 0.9).shown;
    assert.ok(gamma.inner.includes('<span class="excl" title="points left off the frontier: 1 busy-machine">⚑1</span>'), gamma.inner);
    assert.ok(find('delta', 'none/10', 0.99).shown.inner.includes('title="points left off the frontier: 1 client-limited"'));
    assert.ok(!find('gamma', 'cat10/10', 0.9).shown.inner.includes('class="excl"'), 'no mark where nothing was left off');
  });

  test('a group whose every point is flagged reads "all flagged", not "failed"', async () => {
    const flagged = structuredClone(stable);
    for (const pt of flagged[1].groups.find((g) => g.key === 'cat10/10')!.points) if (pt.view === 'throughput') pt.flags = ['busy-machine'];
    const page2 = await renderPage(flagged);
    const cell = pageCells(page2).find((x) => x.attrs.participant === 'delta' && x.attrs.group === 'cat10/10' && x.attrs.target === '0.95')!;
    assert.equal(cell.attrs.status, 'none');
    assert.equal(cell.text, 'all flagged ⚑2');
    assert.ok(cell.title.includes('every point is flagged (busy-machine)'), cell.title);
    // A failed group stays "failed" (the old fixtures: alpha's lang/10).
    assert.equal(findCell(page, { participant: 'alpha', group: 'lang/10', target: 0.9 })!.text, 'failed');
  });

  test('several builds: the title lists each build with its interval', () => {
    const { derived, shown } = find('gamma', 'none/10', 0.95);
    assert.equal(shown.attrs.builds, '2');
    assert.deepEqual(
      derived.builds!.map((b) => b.value),
      [5000, 5200],
    );
    assert.ok(shown.title.includes('build 0: 5,000 (4,850 – 5,150)'), shown.title);
    assert.ok(shown.title.includes('build 1: 5,200 (5,044 – 5,356)'), shown.title);
    assert.ok(find('gamma', 'cat10/10', 0.99).shown.title.includes('build 1: not reached'));
    assert.equal(find('delta', 'none/10', 0.95).shown.attrs.builds, undefined);
  });

  test('how each participant was driven, as measured, instead of its client count', () => {
    assert.ok(!/\b32 clients\b/.test(html) && !/\b2 clients\b/.test(html), 'no client count where the points say how they were driven');
    assert.match(html, /<th scope="col">delta<span class="driven">32 in flight<\/span><\/th>/);
    assert.match(html, /<th scope="col">gamma<span class="driven">2 threads<\/span><\/th>/);
    assert.match(html, /<td>throughput view driven<\/td><td>32 in flight<\/td><td>2 threads<\/td>/);
    assert.match(html, /<td>index builds<\/td><td>1<\/td><td>2<\/td>/);
    assert.match(html, /<dt>driven<\/dt><dd>throughput view: 32 in flight; latency view: 1 at a time<\/dd>/);
    assert.match(html, /warm protocol, 2 index builds<\/dd>/);
  });

  test('the page data carries the stable-point fields of every point', () => {
    const json = JSON.parse(/<script type="application\/json" id="vb-data">([\s\S]*?)<\/script>/.exec(html)![1]) as {
      series: {
        dataset: string;
        participant: string;
        points: { ci?: { qps: number[] }; calibrated_for?: number; build?: number; driven?: string; passes?: number; flags: string[]; qps: number }[];
      }[];
    };
    const points = json.series.filter((s) => s.dataset === STABLE_DATASET).flatMap((s) => s.points);
    const stored = stable.flatMap((r) => r.groups.flatMap((g) => g.points));
    assert.equal(points.length, stored.length);
    points.forEach((p, i) => {
      assert.deepEqual(p.ci, stored[i].ci);
      assert.equal(p.calibrated_for, stored[i].calibrated_for);
      assert.equal(p.build, stored[i].build);
      assert.equal(p.driven, stored[i].driven);
      assert.equal(p.passes, 3);
    });
    assert.ok(points.some((p) => p.flags.includes('busy-machine')) && points.some((p) => p.calibrated_for === 0.95) && points.some((p) => p.build === 1));
  });
});

describe('the shared cell-rule cases read the same on the page', () => {
  // Each QPS case of test/helpers/cell-cases.ts becomes a participant's throughput curve; the page's
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
      if (c.expect.status === 'not_reached') assert.equal(cell.text, fmtMaxRecall(c.expect.maxRecall!), c.name);
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

describe('collapsed and leaking groups on the page', () => {
  test('a collapsed cell shows its short share, a leaking group LEAK with the leak named, and every cell its shares', async () => {
    const [r] = fixtureResults();
    const src = r.groups.find((g) => g.key === 'none/10')!;
    const collapsed = {
      ...structuredClone(src),
      key: 'sel1-scattered/10',
      filter: 'sel1-scattered',
      points: src.points.map((p) => ({ ...p, recall: p.recall * 0.4, short_results: 85, low_recall_share: 0.9 })),
    };
    const leak = { query: 3, query_tenant: 0, row: 17, row_tenant: 5 };
    const leaking = {
      ...structuredClone(src),
      key: 'tenant-large/10',
      filter: 'tenant-large',
      points: src.points.map((p, i) => (i === 0 ? { ...p, filter_violations: 1, tenant_leaks: 1, tenant_leak: leak, flags: ['invalid-results'] } : p)),
    };
    const result = { ...r, groups: [collapsed, leaking] };
    const html = await renderPage([result]);
    for (const c of deriveCells([result])) {
      const shown = findCell(html, c)!;
      assert.ok(shown, `no cell for ${c.group} ${c.target}`);
      assert.equal(shown.attrs.status, c.status);
      assert.equal(shown.attrs['short-share'], c.short_share === null ? '' : String(c.short_share));
      if (c.group === 'sel1-scattered/10') {
        assert.equal(c.status, 'collapsed');
        assert.match(shown.text, /^collapsed, short 85% low 90%/);
        assert.match(shown.title, /recall below 0\.5 at every knob/);
      } else {
        assert.equal(c.status, 'leak');
        assert.equal(shown.text, 'LEAK');
        assert.match(shown.title, /SECURITY: .* security: 1 cross-tenant row\(s\) at 1 point\(s\); first: query 3 \(tenant 0\) got row 17 of tenant 5/);
      }
    }
  });
});

describe('strategies on the page', () => {
  test('a cell shows how the engine answered where it was read, in its markup, title and data', async () => {
    const r = exactSearchFixture();
    for (const g of r.groups)
      for (const p of g.points) p.strategy = { label: g.key === 'none/10' ? 'graph walk' : `pre-filter ${HOSTILE}`, observed: g.key === 'none/10' };
    const html = await renderPage([r]);
    const none = findCell(html, { participant: 'epsilon', group: 'none/10', target: 0.95 })!;
    assert.equal(unesc(none.attrs.strategy), 'graph walk');
    assert.match(none.inner, /<span class="strategy">graph walk<\/span>/);
    assert.match(none.title, /how the engine answered: graph walk/);
    const cat = findCell(html, { participant: 'epsilon', group: 'cat10/10', target: 0.9 })!;
    assert.equal(unesc(cat.attrs.strategy), `pre-filter ${HOSTILE} (declared)`);
    // A hostile label is text, never markup.
    assert.ok(!cat.inner.includes('<script>'));
  });
});
