// The repository refers to no file outside it (docs/method.md is the method, docs/engines.md
// the engine facts): no tracked file names the developers' private notes or the folder they
// live in, and every docs/<name>.md that a tracked file mentions exists.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SELF = 'test/unit/docs-refs.test.ts';

/** References to files outside the repository, each with what to write instead. */
const OUTSIDE: { pattern: RegExp; fix: string }[] = [
  { pattern: /\bMETHOD\.md\b/, fix: 'docs/method.md' },
  { pattern: /\bENGINES\.md\b/, fix: 'docs/engines.md' },
  { pattern: /(?:\.\.\/)+shared\//, fix: 'a file inside the repository' },
  { pattern: /\/work\/shared\b/, fix: 'a file inside the repository' },
  { pattern: /\bMETHOD [0-9]/, fix: 'docs/method.md §N' },
];
const DOC_PATH = /\bdocs\/[A-Za-z0-9_.-]+\.md\b/g;

/** Every tracked file that is present and readable as text, with its lines. */
function trackedTexts(): { path: string; lines: string[] }[] {
  let out: string;
  try {
    out = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  } catch (e) {
    throw new Error(`git ls-files failed in ${ROOT} (this test needs a git checkout): ${(e as Error).message}`);
  }
  const files = out.split('\0').filter((p) => p !== '');
  assert.ok(files.length > 0, 'git ls-files listed no files');
  const texts: { path: string; lines: string[] }[] = [];
  for (const path of files) {
    const abs = join(ROOT, path);
    if (!existsSync(abs) || !statSync(abs).isFile()) continue; // deleted in the work tree
    const text = readFileSync(abs, 'utf8');
    if (text.includes('\0')) continue; // binary
    texts.push({ path, lines: text.split('\n') });
  }
  return texts;
}

const files = trackedTexts();

test('no tracked file refers to the notes outside the repository', () => {
  const found: string[] = [];
  for (const { path, lines } of files) {
    if (path === SELF) continue;
    lines.forEach((line, i) => {
      for (const { pattern, fix } of OUTSIDE) {
        if (pattern.test(line)) found.push(`${path}:${i + 1}: ${line.trim().slice(0, 120)} (matches ${pattern}; refer to ${fix})`);
      }
    });
  }
  assert.deepEqual(found, [], `references to files outside the repository:\n${found.join('\n')}`);
});

test('every docs/<name>.md a tracked file mentions exists', () => {
  const missing: string[] = [];
  let mentions = 0;
  for (const { path, lines } of files) {
    lines.forEach((line, i) => {
      for (const m of line.matchAll(DOC_PATH)) {
        mentions++;
        if (!existsSync(join(ROOT, m[0]))) missing.push(`${path}:${i + 1}: ${m[0]} does not exist`);
      }
    });
  }
  assert.ok(mentions > 0, 'no docs/<name>.md mention found at all: the scan is broken');
  assert.deepEqual(missing, [], missing.join('\n'));
});

test('the method and the engine notes are in the repository', () => {
  for (const doc of ['docs/method.md', 'docs/engines.md']) {
    assert.ok(existsSync(join(ROOT, doc)), `${doc} is missing`);
  }
  // Every section cited as docs/method.md §N (or [method §N](...) inside docs/) exists.
  const method = readFileSync(join(ROOT, 'docs/method.md'), 'utf8');
  const sections = new Set([...method.matchAll(/^## (\d+)\. /gm)].map((m) => Number(m[1])));
  for (let n = 1; n <= 9; n++) assert.ok(sections.has(n), `docs/method.md has no section ${n}`);
  const cited: string[] = [];
  for (const { path, lines } of files) {
    lines.forEach((line, i) => {
      for (const m of line.matchAll(/\bmethod(?:\.md)? §(\d+)(?:, §(\d+))?/g)) {
        for (const n of [m[1], m[2]].filter((x) => x !== undefined).map(Number)) {
          if (!sections.has(n)) cited.push(`${path}:${i + 1}: cites §${n}, which docs/method.md does not have`);
        }
      }
    });
  }
  assert.deepEqual(cited, [], cited.join('\n'));
});
