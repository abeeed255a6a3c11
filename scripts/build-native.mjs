// postinstall: builds every native addon with node-gyp, each in its own directory's build/:
//   native/                   the exact ground truth on OpenBLAS (native/build/Release/topk.node)
//   participants/*/native/    a participant's own binding (e.g. participants/faiss/native)
// (every such directory holding a binding.gyp). It never fails the install: when a library is
// missing or a build breaks it prints one line for that addon and goes on, and exits 0. Without
// topk.node src/groundtruth/exact.ts uses its portable TypeScript fallback; without its addon
// a participant reports itself unavailable when opened, naming `npm run setup`.
// VECBENCH_SKIP_NATIVE=1 skips every build. Arguments, when given, name the directories to
// build (e.g. `node scripts/build-native.mjs participants/faiss/native`); default: all.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const verbose = process.env.VECBENCH_NATIVE_VERBOSE === '1';

/** What a missing addon means, for the one line printed when it is not built. */
function fallbackOf(rel) {
  if (rel === 'native') return 'using the portable fallback';
  const name = rel.split('/')[1];
  return `participant ${name} reports itself unavailable; run \`sudo npm run setup\`, then \`node scripts/build-native.mjs ${rel}\``;
}

/** Directories that may hold OpenBLAS's cblas.h, most specific first. */
function headerCandidates() {
  const triplets = new Set();
  const gcc = spawnSync('gcc', ['-dumpmachine'], { encoding: 'utf8' });
  if (gcc.status === 0 && gcc.stdout.trim()) triplets.add(gcc.stdout.trim());
  try {
    for (const e of readdirSync('/usr/include')) if (/-linux-gnu/.test(e)) triplets.add(e);
  } catch {
    /* no /usr/include */
  }
  const dirs = [];
  for (const t of triplets) {
    for (const v of ['openblas-pthread', 'openblas-openmp', 'openblas-serial', 'openblas64-pthread']) {
      dirs.push(`/usr/include/${t}/${v}`);
    }
  }
  dirs.push('/usr/include/openblas', '/usr/local/include/openblas', '/opt/homebrew/opt/openblas/include');
  for (const t of triplets) dirs.push(`/usr/include/${t}`);
  dirs.push('/usr/include', '/usr/local/include');
  return dirs;
}

function findOpenblasInclude() {
  for (const dir of headerCandidates()) {
    if (existsSync(path.join(dir, 'cblas.h')) && existsSync(path.join(dir, 'openblas_config.h'))) return dir;
  }
  return null;
}

