// The results page's stylesheet, inlined by src/report/html.ts. Plain CSS, no web fonts (the
// page must render with no network): a system font stack that falls back to DejaVu Sans.
export const PAGE_CSS = `
:root { --fg: #1d2433; --muted: #5f6b7a; --line: #dde2e8; --bg: #f6f7f9; --card: #fff; --accent: #2f5fa7;
  --best: #e3f3e6; --warn: #8a5a00; --warnbg: #fff4db; --wide: #f0f0f4; --tie: #eef4fb; --na: #9aa3ad; --bad: #a3262a; }
* { box-sizing: border-box; }
[hidden] { display: none !important; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; color: var(--fg); background: var(--bg); font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
header.top { background: #1d2433; color: #fff; padding: 14px 20px 10px; }
header.top h1 { margin: 0; font-size: 20px; font-weight: 600; }
header.top p { margin: 4px 0 0; color: #c5ccd6; font-size: 12.5px; }
nav.controls { position: sticky; top: 0; z-index: 5; display: flex; flex-wrap: wrap; gap: 8px 18px; align-items: center;
  padding: 8px 20px; background: #fff; border-bottom: 1px solid var(--line); }
nav.controls label { font-size: 12.5px; color: var(--muted); display: inline-flex; align-items: center; gap: 6px; }
nav.controls select { font: inherit; font-size: 13px; padding: 3px 6px; border: 1px solid #c3cad3; border-radius: 4px; background: #fff; color: var(--fg); max-width: 60vw; }
nav.controls a { font-size: 12.5px; color: var(--accent); text-decoration: none; }
main { max-width: 1280px; margin: 0 auto; padding: 8px 20px 40px; }
section.part { margin-top: 22px; }
section.part > h2 { font-size: 17px; margin: 0 0 6px; padding-bottom: 4px; border-bottom: 2px solid var(--line); }
h3 { font-size: 15px; margin: 16px 0 6px; }
h4 { font-size: 13.5px; margin: 12px 0 4px; }
p.note, .note { color: var(--muted); font-size: 12.5px; margin: 4px 0 8px; }
.legend, .filters-legend { display: flex; flex-wrap: wrap; gap: 6px 16px; margin: 6px 0 10px; font-size: 12.5px; }
.legend-item { display: inline-flex; align-items: center; gap: 6px; }
.legend-item.imported { font-style: italic; }
.swatch { width: 12px; height: 12px; border-radius: 50%; border: 2px solid; display: inline-block; }
.cross { font-weight: 700; width: 12px; text-align: center; }
.legend-item svg { flex: none; }
.chart-grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(340px, 1fr)); gap: 12px; }
figure.chart-card { margin: 0; background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: 8px 10px 4px; min-width: 0; }
figure.chart-card figcaption { font-weight: 600; font-size: 13px; margin-bottom: 2px; }
.plot svg { max-width: 100%; height: auto; }
.filters-grid { grid-template-columns: repeat(auto-fill, minmax(min(100%, 600px), 1fr)); }
.filters-pair { display: flex; flex-wrap: wrap; gap: 6px 12px; }
svg.vb-filters { max-width: 100%; height: auto; }
svg.vb-filters text { font-size: 10px; fill: var(--muted); }
svg.vb-filters line.axis, svg.vb-filters line.grid { stroke: var(--line); }
svg.vb-filters polyline { stroke-width: 1.5; }
ul.filters-missing { margin: 2px 0 4px; padding-left: 18px; font-size: 12px; color: var(--muted); }
.empty { color: var(--muted); font-style: italic; font-size: 12.5px; }
.scroll { overflow-x: auto; -webkit-overflow-scrolling: touch; background: var(--card); border: 1px solid var(--line); border-radius: 6px; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
table.cells { width: auto; min-width: 100%; }
/* Many participants: a cell's parts (value, ±, lead) wrap onto lines of their own, and long
   names break, so the table stays within its section. */
table.cells td.cell { white-space: normal; }
table.cells td.cell > span { display: inline-block; white-space: nowrap; }
table.cells thead th, table.load thead th { white-space: normal; overflow-wrap: anywhere; min-width: 5em; }
table.load td { white-space: normal; }
th, td { padding: 5px 9px; border-bottom: 1px solid var(--line); text-align: right; white-space: nowrap; vertical-align: top; }
th { background: #eef1f5; font-weight: 600; position: sticky; top: 0; }
th:first-child, td:first-child { text-align: left; position: sticky; left: 0; background: inherit; }
tbody tr { background: #fff; }
tbody tr.first-of-group td { border-top: 1px solid #c9d0d9; }
td.grp { font-weight: 600; }
td.tgt { color: var(--muted); text-align: left; }
th .badge, .badge { display: inline-block; font-size: 10.5px; font-weight: 600; padding: 0 5px; border-radius: 3px; margin-left: 4px; vertical-align: 1px; }
.badge.imported { background: #ede4f7; color: #5b2f8e; }
.badge.measured { background: #e1ecf8; color: #1f4b85; }
.badge.exact { background: #fdf0d8; color: #7a4a00; }
td.cell .v { font-variant-numeric: tabular-nums; }
td.cell .lead { color: var(--muted); font-size: 11.5px; margin-left: 5px; font-variant-numeric: tabular-nums; }
td.cell.best { background: var(--best); }
td.cell.best .lead { color: #22632f; font-weight: 600; }
td.st-not_reached { color: var(--warn); background: var(--warnbg); }
td.st-collapsed { color: var(--bad); background: var(--warnbg); }
td.st-leak { color: #fff; background: var(--bad); font-weight: 700; }
td.cell .shares { color: var(--warn); font-size: 10.5px; margin-left: 5px; }
td.cell .strategy { display: block; color: var(--muted); font-size: 10px; }
td.st-bracket_too_wide { color: #4a4f66; background: repeating-linear-gradient(135deg, var(--wide), var(--wide) 5px, #fafafc 5px, #fafafc 10px); }
td.st-not_asked { color: var(--na); font-style: italic; }
td.st-unsupported { color: #6b4e8a; font-style: italic; }
td.st-none { color: var(--bad); }
td.st-missing { color: var(--na); }
td.cell .mark { color: var(--muted); font-size: 11px; margin-left: 2px; }
td.cell .ci { color: var(--muted); font-size: 10.5px; margin-left: 4px; font-variant-numeric: tabular-nums; }
td.cell.tie { background: var(--tie); }
td.cell.tie .lead { color: #4a4f66; font-weight: 600; }
td.cell .excl { color: var(--bad); font-size: 10.5px; margin-left: 5px; cursor: help; }
th .driven { display: block; font-weight: 400; font-size: 10.5px; color: var(--muted); }
.status-key .tie-key { background: var(--tie); }
tr.all-not-asked { display: none; }
table.show-not-asked tr.all-not-asked { display: table-row; }
.status-key { display: flex; flex-wrap: wrap; gap: 6px 12px; font-size: 12px; margin: 6px 0; }
.status-key span { padding: 1px 6px; border-radius: 3px; border: 1px solid var(--line); }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(380px, 1fr)); gap: 12px; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: 10px 14px; min-width: 0; }
.card h3 { margin-top: 2px; }
dl.facts { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 3px 12px; margin: 6px 0; font-size: 13px; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
pre { background: #f3f5f8; border: 1px solid var(--line); border-radius: 4px; padding: 6px 8px; font-size: 12px; overflow-x: auto; margin: 4px 0; white-space: pre-wrap; overflow-wrap: anywhere; }
code { font-size: 12px; background: #f0f2f5; padding: 0 3px; border-radius: 3px; }
details > summary { cursor: pointer; color: var(--accent); font-size: 12.5px; margin: 4px 0; }
.readme { font-size: 13px; }
.readme ul { padding-left: 18px; margin: 4px 0; }
.readme p { margin: 4px 0; }
.nm { color: var(--na); font-style: italic; }
td.bad { color: var(--bad); font-weight: 600; }
table.resources caption { caption-side: top; text-align: left; font-size: 12.5px; color: var(--muted); padding: 6px 9px 2px; }
table.resources th.grp-head { text-align: center; border-left: 1px solid var(--line); }
table.resources th, table.resources td { white-space: normal; }
table.resources th.who { font-weight: 600; text-align: left; background: #fff; overflow-wrap: anywhere; min-width: 9em; }
table.resources td { font-variant-numeric: tabular-nums; }
table.resources td.none { text-align: left; }
table.resources thead tr + tr th { position: static; text-align: right; background: #eef1f5; }
ol.notes { margin: 4px 0 12px; padding-left: 22px; font-size: 12px; color: var(--muted); }
.churn-legend { display: flex; flex-wrap: wrap; gap: 6px 16px; margin: 6px 0 10px; font-size: 12.5px; }
footer { color: var(--muted); font-size: 12px; text-align: center; padding: 16px; }
@media (max-width: 640px) {
  header.top, nav.controls, main { padding-left: 10px; padding-right: 10px; }
  nav.controls { gap: 6px 10px; }
  .chart-grid, .cards { grid-template-columns: minmax(0, 1fr); }
  th, td { padding: 4px 6px; font-size: 12px; }
  dl.facts { grid-template-columns: minmax(0, 1fr); }
  dl.facts dt { margin-top: 4px; }
}
`;
