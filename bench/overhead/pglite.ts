// pglite: the pgvector-pglite participant (PGlite, PostgreSQL in WASM with pgvector's HNSW index)
// through the host, against bench/native/pglite_loop.ts, a plain Node loop over the same PGlite
// and pgvector packages on a copy of the data directory the participant built (the same table
// and graph), running the adapter's unfiltered statement with the same hnsw.ef_search; and the
// participant's adapter in that loop's process, on a copy of its own (its path, the process held equal).
import { cpSync } from 'node:fs';
import path from 'node:path';
import { searchStatement } from '../../participants/_shared/postgres-sql.ts';
import { loadParticipant } from '../../src/runner/participants.ts';
import type { OverheadEngine } from './kit.ts';

const pglite: OverheadEngine = {
  async setup(ctx) {
    const { ds, nq, k, tmp } = ctx;
    const idx = (await loadParticipant('pgvector-pglite')).index as { storage: string; m: number; ef_construction: number };
    if (idx.storage !== 'disk')
      ctx.fail(
        'pgvector-pglite keeps its data in memory (index.storage "memory"): the loop needs its data directory; set index.storage to "disk" in its settings.json',
      );
    // The text the adapter parses for an unfiltered k-NN when only ef_search is set (fetch k, no re-sort).
    const sql = searchStatement(ds.metric, k, null, { fetch: k }).text;
    console.log(`pglite: m=${idx.m} ef_construction=${idx.ef_construction}; ${sql}`);
    const side = await ctx.hostSide('pglite', 'pgvector-pglite', { knob: 'ef_search' });
    // A second PGlite cannot share the live directory; a copy after the build's CHECKPOINT opens
    // as the adapter's own thread copies do (participants/pgvector-pglite/README.md, "Threads").
    const copy = path.join(tmp, 'pglite-loop-pgdata');
    cpSync(path.join(side.workDir, 'pgdata'), copy, { recursive: true });
    // The participant's adapter also runs in the loop's process, on a copy of its own.
    const inLoop = path.join(tmp, 'pglite-in-loop');
    cpSync(path.join(side.workDir, 'pgdata'), path.join(inLoop, 'pgdata'), { recursive: true });
    const adapter = { side: 'pglite-in-loop', participant: 'pgvector-pglite', workDir: inLoop, knob: 'ef_search' };
    await ctx.loopSide(
      'pglite-node',
      process.execPath,
      ['--import', import.meta.resolve('tsx'), path.join(ctx.native, 'pglite_loop.ts'), copy, tmp, String(nq), String(ds.d), String(k), sql],
      adapter,
    );
    // The same participant reopened on another copy in a fresh host: what a search costs through
    // vecbench when the process did not build the index.
    const reopened = path.join(tmp, 'pglite-reopened');
    cpSync(path.join(side.workDir, 'pgdata'), path.join(reopened, 'pgdata'), { recursive: true });
    await ctx.hostSide('pglite-reopened', 'pgvector-pglite', { knob: 'ef_search', reopen: reopened });
    return [
      ['pglite', 'pglite-node'],
      ['pglite-reopened', 'pglite-node'],
      ['pglite-in-loop', 'pglite-node'],
    ];
  },
};
export default pglite;
