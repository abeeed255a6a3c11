// sqlite-vec: its participant (vec0 in better-sqlite3's bundled SQLite; an exact scan with no
// knob) through the host, against two loops stepping the adapter's k-NN statement with the very
// vec0.so the participant loads, each on a copy of the database file the participant wrote:
// bench/native/sqlite_vec_loop.cc, C++ over the SQLite better-sqlite3 bundles (its amalgamation
// and compile-time options, compiled here), so the pair differs by vecbench's path alone; and
// bench/native/sqlite_vec_loop.py, Python's sqlite3 over Debian's libsqlite3, which shows what
// the other SQLite does (both versions are printed).
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { getLoadablePath } from 'sqlite-vec';
import { loadParticipant } from '../../src/runner/participants.ts';
import { compile, type OverheadEngine } from './kit.ts';

/** better-sqlite3's SQLite: its amalgamation and the options its build defines (deps/defines.gypi). */
function bundledSqlite(): { dir: string; defines: string[] } {
  const dir = path.join(path.dirname(createRequire(import.meta.url).resolve('better-sqlite3/package.json')), 'deps');
  const gypi = readFileSync(path.join(dir, 'defines.gypi'), 'utf8');
  const defines = [...gypi.matchAll(/'([A-Z][A-Z0-9_]*(?:=[^']*)?)'/g)].map((m) => m[1]);
  return { dir: path.join(dir, 'sqlite3'), defines };
}

const sqliteVec: OverheadEngine = {
  async setup(ctx) {
    const { ds, nq, k, tmp } = ctx;
    const participant = await loadParticipant('sqlite-vec');
    const cacheMib = (participant.index as { cache_mib: number }).cache_mib;
    const vec0 = getLoadablePath();
    const python = process.env.VECBENCH_PYTHON ?? (existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3');
    // The loop needs an sqlite3 module built with extension loading (Debian's is).
    const probe = spawnSync(
      python,
      [
        '-c',
        'import sqlite3,sys; db=sqlite3.connect(":memory:"); db.enable_load_extension(True); db.load_extension(sys.argv[1]); print(*db.execute("SELECT sqlite_version(), vec_version()").fetchone())',
        vec0,
      ],
      { encoding: 'utf8' },
    );
    if (probe.status !== 0)
      ctx.fail(
        `${python}'s sqlite3 cannot load ${vec0} (${(probe.stderr || String(probe.error)).trim().split('\n').pop()}); use Debian's python3 (\`sudo npm run setup\`) or set VECBENCH_PYTHON to one whose sqlite3 loads extensions`,
      );
    const [pySqlite, pyVec] = probe.stdout.trim().split(' ');
    console.log(`sqlite-vec: host ${await participant.adapter.engineVersion()}; loop vec_version ${pyVec}, SQLite ${pySqlite} (${python}'s sqlite3); ${vec0}`);
    const side = await ctx.hostSide('sqlite-vec', 'sqlite-vec', { knob: null });
    const copy = path.join(tmp, 'sqlite-vec.db');
    copyFileSync(path.join(side.workDir, 'sqlite-vec.db'), copy);
    await ctx.loopSide('sqlite-vec-py', python, [
      path.join(ctx.native, 'sqlite_vec_loop.py'),
      vec0,
      copy,
      String(cacheMib),
      tmp,
      String(nq),
      String(ds.d),
      String(k),
    ]);
    // The same SQLite as the participant's: better-sqlite3's amalgamation and options, compiled
    // with the flags node-gyp gives better-sqlite3's own build of it (its frame pointers too),
    // so the pair differs by the path alone, not by how the same C was compiled.
    const sqlite = bundledSqlite();
    const object = path.join(tmp, 'sqlite3.o');
    const what = "the sqlite-vec C++ loop (gcc and g++ from Debian's build-essential, and better-sqlite3's amalgamation from npm ci)";
    const gypFlags = ['-fPIC', '-pthread', '-m64', '-O3', '-fno-omit-frame-pointer'];
    await compile(what, 'gcc', [...gypFlags, '-std=c99', '-c', ...sqlite.defines.map((x) => `-D${x}`), path.join(sqlite.dir, 'sqlite3.c'), '-o', object]);
    const loop = path.join(tmp, 'sqlite_vec_loop');
    await compile(what, 'g++', [
      ...gypFlags,
      '-std=gnu++17',
      '-I',
      ctx.native,
      '-I',
      sqlite.dir,
      path.join(ctx.native, 'sqlite_vec_loop.cc'),
      object,
      '-o',
      loop,
      '-ldl',
      '-lpthread',
      '-lm',
    ]);
    const copyC = path.join(tmp, 'sqlite-vec-cpp.db');
    copyFileSync(path.join(side.workDir, 'sqlite-vec.db'), copyC);
    await ctx.loopSide('sqlite-vec-cpp', loop, [vec0, copyC, String(cacheMib), tmp, String(nq), String(ds.d), String(k)]);
    return [
      ['sqlite-vec', 'sqlite-vec-cpp'],
      ['sqlite-vec', 'sqlite-vec-py'],
    ];
  },
};
export default sqliteVec;
