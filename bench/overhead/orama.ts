// orama: its participant (@orama/orama in the host's own thread) through the host, against
// bench/native/orama_loop.ts, a plain Node loop over the same package loading the database file
// the participant saved after its build (the same documents, internal ids and vectors), and the
// participant's adapter in that loop's process (the adapter's own path, the process held equal). Orama's
// vector search is an exact scan with no knob: both sides repeat the same point at every value.
import { cpSync } from 'node:fs';
import path from 'node:path';
import { loadParticipant } from '../../src/runner/participants.ts';
import type { OverheadEngine } from './kit.ts';

const orama: OverheadEngine = {
  async setup(ctx) {
    const { ds, nq, k, tmp } = ctx;
    if (ds.metric === 'l2') ctx.fail(`orama ranks by cosine only and ${ds.name} is l2: leave orama out of --engines or pick an ip or cosine --dataset`);
    const idx = (await loadParticipant('orama')).index as { similarity: number; stemming: boolean };
    console.log(`orama: mode vector, similarity ${idx.similarity}, limit ${k}`);
    const side = await ctx.hostSide('orama', 'orama', { knob: null });
    // The participant's adapter also runs in the loop's process, on a copy of the same file.
    const copy = path.join(tmp, 'orama-in-loop');
    cpSync(side.workDir, copy, { recursive: true });
    const adapter = { side: 'orama-in-loop', participant: 'orama', workDir: copy, knob: null };
    await ctx.loopSide(
      'orama-node',
      process.execPath,
      [
        '--import',
        import.meta.resolve('tsx'),
        path.join(ctx.native, 'orama_loop.ts'),
        // The file the adapter's buildIndex saves (participants/orama/adapter.ts, SAVED_FILE).
        path.join(side.workDir, 'orama.db.bin'),
        tmp,
        String(nq),
        String(ds.d),
        String(k),
        String(idx.similarity),
        String(idx.stemming),
      ],
      adapter,
    );
    // The same participant reopened from that file in a fresh host: what a search costs through
    // vecbench when the process did not build the index.
    await ctx.hostSide('orama-reopened', 'orama', { knob: null, reopen: side.workDir });
    return [
      ['orama', 'orama-node'],
      ['orama-reopened', 'orama-node'],
      ['orama-in-loop', 'orama-node'],
    ];
  },
};
export default orama;
