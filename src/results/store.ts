// Reading and writing result files: validated on write and on read, written atomically.
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { writeJsonAtomic } from '../util/atomic.ts';
import { UserError } from '../util/errors.ts';
import { issueLine } from '../util/zod-issue.ts';
import { toCurrentFormat } from './migrate.ts';
import { RESULT_FORMAT, resultSchema, type ResultFile } from './schema.ts';

export function resultPath(outDir: string, dataset: string, participant: string): string {
  return join(outDir, dataset, `${participant}.json`);
}

/** A participant's engine log: <out>/logs/<dataset>/<participant><suffix>.log (kept with the
 * results; the churn command's engines log to `.churn`). */
export function engineLogPath(outDir: string, dataset: string, participant: string, suffix = ''): string {
  return join(outDir, 'logs', dataset, `${participant}${suffix}.log`);
}

export function writeResult(outDir: string, result: ResultFile): string {
  const parsed = resultSchema.safeParse(result);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`internal: result for ${result.participant} does not match the schema at ${issue.path.join('.')}: ${issue.message}`);
  }
  const path = resultPath(outDir, result.dataset.name, result.participant);
  writeJsonAtomic(path, parsed.data);
  removeStaleTemps(path);
  return path;
}

export function readResult(path: string): ResultFile {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new UserError(`result file ${path} is not valid JSON (${(e as Error).message.split('\n')[0]}); delete it and run again`);
  }
  const format = (raw as { format?: unknown })?.format;
  // An earlier format is lifted to today's (src/results/migrate.ts); a later one is refused.
  const current = toCurrentFormat(raw);
  if (current === null) {
    throw new UserError(
      `result file ${path} has format ${JSON.stringify(format)}, this vecbench reads ${RESULT_FORMAT}; use a fresh --out directory or the vecbench version that wrote it`,
    );
  }
  const parsed = resultSchema.safeParse(current);
  if (!parsed.success) {
    throw new UserError(`result file ${path} does not validate: ${issueLine(parsed.error)}; delete it (or --out another directory) and run again`);
  }
  return parsed.data;
}

/** The paths of every result file under outDir (outDir/<dataset>/<participant>.json). */
export function resultPaths(outDir: string): string[] {
  if (!existsSync(outDir)) return [];
  const out: string[] = [];
  for (const ds of readdirSync(outDir, { withFileTypes: true })) {
    if (!ds.isDirectory()) continue;
    for (const f of readdirSync(join(outDir, ds.name))) {
      if (f.endsWith('.json') && !f.startsWith('.')) out.push(join(outDir, ds.name, f));
    }
  }
  return out;
}

/** Every result file under outDir. */
export function readAllResults(outDir: string): ResultFile[] {
  return resultPaths(outDir).map(readResult);
}

/** Temp files of writes that a killed process never renamed: never read, removed here. */
function removeStaleTemps(path: string): void {
  const prefix = `.${basename(path)}.`;
  for (const f of readdirSync(dirname(path))) {
    if (f.startsWith(prefix) && f.endsWith('.tmp')) rmSync(join(dirname(path), f), { force: true });
  }
}
