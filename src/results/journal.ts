// Incremental writes of a result file. Rewriting the whole file (with fsync) after every point
// costs O(points) per point, quadratic over a long ladder; instead each point (or skipped
// point) is appended as one JSON line to a journal beside the file,
// <out>/<dataset>/.<participant>.journal, fsynced, and the journal is folded into the atomic
// result file at group end and on resume. Folding is idempotent (a point already in the file
// is not added again) and ignores a torn last line, so a kill at any moment loses at most the
// point being appended.
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { writeAllDurable } from '../util/atomic.ts';
import { redactValue } from '../util/redact.ts';
import { diskFullError } from '../util/errors.ts';
import type { ResultFile, ResultGroup } from './schema.ts';
import { pointSchema, skippedSchema } from './schema.ts';
import { resultPath, writeResult } from './store.ts';

type Point = ResultGroup['points'][number];
type Skipped = ResultGroup['skipped'][number];
export type JournalEntry = { group: string; point: Point } | { group: string; skipped: Skipped };

export function journalPath(outDir: string, dataset: string, participant: string): string {
  return join(outDir, dataset, `.${participant}.journal`);
}

const pointKey = (p: Point) => `${p.ladder_index}/${p.view}/${p.build ?? 0}`;

/** Adds the journal's entries to the groups of `result` that are not complete; returns how
 * many were added. */
export function foldJournal(path: string, result: ResultFile): number {
  if (!existsSync(path)) return 0;
  let added = 0;
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    let entry: JournalEntry;
    try {
      entry = JSON.parse(line) as JournalEntry;
    } catch {
      continue; // the torn last line of a killed append, or the empty tail
    }
    const group = result.groups.find((g) => g.key === entry.group);
    if (!group || group.complete) continue;
    if ('point' in entry) {
      const point = pointSchema.safeParse(entry.point);
      if (!point.success || group.points.some((p) => pointKey(p) === pointKey(point.data))) continue;
      group.points.push(point.data);
    } else {
      const skipped = skippedSchema.safeParse(entry.skipped);
      if (!skipped.success || group.skipped.some((s) => s.ladder_index === skipped.data.ladder_index)) continue;
      group.skipped.push(skipped.data);
    }
    added++;
  }
  return added;
}

/** Writes one participant's result: whole and atomic (`save`), or one entry at a time
 * (`append`). Counts the bytes it writes. */
export class ResultWriter {
  bytesWritten = 0;
  readonly journal: string;
  constructor(
    private readonly outDir: string,
    private readonly result: () => ResultFile,
  ) {
    const r = result();
    this.journal = journalPath(outDir, r.dataset.name, r.participant);
  }

  /** The whole file, atomically; the journal it now holds is removed. */
  save(): void {
    const r = this.result();
    r.run.updated = new Date().toISOString();
    const path = writeResult(this.outDir, r);
    this.bytesWritten += statSync(path).size;
    rmSync(this.journal, { force: true });
  }

  /** One point or skipped point of a group already in the file, appended and fsynced. */
  append(entry: JournalEntry): void {
    const line = Buffer.from(`${JSON.stringify(redactValue(entry))}\n`);
    try {
      mkdirSync(dirname(this.journal), { recursive: true });
      const fd = openSync(this.journal, 'a');
      try {
        writeAllDurable(fd, line);
      } finally {
        closeSync(fd);
      }
    } catch (e) {
      throw diskFullError(e, resultPath(this.outDir, this.result().dataset.name, this.result().participant)) ?? e;
    }
    this.bytesWritten += line.length;
  }

  /** A result started afresh: a journal of an earlier measurement is of no use to it. */
  discardJournal(): void {
    rmSync(this.journal, { force: true });
  }
}
