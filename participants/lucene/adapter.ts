// Apache Lucene (lucene-core 9.12.3): the HNSW vector search of Elasticsearch and OpenSearch, in
// a JVM. This file declares the settings and how to start the host; the engine calls are in
// LuceneHost.java, which speaks the participant protocol through the SDK's Java reference host
// (src/sdk/java/VecbenchHost.java; src/adapters/foreign.ts, docs/contracts.md "The participant
// protocol"). provision.sh downloads the jar and compiles both sources.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { z } from 'zod';
import * as sdk from '../../src/sdk/index.ts';

const PROVISION = 'participants/lucene/provision.sh';
const LUCENE_VERSION = '9.12.3';
/** Lucene's HNSW format takes 1024 dimensions; the host raises it to 4096, as Elasticsearch does. */
const MAX_DIMENSIONS = 4096;
/** The JVM's heap unless VECBENCH_LUCENE_HEAP says otherwise (vectors and the graph are
 * memory-mapped files, outside the heap; the heap holds the segment being built in RAM, up to
 * ram_buffer_mb, and the graph of a merge). */
const DEFAULT_HEAP = '1g';

const settingsSchema = sdk.settingsObject({
  /** HNSW graph degree (Lucene's maxConn, HNSW M). */
  max_conn: sdk.intSetting(2, 512, 16),
  /** Candidates while building (Lucene's beamWidth, HNSW ef_construction), as the other HNSW
   * participants' 200. */
  beam_width: sdk.intSetting(2, 3200, 200),
  /** forceMerge(1) at the end of the load: one segment, one graph. Without it each segment the
   * RAM buffer flushed (and the merges Lucene chose) is searched on its own. */
  merge_to_one_segment: z.boolean().default(true),
  /** IndexWriter's RAM buffer: a segment (its graph built in memory) is flushed when the
   * buffered documents take this much heap. */
  ram_buffer_mb: sdk.intSetting(16, 2000, 256),
});

function cacheDir(): string {
  return join(process.env.VECBENCH_CACHE ?? '/var/cache/vecbench', 'java', 'lucene');
}

const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

/** The classpath of the provisioned jar and compiled host; SetupNeeded when missing or built
 * from other sources than these. */
function classpath(): string {
  const dir = cacheDir();
  const jar = join(dir, `lucene-core-${LUCENE_VERSION}.jar`);
  const classes = join(dir, 'classes');
  const stamp = join(dir, '.vecbench-stamp');
  if (!existsSync(jar) || !existsSync(join(classes, 'LuceneHost.class')) || !existsSync(stamp))
    throw new sdk.SetupNeeded(`Lucene's jar and Java host are not installed (${dir}; ${PROVISION} makes them)`);
  const sources = [sdk.besideSource(import.meta.url, '../../src/sdk/java/VecbenchHost.java'), sdk.besideSource(import.meta.url, 'LuceneHost.java')];
  const recorded = readFileSync(stamp, 'utf8');
  for (const src of sources) {
    const name = src.slice(src.lastIndexOf('/') + 1);
    if (!recorded.includes(`${name} ${sha256(src)}`))
      throw new sdk.SetupNeeded(`the compiled Lucene host in ${classes} was built from another ${name} (${PROVISION} compiles it again)`);
  }
  return [jar, classes].join(delimiter);
}

function heap(): string {
  const h = process.env.VECBENCH_LUCENE_HEAP ?? DEFAULT_HEAP;
  if (!/^[1-9][0-9]*[kKmMgG]?$/.test(h)) throw new sdk.UserError(`VECBENCH_LUCENE_HEAP=${h} is not a JVM heap size (e.g. 1g, 4096m)`);
  return h;
}

/** The host's JVM options (bench:overhead runs its plain Java loop under the same): the heap, and
 * ParallelGC, so no concurrent collector threads compete with the search threads; the per-query
 * garbage dies young. */
export function jvmOptions(): string[] {
  return [`-Xmx${heap()}`, '-XX:+UseParallelGC'];
}

export default sdk.foreignParticipant({
  name: 'lucene',
  engine: 'Apache Lucene',
  settingsSchema,
  // KnnFloatVectorQuery's k (the graph search's candidate list); the host applies it.
  knobs: { candidates: sdk.intKnob(1, 100_000) },
  filters: sdk.EVERY_FILTER,
  filterStrategy:
    "Lucene's rule per segment: an exact scan of the filter's matches when they are no more than the candidates, else an HNSW walk checking the filter, which falls back to the exact scan when it visits more nodes than there are matches",
  reopen: true,
  checkDataset: (_settings, dataset) =>
    dataset.d > MAX_DIMENSIONS ? `Lucene's HNSW takes at most ${MAX_DIMENSIONS} dimensions here; ${dataset.name} has ${dataset.d}` : null,
  host: () => ({
    command: process.env.JAVA_HOME ? join(process.env.JAVA_HOME, 'bin', 'java') : 'java',
    // The host's stdout is the protocol's (System.out goes to stderr).
    args: [...jvmOptions(), '-cp', classpath(), 'LuceneHost'],
  }),
});
