// sqlite-vec: its participant (vec0 in better-sqlite3's bundled SQLite; an exact scan with no
// knob) through the host, against bench/native/sqlite_vec_loop.py, the adapter's k-NN statement
// from Python's sqlite3 over Debian's libsqlite3 with the very vec0.so the participant loads,
// on a copy of the database file the participant wrote. The extension is the same binary; the
// SQLite library around it is not (both versions are printed).
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { getLoadablePath } from 'sqlite-vec';
import { loadParticipant } from '../../src/runner/participants.ts';
import type { OverheadEngine } from './kit.ts';

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
    return [['sqlite-vec', 'sqlite-vec-py']];
  },
};
export default sqliteVec;
