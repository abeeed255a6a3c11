// The machine a result was measured on (ResultFile.hardware).
import { cpus, totalmem, type as osType, release } from 'node:os';
import type { ResultFile } from './schema.ts';

export function hardware(): ResultFile['hardware'] {
  return { cpu: cpus()[0]?.model ?? 'unknown', cores: cpus().length, memory_bytes: totalmem(), os: `${osType()} ${release()}`, node: process.version };
}
