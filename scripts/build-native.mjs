// postinstall: build native/build/Release/topk.node (exact top-k on OpenBLAS) with node-gyp.
// It never fails the install: when OpenBLAS is missing or the build breaks it prints one line and
// exits 0, and src/groundtruth/exact.ts uses its portable TypeScript fallback.
// VECBENCH_SKIP_NATIVE=1 skips the build.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const nativeDir = path.join(root, 'native');
const addon = path.join(nativeDir, 'build', 'Release', 'topk.node');
const verbose = process.env.VECBENCH_NATIVE_VERBOSE === '1';

function giveUp(reason) {
  console.log(`vecbench: native ground truth not built (${reason}); using the portable fallback`);
  process.exit(0);
}

/** Directories that may hold OpenBLAS's cblas.h, most specific first. */
function headerCandidates() {
  const triplets = new Set();
  const gcc = spawnSync('gcc', ['-dumpmachine'], { encoding: 'utf8' });
  if (gcc.status === 0 && gcc.stdout.trim()) triplets.add(gcc.stdout.trim());
  try {
    for (const e of readdirSync('/usr/include')) if (/-linux-gnu/.test(e)) triplets.add(e);
  } catch { /* no /usr/include */ }
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

function run(cmd, args) {
  const r = spawnSync(cmd, args, { cwd: nativeDir, encoding: 'utf8', stdio: verbose ? 'inherit' : 'pipe' });
  if (r.error) return `${cmd}: ${r.error.message}`;
  if (r.status !== 0) {
    const lines = `${r.stdout ?? ''}\n${r.stderr ?? ''}`.split('\n').map((l) => l.trim());
    const err = lines.find((l) => /error/i.test(l) && !/^gyp (ERR|info)/.test(l)) ?? lines.filter(Boolean).pop() ?? '';
    return `node-gyp exited with ${r.status}: ${err.slice(0, 200)}`;
  }
  return null;
}

if (process.env.VECBENCH_SKIP_NATIVE === '1') giveUp('VECBENCH_SKIP_NATIVE=1');
if (process.platform !== 'linux') giveUp(`no OpenBLAS build recipe for ${process.platform}`);
const include = findOpenblasInclude();
if (!include) giveUp('libopenblas-dev missing: apt-get install libopenblas-dev');

const [cmd, lead] = findNodeGyp();
// Use the headers installed next to this node binary when present, so no download is needed.
const prefix = path.resolve(path.dirname(process.execPath), '..');
const nodedir =
  !process.env.npm_config_nodedir && existsSync(path.join(prefix, 'include', 'node', 'node_api.h')) &&
  existsSync(path.join(prefix, 'include', 'node', 'common.gypi'))
    ? [`--nodedir=${prefix}`]
    : [];
rmSync(addon, { force: true }); // never leave a stale addon behind a failed build
const failure =
  run(cmd, [...lead, 'configure', ...nodedir, '--', `-Dopenblas_include=${include}`]) ??
  run(cmd, [...lead, 'build', ...nodedir, `--jobs=2`]);
if (failure) giveUp(`build failed, ${failure}`);

// The addon must also load (libopenblas.so.0 present at run time).
const check = spawnSync(process.execPath, ['-e', `require(${JSON.stringify(addon)})`], { encoding: 'utf8' });
if (check.status !== 0) {
  const why = (check.stderr ?? '').split('\n').find((l) => /Error/.test(l)) ?? 'load error';
  giveUp(`built but does not load: ${why.trim().slice(0, 200)}`);
}
console.log(`vecbench: native ground truth built (${path.relative(root, addon)}, OpenBLAS headers ${include})`);
