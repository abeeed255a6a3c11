// The results page (`vecbench report --html DIR`, and the end of `vecbench run`): one
// self-contained HTML file written from the stored result files.
//
// - The tables are static HTML written (src/report/page/tables-html.ts) from deriveCells (src/report/cells.ts), the one
//   implementation of the cell rule; the page never re-reads a cell. Every cell carries its
//   exact value in data attributes so the browser test can hold it against `report --json`.
// - The curves are drawn in the browser by a small script (src/report/page/app.ts) that is
//   bundled with Observable Plot and src/metrics/frontier.ts by esbuild into one IIFE and
//   inlined, with the stored points as JSON, so viewing the page needs no network (a
//   Content-Security-Policy forbids any fetch).
// - Uncertainty is shown where it was measured: a cell prints ± (half its 95 % interval) and ≈
//   for a tie (leadText), its title the exact bounds, each build's reading, the calibration's
//   account (why) and the flagged points left off the frontier; the curves draw interval bars.
//   Results measured before stable points carry none of it and render as before.
// - Everything that came from a result file or a participant's README is escaped (page/html-text.ts), or
//   set as text by the script.
// esbuild is pinned to the version tsx depends on (0.28.2), so one copy serves both and the
// bundled page script is built by the same compiler that runs the sources.
import { esc, isRecord, jsonForScript } from './page/html-text.ts';
// The escaping rules are part of this module's face (the tests hold them here).
export { esc, jsonForScript, miniMarkdown } from './page/html-text.ts';
import { participantOrder, sortGroups } from './page/tables-html.ts';
import { PAGE_SECTIONS } from './page/sections.ts';
import { datasetTiers } from './page/disk-html.ts';
import { build } from 'esbuild';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { deriveCells } from './cells.ts';
import type { ChurnCurve, ExtraCurve, PageData, PageSeries } from './page/types.ts';
import { PAGE_CSS } from './page/style.ts';
import { exactSearchTest } from './exact-search.ts';
import type { ResultFile } from '../results/schema.ts';
import { readingsOf } from '../results/readings.ts';
import { readAllResults } from '../results/store.ts';
import { writeFileAtomic } from '../util/atomic.ts';
import { besideSource, ROOT } from '../util/code-paths.ts';
import { UserError } from '../util/errors.ts';
import { redact, redactValue } from '../util/redact.ts';

const APP_ENTRY = besideSource(import.meta.url, 'page/app.ts');
const DEFAULT_PARTICIPANTS_DIR = join(ROOT, 'participants');

interface PageOptions {
  /** Prepared datasets directory: the page shows each dataset's manifest when it is there. */
  dataDir?: string;
  /** Where participants/<name>/README.md live (default: the repository's participants/). */
  participantsDir?: string;
  /** Time printed in the header (default now). */
  generated?: Date;
}

// ---------- the script ----------

let scriptCache: Promise<string> | null = null;

/** The page script: app.ts with Observable Plot and frontier.ts, bundled into one IIFE. */
function pageScript(): Promise<string> {
  scriptCache ??= build({
    entryPoints: [APP_ENTRY],
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'es2020',
    minify: true,
    write: false,
    legalComments: 'eof',
    logLevel: 'silent',
  }).then((r) => {
    const js = r.outputFiles[0].text;
    // Inline in <script>: make sure nothing in the bundle can close or comment out the tag.
    return js.replace(/<\/(script)/gi, '<\\/$1').replace(/<!--/g, '<\\!--');
  });
  return scriptCache;
}

// ---------- the page ----------

