// `npm run build` (also run by `npm ci` and at the start of `npm test`): compiles src/ and
// participants/ to JavaScript under dist/, one output file per source file, so the CLI, its
// engine hosts, worker threads and load workers start without transpiling TypeScript (and
// without a transpiler cache in a shared temporary directory). Type checking is `npm run
// typecheck`; this step only strips types, which esbuild does in about a second.
//
// Relative imports keep their shape with `.ts` rewritten to `.js`, and packages stay imports,
// so dist/ mirrors the tree: dist/src/cli.js, dist/participants/hnswlib/adapter.js. Files the
// code reads beside its sources (settings.json, native addons) are read from the sources, never
// copied (src/util/code-paths.ts maps a built module back to its source directory).
//
// dist/.build.json records every compiled source with its modification time; the CLI refuses to
// run a build older than its sources (one line naming the file and `npm run build`).
import { readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outDir = path.join(root, 'dist');
/** The compiled trees; test/ and bench/ run through tsx and are not built. */
const TREES = ['src', 'participants'];
/** Directories inside those trees that hold no sources (native builds). */
const SKIP = new Set(['node_modules', 'build']);

function sources(dir, acc = []) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (!SKIP.has(e.name)) sources(p, acc);
    } else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) acc.push(p);
  }
  return acc;
}

/** Each relative import stays a separate module: `./x.ts` becomes `./x.js`. */
const keepRelativeImports = {
  name: 'keep-relative-imports',
  setup(b) {
    b.onResolve({ filter: /^\.\.?\// }, (args) => {
      if (args.kind === 'entry-point') return undefined;
      return { path: args.path.replace(/\.ts$/, '.js'), external: true };
    });
  },
};

const started = Date.now();
const files = TREES.flatMap((t) => sources(path.join(root, t))).sort();
// A fresh directory beside dist/, renamed over it at the end: a build that fails half-way
// leaves the previous build whole, and a removed source leaves no stale module behind.
const staging = `${outDir}.tmp-${process.pid}`;
rmSync(staging, { recursive: true, force: true });
try {
  await build({
    entryPoints: files,
    outdir: staging,
    outbase: root,
    bundle: true,
    packages: 'external',
    plugins: [keepRelativeImports],
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: 'linked',
    logLevel: 'error',
  });
  const record = { built_at: new Date().toISOString(), sources: Object.fromEntries(files.map((f) => [path.relative(root, f), statSync(f).mtimeMs])) };
  writeFileSync(path.join(staging, '.build.json'), `${JSON.stringify(record, null, 1)}\n`);
  rmSync(outDir, { recursive: true, force: true });
  renameSync(staging, outDir);
} catch (e) {
  rmSync(staging, { recursive: true, force: true });
  process.stderr.write(`build: ${e instanceof Error ? e.message.split('\n')[0] : e}\n`);
  process.exit(1);
}
if (process.env.VECBENCH_QUIET !== '1')
  process.stdout.write(`build: ${files.length} files compiled to dist/ in ${((Date.now() - started) / 1000).toFixed(1)}s\n`);
