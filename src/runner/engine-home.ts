// Where a participant's engine keeps its data between runs, so that a resumed run can reopen
// the built index instead of loading it again (issue 7; docs/runs.md, "Resume and index
// reuse"). <out>/.engines/<dataset>/<participant>/ holds `work/` (the engine's work directory,
// the server's data directory under it, or a link to it: src/runner/server-data.ts) and
// `built.json`, a marker written atomically only after the load finished, naming what was
// built: the dataset's hash, the settings' hash, the engine version, and the ids the engine gave
// a few check queries. A resumed run reopens the index only when the marker matches and the
// reopened engine gives the same ids.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, rmdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { ATTRIBUTES } from '../contracts.ts';
import { writeJsonAtomic } from '../util/atomic.ts';
import { sha256 } from '../util/hash.ts';
import type { PointReply } from './point-reply.ts';
import { removeServerData } from './server-data.ts';

const ENGINES_DIR = '.engines';
const MARKER_FILE = 'built.json';
const MARKER_FORMAT = 'vecbench-engine/1';

export const markerSchema = z.object({
  format: z.literal(MARKER_FORMAT),
  participant: z.string(),
  dataset: z.string(),
  dataset_hash: z.string(),
  settings_hash: z.string(),
  engine_version: z.string(),
  /** When the load that built it finished. */
  built: z.string(),
  rows: z.number().int(),
  /** Unfiltered queries asked right after the load, and the ids the engine gave each. */
  check: z.object({
    knobs: z.record(z.string(), z.union([z.number(), z.string()])),
    k: z.number().int(),
    queries: z.array(z.number().int()),
    ids: z.array(z.array(z.number())),
  }),
});
export type BuiltMarker = z.infer<typeof markerSchema>;

/** What the marker must say for the index to be reused. */
interface WantedBuild {
  participant: string;
  datasetHash: string;
  settingsHash: string;
}

/** <out>/.engines/<dataset>/<participant>/ */
export function engineHome(outDir: string, dataset: string, participant: string): string {
  return join(outDir, ENGINES_DIR, dataset, participant);
}

export function engineWorkDir(home: string): string {
  return join(home, 'work');
}

/** JSON with object keys sorted, so equal settings hash alike whatever their key order. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

/** The settings that shape a built index: the index settings and the ingest batch size (an
 * engine that adds a batch in parallel builds a different graph from other batches). Search
 * ladders are not part of it. */
export function buildSettingsHash(index: unknown, batchSize: number): string {
  // The attribute columns ingested are part of what was built: an index from before a new
  // attribute has no column to filter it on.
  return sha256(canonical({ index, batch_size: batchSize, attributes: ATTRIBUTES }));
}

/** The marker, or why there is none usable. */
export function readMarker(home: string): BuiltMarker | string {
  const path = join(home, MARKER_FILE);
  if (!existsSync(path)) return `no finished build in ${home}`;
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    return `${path} is unreadable (${(e as Error).message})`;
  }
  const parsed = markerSchema.safeParse(raw);
  return parsed.success ? parsed.data : `${path} is not a ${MARKER_FORMAT} marker`;
}

/** Why the marker's build is not the one wanted, or null when it is. */
export function markerMismatch(marker: BuiltMarker, want: WantedBuild): string | null {
  if (marker.participant !== want.participant) return `it was built for participant ${marker.participant}`;
  if (marker.dataset_hash !== want.datasetHash) return 'it was built from other data (dataset hash differs)';
  if (marker.settings_hash !== want.settingsHash) return 'it was built with other settings (settings hash differs)';
  return null;
}

/** Empties the home for a new load: the marker goes first, so a load cut short is never
 * taken for a finished one. Returns the (empty) work directory. */
export function startFreshBuild(home: string): string {
  rmSync(join(home, MARKER_FILE), { force: true });
  const work = engineWorkDir(home);
  // A server's data relocated outside the home (src/runner/server-data.ts) goes with it.
  removeServerData(work);
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  return work;
}

export function writeMarker(home: string, marker: BuiltMarker): void {
  writeJsonAtomic(join(home, MARKER_FILE), marker);
}

/** Removes a participant's home (finished work does not need it), and the dataset's and the
 * engines' directories above it once they are empty. */
export function discardHome(home: string): void {
  removeServerData(engineWorkDir(home));
  rmSync(home, { recursive: true, force: true });
  rmdirUpward(dirname(home), 2);
}

/** Where live churn's engines keep their data while a runbook runs: beside the run's work
 * directory in the participant's home, one directory per runbook's engine (its server's data
 * under it), so every engine vecbench starts keeps its data in one layout under --out. */
export function churnWorkRoot(home: string): string {
  return join(home, 'churn');
}

/** Removes churn's engine data in a home (a runbook's engine that finished, or one a killed run
 * left), and the home and the directories above it once they are empty. */
export function discardChurnWork(home: string, entry?: string): void {
  const root = churnWorkRoot(home);
  const dirs = entry !== undefined ? [entry] : existsSync(root) ? readdirSync(root) : [];
  for (const d of dirs) {
    removeServerData(join(root, d));
    rmSync(join(root, d), { recursive: true, force: true });
  }
  rmdirUpward(root, 4);
}

/** Removes `dir` and the directories above it, `levels` in all, while each is empty. */
function rmdirUpward(from: string, levels: number): void {
  for (let dir = from, i = 0; i < levels; dir = dirname(dir), i++) {
    try {
      rmdirSync(dir);
    } catch {
      return; // not empty (another participant's data), or already gone
    }
  }
}

/** The ids of each query of a point reply. */
export function idsPerQuery(reply: PointReply): number[][] {
  const out: number[][] = [];
  for (let i = 0; i + 1 < reply.offsets.length; i++) out.push(Array.from(reply.ids.subarray(reply.offsets[i], reply.offsets[i + 1])));
  return out;
}

/** Why the reopened engine's answers differ from those recorded after the build, or null.
 * Each query's ids are compared as a set (equal distances may come in either order). */
export function checkDiffers(expected: number[][], got: number[][]): string | null {
  if (expected.length !== got.length) return `${got.length} check answers, ${expected.length} recorded`;
  let differ = 0;
  let first = -1;
  for (let i = 0; i < expected.length; i++) {
    const a = [...expected[i]].sort((x, y) => x - y);
    const b = [...got[i]].sort((x, y) => x - y);
    if (a.length !== b.length || a.some((v, j) => v !== b[j])) {
      differ++;
      if (first < 0) first = i;
    }
  }
  if (differ === 0) return null;
  return `the reopened engine answers ${differ} of ${expected.length} check queries differently from the built one (first: query ${first}, ${got[first].length} ids, ${expected[first].length} recorded)`;
}

/** A reopened engine that is not the build its marker names (the run loads it again). */
export class ReuseRefused extends Error {}
