// Which points of a result measure an exact (brute-force) search rather than the index
// (docs/contracts.md, "Exact-search points"). They are read as a row of their own, so an index
// that never reaches a target reads `not reached` there instead of borrowing the exact scan's
// recall.
import type { ResultFile, ResultPoint } from '../results/schema.ts';

/** The word that names exact search in the data: the search of a participant's exact row
 * (`Search`), the `search` knob value imported exact-search points keep, and the prefix of an
 * imported VectorBench exact group's key. The English word, not the participant of that name:
 * the one place src/ spells it as a string (test/engines/no-engine-names.test.ts allows it here only). */
export const EXACT = 'exact' as const;

export type Search = 'ann' | typeof EXACT;

/** The flag an exact-search point carries (set by importers of harnesses that record them). */
const EXACT_SEARCH_FLAG = 'exact-search';

/** The test for one result file: a point is exact when it carries the flag, or when its knobs
 * hold every value of the participant's `exact_search` declaration (settings.json). */
export function exactSearchTest(r: Pick<ResultFile, 'settings'>): (p: Pick<ResultPoint, 'knobs' | 'flags'>) => boolean {
  const declared = Object.entries(r.settings.exact_search ?? {});
  return (p) => p.flags.includes(EXACT_SEARCH_FLAG) || (declared.length > 0 && declared.every(([knob, value]) => p.knobs[knob] === value));
}
