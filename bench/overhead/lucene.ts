// Lucene, in Java: its participant through its Java host, against bench/native/LuceneLoop.java,
// a plain Java loop compiled against the jar the participant's provision installed, on a copy
// of the index the participant built; and the participant's own engine class in that loop's JVM,
// timed query by query in turn with the plain search (its host's path, the JVM held equal).
import { cpSync, existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { jvmOptions } from '../../participants/lucene/adapter.ts';
import { compile, type OverheadEngine } from './kit.ts';

const lucene: OverheadEngine = {
  async setup(ctx) {
    const { ds, nq, k, tmp } = ctx;
    const dir = path.join(ctx.cache, 'java', 'lucene');
    // The one lucene-core jar the provision pinned (its version is the participant's).
    const jarName = existsSync(dir) ? readdirSync(dir).find((f) => /^lucene-core-[\d.]+\.jar$/.test(f)) : undefined;
    const jar = path.join(dir, jarName ?? 'lucene-core.jar');
    if (jarName === undefined) ctx.fail(`Lucene's jar is missing (${jar}); participants/lucene/provision.sh (run by \`sudo npm run setup\`) installs it`);
    const side = await ctx.hostSide('lucene', 'lucene', { knob: 'candidates', cpu: 'none' });
    const copy = path.join(tmp, 'lucene-index');
    cpSync(path.join(side.workDir, 'lucene'), copy, { recursive: true, filter: (f) => path.basename(f) !== 'write.lock' });
    const classes = path.join(tmp, 'lucene-loop');
    // The participant's host classes (compiled by its provision) beside the loop's: the loop
    // also opens the participant's own engine class, on another copy, as the side lucene-in-loop.
    const hostClasses = path.join(dir, 'classes');
    await compile('the Lucene loop (javac from the JDK setup installs)', 'javac', [
      '-cp',
      `${jar}:${hostClasses}`,
      '-d',
      classes,
      path.join(ctx.native, 'LuceneLoop.java'),
    ]);
    const inLoop = path.join(tmp, 'lucene-in-loop');
    cpSync(path.join(side.workDir, 'lucene'), path.join(inLoop, 'lucene'), { recursive: true, filter: (f) => path.basename(f) !== 'write.lock' });
    const adapter = { side: 'lucene-in-loop', participant: 'lucene', workDir: inLoop, knob: 'candidates' };
    // The JVM options the participant's host runs under (its heap, its collector).
    await ctx.loopSide(
      'lucene-java',
      'java',
      [...jvmOptions(), '-cp', `${jar}:${hostClasses}:${classes}`, 'LuceneLoop', copy, tmp, String(nq), String(ds.d), String(k)],
      adapter,
    );
    // The same participant reopened in a fresh host on another copy: its JVM has searched and
    // never built, as the loop's.
    const reopened = path.join(tmp, 'lucene-reopened');
    cpSync(path.join(side.workDir, 'lucene'), path.join(reopened, 'lucene'), { recursive: true, filter: (f) => path.basename(f) !== 'write.lock' });
    await ctx.hostSide('lucene-reopened', 'lucene', { knob: 'candidates', cpu: 'none', reopen: reopened });
    return [
      ['lucene', 'lucene-java'],
      ['lucene-reopened', 'lucene-java'],
      ['lucene-in-loop', 'lucene-java'],
    ];
  },
};
export default lucene;
