// Where vecbench's own code runs from. scripts/build.mjs compiles src/ and participants/ to
// dist/ (run by `npm ci` and `npm test`); the CLI runs that JavaScript, and so do the processes
// and threads it starts (engine hosts, search threads, load workers), so none of them transpiles
// TypeScript at start. Code imported from the sources (the tests, through tsx) still imports
// sources in-process (one copy of each module, so `instanceof` holds), but starts its children
// from dist/ while the build is current, else from the sources through tsx.
//
// A module finds the files beside its source (settings.json, a native addon) through
// besideSource(), which gives the same path whether it runs from dist/ or from the sources.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
/** This file is src/util/code-paths.ts, or dist/src/util/code-paths.js in the build. */
const RUNNING_BUILD = basename(resolve(HERE, '../..')) === 'dist';
/** The repository root. */
export const ROOT = RUNNING_BUILD ? resolve(HERE, '../../..') : resolve(HERE, '../..');
const BUILD_DIR = join(ROOT, 'dist');
/** The build's record: every compiled source, repository-relative, with its mtime then. */
const BUILD_RECORD = join(BUILD_DIR, '.build.json');

/** The source file of a module: itself from the sources, its .ts in the tree from dist/. */
function sourceOf(moduleUrl: string): string {
  const file = fileURLToPath(moduleUrl);
  if (!file.startsWith(BUILD_DIR + sep)) return file;
  return join(ROOT, relative(BUILD_DIR, file)).replace(/\.js$/, '.ts');
}

/** A path relative to a module's source directory (`../../native/x.node`, `settings.json`). */
export function besideSource(moduleUrl: string, rel: string): string {
  return resolve(dirname(sourceOf(moduleUrl)), rel);
}

/** The compiled counterpart of a source file under the tree, or null outside it. */
function builtOf(source: string): string | null {
  const rel = relative(ROOT, source);
  if (rel.startsWith('..') || !source.endsWith('.ts')) return null;
  return join(BUILD_DIR, rel).replace(/\.ts$/, '.js');
}

interface BuildRecord {
  sources: Record<string, number>;
}

let recordCache: BuildRecord | null | undefined;
function record(): BuildRecord | null {
  if (recordCache !== undefined) return recordCache;
  try {
    recordCache = JSON.parse(readFileSync(BUILD_RECORD, 'utf8')) as BuildRecord;
  } catch {
    recordCache = null;
  }
  return recordCache;
}

/** Why the build cannot run the current sources, or null when it can: no build, or a source
 * changed since it was built. Checks the sources the build compiled (a few hundred stats).
 * @public bin/vecbench.js calls it from the build, where the dead-code check cannot follow. */
export function buildProblem(): string | null {
  const r = record();
  if (r === null) return `no build in ${BUILD_DIR}: run \`npm run build\` (npm ci builds it)`;
  for (const [rel, mtime] of Object.entries(r.sources)) {
    let now: number;
    try {
      now = statSync(join(ROOT, rel)).mtimeMs;
    } catch {
      return `${rel} was removed after the build in ${BUILD_DIR}: run \`npm run build\``;
    }
    if (now !== mtime) return `${rel} changed after the build in ${BUILD_DIR}: run \`npm run build\``;
  }
  return null;
}

let buildUsable: boolean | undefined;
/** Whether children may run the build: always from the build; from the sources, when the
 * build is current (else they run the sources through tsx, slower but never stale). */
function childrenRunBuild(): boolean {
  if (RUNNING_BUILD) return true;
  buildUsable ??= buildProblem() === null;
  return buildUsable;
}

/** How to start a source file as a process or worker thread: the file, and the Node flags it
 * needs (tsx's loader when it runs from the sources). */
export function runnable(source: string): { file: string; execArgv: string[] } {
  const built = builtOf(source);
  if (built !== null && childrenRunBuild() && existsSync(built)) return { file: built, execArgv: [] };
  return { file: source, execArgv: source.endsWith('.ts') ? ['--import', import.meta.resolve('tsx')] : [] };
}

/** The module a worker thread starts for a source file: its compiled counterpart, or from the
 * sources the plain-JavaScript entry beside it that registers tsx first (a worker thread does
 * not inherit the loader a process registered through tsx's API). */
export function threadEntry(source: string, tsxEntry: URL): URL {
  const { file } = runnable(source);
  return file === source ? tsxEntry : pathToFileURL(file);
}

/** The file to import() in this process for a source file: its compiled counterpart when this
 * process runs the build (a participant directory outside the tree has none: its adapter.ts
 * is imported through tsx, registered on first need). */
export async function importable(source: string): Promise<string> {
  if (!RUNNING_BUILD || !source.endsWith('.ts')) return source;
  const built = builtOf(source);
  if (built !== null && existsSync(built)) return built;
  await registerTsx();
  return source;
}

let tsxRegistered = false;
async function registerTsx(): Promise<void> {
  if (tsxRegistered) return;
  const { register } = await import('tsx/esm/api');
  register();
  tsxRegistered = true;
}
