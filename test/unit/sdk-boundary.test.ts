// The participant SDK is the only door from participants/ into src/ (docs/contracts.md, "The
// participant SDK"), and participants do not reach into each other: engine code two of them
// share lives in participants/_shared. A new import that breaks either rule fails here, naming
// the file and the import.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import test from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const PARTICIPANTS = join(ROOT, 'participants');
const SDK = join(ROOT, 'src', 'sdk', 'index.ts');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : /\.(ts|mts|mjs|js)$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

/** Every relative module specifier a file imports or re-exports (static and dynamic). */
function specifiers(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)['"](\.{1,2}\/[^'"]+)['"]/g)) out.push(m[1]);
  return out;
}

test('participants import src/ only through src/sdk/index.ts, and no participant imports another', () => {
  const wrong: string[] = [];
  let checked = 0;
  for (const file of sources(PARTICIPANTS)) {
    const own = relative(PARTICIPANTS, file).split(sep)[0];
    for (const spec of specifiers(file)) {
      checked++;
      const target = resolve(dirname(file), spec);
      const rel = relative(ROOT, target);
      if (rel.startsWith(`src${sep}`) && target !== SDK) wrong.push(`${relative(ROOT, file)}: ${spec} (import it from src/sdk/index.ts)`);
      if (rel.startsWith(`participants${sep}`)) {
        const other = relative(PARTICIPANTS, target).split(sep)[0];
        if (other !== own && other !== '_shared')
          wrong.push(`${relative(ROOT, file)}: ${spec} (another participant's file: move what both use to participants/_shared)`);
      }
    }
  }
  assert.ok(checked > 10, `only ${checked} imports seen: the scan is broken`);
  assert.deepEqual(wrong, []);
});

test('the scan sees what it must refuse', () => {
  const tmp = join(PARTICIPANTS, '_shared', 'postgres-sql.ts');
  assert.ok(
    specifiers(tmp).some((s) => s.endsWith('src/sdk/index.ts')),
    'the shared SQL imports the SDK',
  );
  // The regex reads the forms participants write: named, type-only, re-export, dynamic.
  const forms = [
    "import { a } from '../../src/x.ts';",
    "import type { B } from '../y/adapter.ts';",
    "export { default } from '../redis/adapter.ts';",
    "await import('../../src/z.ts')",
  ].join('\n');
  const found = [...forms.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)['"](\.{1,2}\/[^'"]+)['"]/g)].map((m) => m[1]);
  assert.deepEqual(found, ['../../src/x.ts', '../y/adapter.ts', '../redis/adapter.ts', '../../src/z.ts']);
});