export async function renderPage(results: ResultFile[], opts: PageOptions = {}): Promise<string> {
  const cells = deriveCells(results);
  const datasets = [...new Set(results.map((r) => r.dataset.name))].sort();
  const participants: PageData['participants'] = {};
  const groups: PageData['groups'] = {};
  for (const ds of datasets) {
    participants[ds] = participantOrder(results, ds);
    groups[ds] = sortGroups(results.filter((r) => r.dataset.name === ds).flatMap((r) => r.groups.map((g) => g.key)));
  }
  const series: PageSeries[] = results.flatMap((r) => {
    const isExact = exactSearchTest(r);
    return r.groups.map((g) => ({
      dataset: r.dataset.name,
      participant: r.participant,
      origin: r.origin,
      group: g.key,
      filter: g.filter,
      k: g.k,
      status: g.status,
      reason: g.reason,
      points: g.points.map((p) => ({
        ladder_index: p.ladder_index,
        knobs: p.knobs,
        view: p.view,
        clients: p.clients,
        queries: p.queries,
        ...readingsOf(p),
        qps: p.qps,
        latency_ms: p.latency_ms,
        flags: p.flags,
        // Absent in older results; JSON leaves undefined fields out, so they stay absent.
        passes: p.passes,
        ci: p.ci,
        calibrated_for: p.calibrated_for,
        build: p.build,
        driven: p.driven,
        ...(isExact(p) ? { exact: true as const } : {}),
      })),
    }));
  });
  const notRecorded: PageData['notRecorded'] = {};
  for (const r of results) {
    const imp = r.extra?.import;
    if (isRecord(imp) && Array.isArray(imp.not_recorded)) notRecorded[`${r.dataset.name}|${r.participant}`] = imp.not_recorded.map(String);
  }
  const extraCurves: ExtraCurve[] = [];
  const churnCurves: ChurnCurve[] = [];
  const input = {
    results,
    cells,
    datasets,
    participantsDir: opts.participantsDir ?? DEFAULT_PARTICIPANTS_DIR,
    dataDir: opts.dataDir,
    extraCurves,
    churnCurves,
  };
  const sections = PAGE_SECTIONS.map((s) => ({ ...s, text: s.html(input) })).filter((s) => s.text !== '');
  const tiers = datasetTiers(results, datasets);
  const tierNames = [...new Set(datasets.map((d) => tiers[d]))];
  const data: PageData = { datasets, participants, groups, series, cells, notRecorded, extraCurves, churnCurves };

  const ks = [...new Set(results.flatMap((r) => r.groups.map((g) => g.k)))].sort((a, b) => a - b);
  const filters = [...new Set(sortGroups(results.flatMap((r) => r.groups.map((g) => g.key))).map((g) => g.split('/')[0]))];
  const option = (v: string, label: string, selected = false, attrs = '') =>
    `<option value="${esc(v)}"${attrs}${selected ? ' selected' : ''}>${esc(label)}</option>`;
  const generated = (opts.generated ?? new Date()).toISOString();
  const imported = results.filter((r) => r.origin === 'imported').length;

  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:">
<title>vecbench results</title>
<style>${PAGE_CSS}</style>
</head>
<body>
<header class="top"><h1>vecbench results</h1><p>${esc(`${results.length} result file(s)${imported ? ` (${imported} imported from other harnesses)` : ''}, ${datasets.length} dataset(s); page written ${generated}. Every number here is derived from the stored measured points.`)}</p></header>
<nav class="controls" aria-label="selectors">
<label>tier <select id="sel-tier">${tierNames.map((t, i) => option(t, t, i === 0)).join('')}</select></label>
<label>dataset <select id="sel-dataset">${datasets.map((d) => option(d, d, d === datasets.find((x) => tiers[x] === tierNames[0]), ` data-tier="${esc(tiers[d])}"`)).join('')}</select></label>
<label>k <select id="sel-k">${option('all', 'all')}${ks.map((k, i) => option(String(k), String(k), i === 0)).join('')}</select></label>
<label>filter <select id="sel-filter">${option('all', 'all')}${filters.map((f) => option(f, f)).join('')}</select></label>
<label>curve <select id="sel-curve">${option('qps', 'throughput: QPS', true)}${option('p50', 'latency: p50')}${option('p99', 'latency: p99')}</select></label>
<label>recall axis <select id="sel-xaxis">${option('linear', 'linear', true)}${option('nines', 'nines: −log10(1 − recall)')}</select></label>
<a href="#curves">curves</a>${sections.map((s) => `<a href="#${s.id}">${esc(s.nav)}</a>`).join('')}
</nav>
<main>
<section class="part" id="curves"><h2>Recall vs throughput</h2>
<p class="note">One chart per group (filter, k). Dots are measured points (hollow: imported from another harness; ◆: a point calibrated for a target recall; red ring: a flagged point left off the frontier); the line is each participant's Pareto frontier (one per index build where there are several); × marks the table's readings. Bars are 95 % intervals: vertical for QPS (or the latency percentile drawn), horizontal for recall. QPS and latency are on log axes. The recall axis is linear or in nines, x = −log10(1 − recall), which spreads 0.9 – 0.9999 evenly; there recall 1.0 is drawn at 0.99999, the right edge. Hover a point for its knobs, recall readings, intervals, latency and flags.</p>
<div id="charts"><p class="empty">The charts need JavaScript.</p></div>
</section>
${sections.map((s) => s.text).join('\n')}
</main>
<footer>vecbench — charts drawn with Observable Plot, bundled into this page.</footer>
<script type="application/json" id="vb-data">${jsonForScript(data)}</script>
<script>${await pageScript()}</script>
</body>
</html>
`;
}

/** Reads every result file under outDir and writes pageDir/index.html; returns its path. */
export async function writePage(outDir: string, pageDir: string, opts: PageOptions = {}): Promise<string> {
  // Credentials never reach the page: the data is masked value by value (result files written by
  // another vecbench may hold some), then the whole text (README text, manifests) by rule.
  const results = readAllResults(outDir).map((r) => redactValue(r));
  if (results.length === 0) throw new UserError(`no result files in ${outDir}; run vecbench run first (or pass --out DIR)`);
  const html = redact(await renderPage(results, opts), { keyValues: false });
  mkdirSync(pageDir, { recursive: true });
  const path = join(resolve(pageDir), 'index.html');
  writeFileAtomic(path, html);
  return path;
}
