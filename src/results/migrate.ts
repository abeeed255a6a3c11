// Result files of earlier formats, read as today's. A change to the result format that an older
// file would not validate against (a new required field, a renamed one, a metric computed from
// figures the file stores differently) raises RESULT_FORMAT and adds one step here that lifts a
// file of the previous format to the new one; readResult applies the steps in order, so results
// stored by any earlier version still read, and the file on disk is never rewritten.
// (test/fixtures/results-format-1 holds files of format 1 that every later version must read.)
import { RESULT_FORMAT } from './schema.ts';

/** Lifts a parsed result of format `from` to format `to` (plain JSON in, plain JSON out). */
export interface FormatStep {
  from: string;
  to: string;
  up(raw: Record<string, unknown>): Record<string, unknown>;
}

/** Every step since format 1, in order. Format 1 is today's: none yet. */
const FORMAT_STEPS: readonly FormatStep[] = [];

/** The result in today's format, or null when its format is none this version can lift (a
 * newer version's, or not a result). */
export function toCurrentFormat(raw: unknown, steps: readonly FormatStep[] = FORMAT_STEPS, current = RESULT_FORMAT): Record<string, unknown> | null {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return null;
  let out = raw as Record<string, unknown>;
  for (let guard = 0; out.format !== current; guard++) {
    const step = steps.find((s) => s.from === out.format);
    if (!step || guard > steps.length) return null;
    out = { ...step.up(out), format: step.to };
  }
  return out;
}