/** [command, leading args] that runs node-gyp. */
function findNodeGyp() {
  const fromNpm = process.env.npm_config_node_gyp;
  if (fromNpm && existsSync(fromNpm)) {
    return /\.(c|m)?js$/.test(fromNpm) ? [process.execPath, [fromNpm]] : [fromNpm, []];
  }
  const bin = path.dirname(process.execPath);
  const npmDirs = [
    path.join(bin, '..', 'lib', 'node_modules', 'npm'), // unix prefix layout
    path.join(bin, 'node_modules', 'npm'), // windows layout
  ];
  for (const npmDir of npmDirs) {
    const js = path.join(npmDir, 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
    if (existsSync(js)) return [process.execPath, [js]];
  }
  return [process.platform === 'win32' ? 'npx.cmd' : 'npx', ['--yes', 'node-gyp']];
}

function run(dir, cmd, args) {
  const r = spawnSync(cmd, args, { cwd: dir, encoding: 'utf8', stdio: verbose ? 'inherit' : 'pipe' });
  if (r.error) return `${cmd}: ${r.error.message}`;
  if (r.status !== 0) {
    const lines = `${r.stdout ?? ''}\n${r.stderr ?? ''}`.split('\n').map((l) => l.trim());
    const err = lines.find((l) => /error/i.test(l) && !/^gyp (ERR|info)/.test(l)) ?? lines.filter(Boolean).pop() ?? '';
    return `node-gyp exited with ${r.status}: ${err.slice(0, 200)}`;
  }
  return null;
}

/** Every directory (relative to the root) with a binding.gyp: native/, then participants/*\/native/. */
function addonDirs() {
  const dirs = [];
  if (existsSync(path.join(root, 'native', 'binding.gyp'))) dirs.push('native');
  const parts = path.join(root, 'participants');
  for (const p of existsSync(parts) ? readdirSync(parts).sort() : []) {
    if (existsSync(path.join(parts, p, 'native', 'binding.gyp'))) dirs.push(`participants/${p}/native`);
  }
  return dirs;
}

/** The target names a binding.gyp declares (its addons are build/Release/<name>.node). */
function targetsOf(dir) {
  const gyp = readFileSync(path.join(dir, 'binding.gyp'), 'utf8');
  return [...gyp.matchAll(/["']target_name["']\s*:\s*["']([^"']+)["']/g)].map((m) => m[1]);
}

/** Builds one addon directory; returns the line to print. */
function build(rel, nodeGyp, nodedir, include) {
  const dir = path.join(root, rel);
  const addons = targetsOf(dir).map((t) => path.join(dir, 'build', 'Release', `${t}.node`));
  for (const a of addons) rmSync(a, { force: true }); // never leave a stale addon behind a failed build
  const notBuilt = (reason) => `vecbench: ${rel === 'native' ? 'native ground truth' : rel} not built (${reason}); ${fallbackOf(rel)}`;
  const defines = [];
  if (rel === 'native') {
    if (process.platform !== 'linux') return notBuilt(`no OpenBLAS build recipe for ${process.platform}`);
    if (!include) return notBuilt('libopenblas-dev missing: apt-get install libopenblas-dev');
    defines.push(`-Dopenblas_include=${include}`);
  }
  const [cmd, lead] = nodeGyp;
  const failure =
    run(dir, cmd, [...lead, 'configure', ...nodedir, ...(defines.length ? ['--', ...defines] : [])]) ??
    run(dir, cmd, [...lead, 'build', ...nodedir, '--jobs=2']);
  if (failure) return notBuilt(`build failed, ${failure}`);
  // The addon must also load (its shared libraries present at run time).
  for (const a of addons) {
    const check = spawnSync(process.execPath, ['-e', `require(${JSON.stringify(a)})`], { encoding: 'utf8' });
    if (check.status !== 0) {
      const why = (check.stderr ?? '').split('\n').find((l) => /Error/.test(l)) ?? 'load error';
      for (const b of addons) rmSync(b, { force: true });
      return notBuilt(`built but does not load: ${why.trim().slice(0, 200)}`);
    }
  }
  const what =
    rel === 'native'
      ? `native ground truth built (${addons.map((a) => path.relative(root, a)).join(', ')}, OpenBLAS headers ${include})`
      : `${addons.map((a) => path.relative(root, a)).join(', ')} built`;
  return `vecbench: ${what}`;
}

const all = addonDirs();
const asked = process.argv.slice(2).map((a) => path.relative(root, path.resolve(a)).split(path.sep).join('/'));
for (const a of asked) {
  if (!all.includes(a)) {
    console.log(`vecbench: ${a} holds no binding.gyp; the addon directories are ${all.join(', ')}`);
    process.exit(0);
  }
}
const dirs = asked.length ? asked : all;
if (process.env.VECBENCH_SKIP_NATIVE === '1') {
  for (const rel of dirs) console.log(`vecbench: ${rel === 'native' ? 'native ground truth' : rel} not built (VECBENCH_SKIP_NATIVE=1); ${fallbackOf(rel)}`);
  process.exit(0);
}

const nodeGyp = findNodeGyp();
// Use the headers installed next to this node binary when present, so no download is needed.
const prefix = path.resolve(path.dirname(process.execPath), '..');
const nodedir =
  !process.env.npm_config_nodedir &&
  existsSync(path.join(prefix, 'include', 'node', 'node_api.h')) &&
  existsSync(path.join(prefix, 'include', 'node', 'common.gypi'))
    ? [`--nodedir=${prefix}`]
    : [];
const include = dirs.includes('native') ? findOpenblasInclude() : null;
for (const rel of dirs) console.log(build(rel, nodeGyp, nodedir, include));
