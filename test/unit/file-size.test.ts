// No TypeScript file under src/ is over 400 lines (issue 16): a file that long holds more than
// one thing, and is split into modules named for what each holds. Lines are counted as `wc -l`
// counts them (newline characters).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const MAX_LINES = 400;

/** Every *.ts file under dir, recursively. */
function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.isDirectory()) out.push(...tsFiles(path));
    else if (e.isFile() && e.name.endsWith('.ts')) out.push(path);
  }
  return out;
}

const lineCount = (text: string) => text.split('\n').length - 1;

test(`every .ts file under src/ has at most ${MAX_LINES} lines`, () => {
  const files = tsFiles(join(ROOT, 'src'));
  assert.ok(files.length > 0, 'no .ts files found under src/');
  const over = files
    .map((f) => ({ file: relative(ROOT, f), lines: lineCount(readFileSync(f, 'utf8')) }))
    .filter((f) => f.lines > MAX_LINES)
    .sort((a, b) => b.lines - a.lines);
  assert.deepEqual(
    over.map((f) => `${f.file}: ${f.lines} lines`),
    [],
    `files over ${MAX_LINES} lines (split each into modules named for what they hold):\n${over.map((f) => `  ${f.file}: ${f.lines} lines`).join('\n')}`,
  );
});

test('lines are counted as wc -l counts them', () => {
  assert.equal(lineCount(''), 0);
  assert.equal(lineCount('a\n'), 1);
  assert.equal(lineCount('a\nb'), 1);
  assert.equal(lineCount('a\nb\n'), 2);
});

// docs/contracts.md holds the contracts only (issue 39: at most a third of its 1,589 lines when
// design, method and engine facts were mixed in); what is not a contract goes to its own doc.
const CONTRACTS_MAX_LINES = Math.floor(1589 / 3);

test(`docs/contracts.md has at most ${CONTRACTS_MAX_LINES} lines`, () => {
  const lines = lineCount(readFileSync(join(ROOT, 'docs', 'contracts.md'), 'utf8'));
  assert.ok(lines <= CONTRACTS_MAX_LINES, `docs/contracts.md has ${lines} lines: move what is design, method or engine facts to its own doc`);
});
