// libSQL: its participant (npm libsql, libsql-js) through the host, against
// bench/native/libsql_loop.py, a plain loop over libSQL's Python package on a copy of the
// database file the participant built: the same table, DiskANN index and SQL, the beam width
// search_l written into the index's stored parameters on both sides.
import { cpSync, existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import type { OverheadEngine } from './kit.ts';

const DB_FILE = 'libsql.db';

const libsql: OverheadEngine = {
  async setup(ctx) {
    const { ds, nq, k, tmp } = ctx;
    const python = ctx.venvPython('bench-libsql', 'bench/native/provision.sh');
    const side = await ctx.hostSide('libsql', 'libsql', { knob: 'search_l' });
    // The file and its write-ahead log: the participant keeps the database open, and a knob
    // it stored may still be in the log.
    const copy = path.join(tmp, 'libsql-copy');
    mkdirSync(copy, { recursive: true });
    for (const f of [DB_FILE, `${DB_FILE}-wal`]) {
      const from = path.join(side.workDir, f);
      if (existsSync(from)) cpSync(from, path.join(copy, f));
    }
    await ctx.loopSide('libsql-py', python, [path.join(ctx.native, 'libsql_loop.py'), path.join(copy, DB_FILE), tmp, String(nq), String(ds.d), String(k)]);
    return [['libsql', 'libsql-py']];
  },
};
export default libsql;
