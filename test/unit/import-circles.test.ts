// No import circles among src/ and participants/ (type-only imports count too), and the
// orchestrator (src/runner/run.ts) is imported by the CLI commands only, and no folder imports
// one above it in the layers of docs/design.md.
// dependency-cruiser is pinned at 17.4.3, the last line that runs on Node 20 (18 needs Node 22).
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { cruise, type ICruiseResult } from 'dependency-cruiser';

const ROOT = resolve(import.meta.dirname, '../..');

async function cruiseDirs(dirs: string[], baseDir: string): Promise<ICruiseResult> {
  const r = await cruise(dirs, {
    baseDir,
    // Without it dependency-cruiser reads the compiled JavaScript, where type-only imports are gone.
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    validate: true,
    ruleSet: { forbidden: [{ name: 'no-circular', severity: 'error', from: {}, to: { circular: true } }] },
  });
  assert.equal(typeof r.output, 'object');
  return r.output as ICruiseResult;
}

/** Each circle once, as its modules in import order from the first by name, closed. */
function circlesOf(result: ICruiseResult): string[] {
  const seen = new Set<string>();
  for (const v of result.summary.violations) {
    if (v.rule.name !== 'no-circular' || !v.cycle) continue;
    const names = [v.from, ...v.cycle.map((c) => c.name)];
    names.pop(); // the cycle ends back at `from`
    const first = names.indexOf([...names].sort()[0]);
    const ring = [...names.slice(first), ...names.slice(0, first)];
    seen.add([...ring, ring[0]].join(' -> '));
  }
  return [...seen].sort();
}

let repo: Promise<ICruiseResult> | undefined;
const cruiseRepo = () => (repo ??= cruiseDirs(['src', 'participants'], ROOT));

test('no import circles in src/ and participants/', async () => {
  const result = await cruiseRepo();
  // The graph is real: the tool resolved the .ts imports (an empty graph has no circles either).
  const run = result.modules.find((m) => m.source === 'src/runner/run.ts');
  assert.ok(run, 'src/runner/run.ts was not cruised');
  assert.ok(
    run.dependencies.some((d) => d.resolved === 'src/runner/measure-group.ts'),
    'run.ts -> measure-group.ts not seen',
  );
  const circles = circlesOf(result);
  assert.deepEqual(circles, [], `import circles:\n${circles.join('\n')}`);
});

test('only the CLI commands import the orchestrator (src/runner/run.ts)', async () => {
  const result = await cruiseRepo();
  const importers = result.modules.filter((m) => m.dependencies.some((d) => d.resolved === 'src/runner/run.ts')).map((m) => m.source);
  assert.ok(importers.length > 0);
  const others = importers.filter((f) => !f.startsWith('src/commands/'));
  assert.deepEqual(others, [], `src/runner/run.ts imported by ${others.join(', ')}`);
});

test('a circle, even through a type-only import, is found and named', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'vb-circles-'));
  try {
    writeFileSync(join(dir, 'a.ts'), "import type { B } from './b.ts';\nexport interface A { b?: B }\n");
    writeFileSync(join(dir, 'b.ts'), "import { c } from './c.ts';\nexport interface B { c: typeof c }\n");
    writeFileSync(join(dir, 'c.ts'), "import type { A } from './a.ts';\nexport const c: A | null = null;\n");
    writeFileSync(join(dir, 'd.ts'), "import { c } from './c.ts';\nexport const d = c;\n");
    assert.deepEqual(circlesOf(await cruiseDirs(['.'], dir)), ['a.ts -> b.ts -> c.ts -> a.ts']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** The layers of docs/design.md ("Layers"): each line's folders and top-level files, lowest first. */
function declaredLayers(): string[][] {
  const doc = readFileSync(join(ROOT, 'docs/design.md'), 'utf8');
  const block = /```layers\n([\s\S]*?)```/.exec(doc);
  assert.ok(block, 'docs/design.md has a ```layers block');
  return block[1]
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.length > 0)
    .map((l) => l.split(/\s+/));
}

/** The unit a file belongs to (its folder under src/, or itself at the top), and its layer. */
function placeOf(layers: string[][], file: string): { unit: string; layer: number } | null {
  for (let i = 0; i < layers.length; i++) {
    for (const unit of layers[i]) if (file === unit || file.startsWith(`${unit}/`)) return { unit, layer: i };
  }
  return null;
}

/** Imports against the layers: to a later line, or between siblings of one line. */
function arrowsAgainst(result: ICruiseResult, layers: string[][]): string[] {
  const bad: string[] = [];
  for (const m of result.modules) {
    const from = placeOf(layers, m.source);
    if (!m.source.startsWith('src/')) continue;
    assert.ok(from, `${m.source} lies in no layer of docs/design.md`);
    for (const d of m.dependencies) {
      const to = placeOf(layers, d.resolved);
      if (!to || to.unit === from.unit) continue;
      if (to.layer > from.layer || (to.layer === from.layer && to.unit !== from.unit))
        bad.push(`${m.source} -> ${d.resolved} (${from.unit} may not import ${to.unit})`);
    }
  }
  return bad.sort();
}

test('no folder under src/ imports one above it (docs/design.md, Layers)', async () => {
  const layers = declaredLayers();
  assert.ok(layers.flat().includes('src/runner') && layers.flat().includes('src/report'));
  const result = await cruiseRepo();
  const bad = arrowsAgainst(result, layers);
  assert.deepEqual(bad, [], `imports against the layers:\n${bad.join('\n')}`);
  // The runner in particular: no feature, no report module.
  const runner = result.modules.filter((m) => m.source.startsWith('src/runner/'));
  assert.ok(runner.length > 20);
  for (const m of runner)
    for (const d of m.dependencies) assert.ok(!/^src\/(churn|hybrid|loadgen|report)\//.test(d.resolved), `${m.source} imports ${d.resolved}`);
});

test('an import against the layers, type-only or between siblings, is found and named', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'vb-layers-'));
  try {
    for (const f of ['src/low', 'src/mid', 'src/side', 'src/top']) mkdirSync(join(dir, f), { recursive: true });
    writeFileSync(join(dir, 'src/low/a.ts'), "import type { T } from '../top/t.ts';\nexport const a: T | null = null;\n");
    writeFileSync(join(dir, 'src/mid/m.ts'), "import { a } from '../low/a.ts';\nimport { s } from '../side/s.ts';\nexport const m = [a, s];\n");
    writeFileSync(join(dir, 'src/side/s.ts'), 'export const s = 1;\n');
    writeFileSync(join(dir, 'src/top/t.ts'), "import { m } from '../mid/m.ts';\nexport type T = typeof m;\n");
    const layers = [['src/low'], ['src/mid', 'src/side'], ['src/top']];
    assert.deepEqual(arrowsAgainst(await cruiseDirs(['src'], dir), layers), [
      'src/low/a.ts -> src/top/t.ts (src/low may not import src/top)',
      'src/mid/m.ts -> src/side/s.ts (src/mid may not import src/side)',
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
