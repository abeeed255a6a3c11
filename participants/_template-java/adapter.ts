// TEMPLATE PARTICIPANT IN JAVA: copy this directory to participants/<name>/ for an engine that is
// a Java library. The registry skips directories whose name starts with `_`; the contract suite
// tests this one by its path, so it always works as shipped.
//
// This file declares what the harness must know before the host starts (the settings schema,
// which filters the engine takes, how the JVM starts); the engine is driven by TemplateHost.java
// over the participant protocol (docs/protocol.md, "The participant protocol") through the SDK's
// Java reference host (src/sdk/java/VecbenchHost.java). provision.sh compiles both.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import * as sdk from '../../src/sdk/index.ts';

// REPLACE: the directory name, also in provision.sh.
const NAME = '_template-java';
// REPLACE: the host's class, as provision.sh's MAIN.
const MAIN = 'TemplateHost';
// REPLACE: the engine's jar files, as provision.sh's JARS names them (none for the toy).
const JARS: readonly string[] = [];

// REPLACE: the engine's index parameters as settings.json's `index` holds them
// (sdk.settingsObject: an unknown key is an error naming it).
const settingsSchema = sdk.settingsObject({
  /** How many lists (centroids) build makes. */
  lists: sdk.intSetting(1, 65_536, 16),
});

const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

/** The classpath of the jars and the compiled host (provision.sh installs them); SetupNeeded when
 * they are missing or the host was compiled from other sources than these. */
function classpath(): string {
  const dir = join(process.env.VECBENCH_CACHE ?? '/var/cache/vecbench', 'java', NAME);
  const classes = join(dir, 'classes');
  const stamp = join(dir, '.vecbench-stamp');
  const provision = `participants/${NAME}/provision.sh`;
  const jars = JARS.map((j) => join(dir, j));
  if (!existsSync(join(classes, `${MAIN}.class`)) || !existsSync(stamp) || jars.some((j) => !existsSync(j)))
    throw new sdk.SetupNeeded(`the Java host of ${NAME} is not installed (${dir}; ${provision} makes it)`);
  const recorded = readFileSync(stamp, 'utf8');
  for (const src of [sdk.besideSource(import.meta.url, '../../src/sdk/java/VecbenchHost.java'), sdk.besideSource(import.meta.url, `${MAIN}.java`)]) {
    const file = src.slice(src.lastIndexOf('/') + 1);
    if (!recorded.includes(`${file} ${sha256(src)}`))
      throw new sdk.SetupNeeded(`the Java host of ${NAME} in ${classes} was compiled from another ${file} (${provision} compiles it again)`);
  }
  return [...jars, classes].join(delimiter);
}

export default sdk.foreignParticipant({
  name: NAME,
  engine: 'template (Java inverted file)', // REPLACE
  settingsSchema,
  // REPLACE: the knobs the host applies; the harness checks them first.
  knobs: (settings) => ({ probes: sdk.intKnob(1, settings.lists, 'index.lists') }),
  filters: sdk.EVERY_FILTER,
  filterStrategy: 'a test of each row of the probed lists (exact within them)', // REPLACE
  reopen: true,
  // No `concurrency`: one JVM answers overlapping searches on its pool of max_concurrency threads
  // (VecbenchHost.java), so search() in the host must be thread-safe.
  host: () => ({
    command: process.env.JAVA_HOME ? join(process.env.JAVA_HOME, 'bin', 'java') : 'java',
    // REPLACE: JVM options (a heap size, a collector) go before -cp. The host's stdout is the
    // protocol's (System.out goes to stderr).
    args: ['-cp', classpath(), MAIN],
  }),
});
