// No import circles among src/ and participants/ (type-only imports count too), and the
// orchestrator (src/runner/run.ts) is imported by the CLI commands only.
// dependency-cruiser is pinned at 17.4.3, the last line that runs on Node 20 (18 needs Node 22).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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
