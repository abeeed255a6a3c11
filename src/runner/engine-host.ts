// A participant's host process as every command that drives engines starts it (run's engine
// handle, churn): its output appended to the participant's engine log, one header line per
// start, so a restart or a churn runbook is found in the log where it began.
import { appendFileSync, existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { diskFullError } from '../util/errors.ts';
import { HostClient } from './client.ts';

/** A new host for the participant, its output going to `logFile`. */
export function startEngineHost(participant: string, logFile: string, onProgress?: (p: { what: string; done: number; total: number }) => void): HostClient {
  mkdirSync(dirname(logFile), { recursive: true });
  const existed = existsSync(logFile);
  try {
    appendFileSync(logFile, `--- engine process started ${new Date().toISOString()}\n`);
  } catch (e) {
    // A full disk: leave no empty log behind (a failed run writes no file).
    if (!existed && statSync(logFile, { throwIfNoEntry: false })?.size === 0) rmSync(logFile, { force: true });
    throw diskFullError(e, logFile) ?? e;
  }
  return new HostClient(participant, onProgress, logFile);
}
