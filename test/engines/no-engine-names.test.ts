// src/ names no engine (docs/contracts.md, "Participants"): what it needs to know about a
// particular one, the participant declares itself (settings.json `registry`, read by
// src/runner/registry.ts). For every directory under participants/ (but those starting with
// `_`), no file under src/ holds the name as a quoted string ('name', "name", `name`, or a
// quoted path 'name/...), and a name that is not an ordinary English word appears nowhere, as a
// whole word in any case, in code or comments. "exact" is also the English word (exact ground
// truth, exactSearch): only its quoted form is refused, and the one spelling of the word as
// data (the search kind, src/report/exact-search.ts) is allowed where it is declared.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { listParticipants, loadParticipant } from '../../src/runner/participants.ts';
import { ceilingProtocols, connectExamples, credentialEnvVars, defaultRunParticipants } from '../../src/runner/registry.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SRC = join(ROOT, 'src');

/** Participant names that are also ordinary English words: src/ may use the word in prose and
 * identifiers, never as a quoted string. */
const ENGLISH_WORDS = new Set(['exact']);

/** Quoted occurrences allowed, each with its reason: file (relative to the repository), name,
 * and the whole line it must be. */
const ALLOWED: { file: string; name: string; line: string; why: string }[] = [
  {
    file: 'src/report/exact-search.ts',
    name: 'exact',
    line: "export const EXACT = 'exact' as const;",
    why: 'the search kind and knob value of exact-search points: the English word, spelled once',
  },
];

function participantDirs(): string[] {
  return readdirSync(join(ROOT, 'participants'), { withFileTypes: true })
    .filter((e) => e.isDirectory() && !e.name.startsWith('_'))
    .map((e) => e.name)
    .sort();
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(join(dir, e.name)) : [join(dir, e.name)]));
}

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The name as a quoted string or at the start of a quoted path. */
function quotedPattern(name: string): RegExp {
  return new RegExp(`['"\`]${escapeRegex(name)}['"\`/]`);
}

/** The name as a whole word (letters, digits and _ around it end the word; - does not), any case. */
function wordPattern(name: string): RegExp {
  return new RegExp(`(?<![A-Za-z0-9_])${escapeRegex(name)}(?![A-Za-z0-9_])`, 'i');
}

/** Every line of `text` that names one of `names`: `file:line: name (how): text`. */
function engineNameHits(file: string, text: string, names: string[]): string[] {
  const hits: string[] = [];
  text.split('\n').forEach((line, i) => {
    for (const name of names) {
      const quoted = quotedPattern(name).test(line);
      const word = !ENGLISH_WORDS.has(name) && wordPattern(name).test(line);
      if (!quoted && !word) continue;
      if (quoted && !word && ALLOWED.some((a) => a.file === file && a.name === name && a.line === line.trim())) continue;
      hits.push(`${file}:${i + 1}: ${name} (${quoted ? 'quoted' : 'whole word'}): ${line.trim()}`);
    }
  });
  return hits;
}

describe('src/ names no participant', () => {
  test('the detector finds quoted names and whole words, and leaves the English word alone', () => {
    const names = ['exact', 'hnswlib', 'pgvector', 'pgvector-pglite', 'redis'];
    const hit = (line: string) => engineNameHits('src/x.ts', line, names).length > 0;
    for (const line of [
      "const a = ['exact', 'x'];",
      'const b = "exact";',
      'const c = `exact`;',
      "import x from 'exact/adapter.ts';",
      "run(['pgvector-pglite']);",
      '// e.g. hnswlib-node',
      ' * Redis writes its snapshot on shutdown',
      "const P = { postgres: 'pgvector' };",
      'const url = "redis://host";',
    ]) {
      assert.ok(hit(line), line);
    }
    for (const line of [
      '// exact top-k of every query',
      'const exactSearch = exactTopK(q);',
      "const f = 'exact-search';",
      "import { x } from '../groundtruth/exact.ts';",
      'const predis = 1; // hnswlibs',
    ]) {
      assert.ok(!hit(line), line);
    }
    // The allowed spelling counts only in its own file, as its whole line.
    assert.equal(engineNameHits('src/report/exact-search.ts', "export const EXACT = 'exact' as const;", names).length, 0);
    assert.equal(engineNameHits('src/report/cells.ts', "export const EXACT = 'exact' as const;", names).length, 1);
    assert.equal(engineNameHits('src/report/exact-search.ts', "export type Search = 'ann' | 'exact';", names).length, 1);
  });

  test('no file under src/ names a participant', () => {
    const names = participantDirs();
    assert.ok(names.length > 0 && names.includes('exact'), `participants found: ${names.join(', ')}`);
    const files = filesUnder(SRC);
    assert.ok(files.length > 50, `files under src/: ${files.length}`);
    const hits = files.flatMap((f) => engineNameHits(relative(ROOT, f), readFileSync(f, 'utf8'), names));
    assert.deepEqual(
      hits,
      [],
      `src/ names participants; move the fact into the participant's settings.json registry block (src/runner/registry.ts) or its README, or word it generically:\n${hits.join('\n')}`,
    );
  });

  test('every allowed spelling is still there (an unused exception is removed)', () => {
    for (const a of ALLOWED) {
      const lines = readFileSync(join(ROOT, a.file), 'utf8')
        .split('\n')
        .map((l) => l.trim());
      assert.ok(lines.includes(a.line), `${a.file} no longer holds "${a.line}" (${a.why}); remove the exception`);
    }
  });
});

describe("the participants' declarations (settings.json registry)", () => {
  test('they give src/ what it used to name', () => {
    assert.deepEqual(defaultRunParticipants(), ['exact', 'hnswlib', 'usearch', 'lancedb', 'pgvector-pglite']);
    assert.deepEqual(connectExamples(), [
      'pgvector=postgres://user:password@host:5432/db',
      'redis=redis://:password@host:6379',
      'chroma=http://host:8000',
      'opensearch=http://host:9200',
      'weaviate=http://:apikey@host:8080',
      'milvus=http://user:password@host:19530',
    ]);
    assert.deepEqual(
      ceilingProtocols().map((c) => [c.protocol, c.participant, c.name]),
      [
        ['postgres', 'pgvector', 'PostgreSQL'],
        ['redis', 'redis', 'Redis'],
      ],
    );
    assert.deepEqual(credentialEnvVars().sort(), ['PGPASSWORD', 'REDISCLI_AUTH']);
  });

  test('every participant loads with its declarations checked against its adapter', async () => {
    for (const name of listParticipants()) {
      const p = await loadParticipant(name);
      assert.equal(p.name, name);
    }
  });

  test('a declared credential variable is masked in the output of a process that only has it in its environment', () => {
    const script = [
      "import { redactStandardStreams } from './src/util/redact.ts';",
      'redactStandardStreams();',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the child script's own template literal
      'console.log(`pg ${process.env.PGPASSWORD} redis ${process.env.REDISCLI_AUTH}`);',
    ].join('\n');
    const env: Record<string, string | undefined> = { ...process.env, PGPASSWORD: 'Pg-Env-4411', REDISCLI_AUTH: 'Redis-Env-5522' };
    delete env.VECBENCH_SECRETS;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', cwd: ROOT, env });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, 'pg *** redis ***\n');
  });
});
