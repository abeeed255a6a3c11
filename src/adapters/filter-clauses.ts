// Filters as (column slot, lo, hi) triples, the form a participant's native addon evaluates during
// a search (a graph walk's predicate, an id selector), never calling JS: a row passes when
// lo <= column[row] < hi for every triple, with the attribute columns the slots name handed over
// once. Exact in float64 for any int32 value; an integer equality v is the range [v, v + 1), and
// one no int32 can equal is the empty range [1, 0).
import { ATTRIBUTES, type AttrName, type FilterExpr } from '../contracts.ts';
import { UserError } from '../util/errors.ts';

/** A filter's triples, one after another, and the attribute of each slot, in slot order. */
export interface FilterClauses {
  clauses: Float64Array;
  fields: AttrName[];
}

/** `f` as triples over at most `maxFields` columns; `engine` names the participant in errors. */
export function filterClauses(f: FilterExpr, engine: string, maxFields: number = ATTRIBUTES.length): FilterClauses {
  const out: number[] = [];
  const fields: AttrName[] = [];
  const walk = (e: FilterExpr) => {
    if (e.op === 'and') {
      for (const a of e.args) walk(a);
      return;
    }
    if (!ATTRIBUTES.includes(e.field)) throw new UserError(`${engine}: filter field ${String(e.field)} is not an attribute (${ATTRIBUTES.join(', ')})`);
    if (!fields.includes(e.field)) fields.push(e.field);
    const slot = fields.indexOf(e.field);
    if (slot >= maxFields) throw new UserError(`${engine}: a filter reads at most ${maxFields} attributes; this one reads ${fields.join(', ')}`);
    if (e.op === 'eq') out.push(slot, ...(Number.isInteger(e.value) ? [e.value, e.value + 1] : [1, 0]));
    else out.push(slot, e.gte, e.lt);
  };
  walk(f);
  return { clauses: Float64Array.from(out), fields };
}
