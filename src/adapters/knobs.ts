// Search knobs are declared once, by the participant (Participant.knobs), and checked by the
// harness: every ladder when settings.json is read, and every setKnobs call before the engine
// sees it. An adapter's setKnobs only applies knobs; the names and values it receives are known.
import { z } from 'zod';
import type { KnobSpec, Knobs, Participant } from '../contracts.ts';
import { UserError } from '../util/errors.ts';

/** A knob whose values pass `test`; `description` completes "must be ..." in its error. */
export function knobWith<T extends number | string>(test: (value: unknown) => boolean, description: string): z.ZodType<T> {
  return z.custom<T>(test, { error: `must be ${description}` });
}

/** An integer knob in min..max (max unbounded by default); `note` says what a value means. */
export function intKnob(min: number, max = Number.POSITIVE_INFINITY, note = ''): z.ZodType<number> {
  const range = max === Number.POSITIVE_INFINITY ? (min === 1 ? 'a positive integer' : `an integer >= ${min}`) : `an integer ${min}..${max}`;
  return knobWith<number>((v) => typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max, note ? `${range} (${note})` : range);
}

/** A knob that takes one of these strings. */
export function choiceKnob(values: readonly string[]): z.ZodType<string> {
  return knobWith<string>((v) => typeof v === 'string' && values.includes(v), `one of ${values.join(', ')}`);
}

/** The knobs a participant takes with these index settings. */
export function knobSpecOf<S>(adapter: Pick<Participant<S>, 'knobs'>, settings: S): KnobSpec {
  return typeof adapter.knobs === 'function' ? adapter.knobs(settings) : adapter.knobs;
}

/** Why these knobs are refused, as one line under `owner` (a participant's name, or a
 * settings.json path), or null when every name is declared and every value passes. */
export function knobProblem(owner: string, spec: KnobSpec, knobs: Knobs): string | null {
  const names = Object.keys(spec);
  for (const [name, value] of Object.entries(knobs)) {
    const schema = Object.hasOwn(spec, name) ? spec[name] : undefined;
    if (schema === undefined) {
      const known = names.length > 0 ? `its knobs are ${names.join(', ')}` : 'it has no search knob (its ladders are { "knobs": {} })';
      return `${owner}: unknown knob "${name}"; ${known}`;
    }
    const parsed = schema.safeParse(value);
    if (!parsed.success) return `${owner}: knob ${name} ${parsed.error.issues[0].message}, got ${JSON.stringify(value)}`;
  }
  return null;
}

/** The session with its setKnobs checked against the participant's declared knobs first: what
 * the harness hands every caller (the runner's passes, threads, churn, quality, the load
 * generator, the tests), so no adapter repeats the check. */
export function withCheckedKnobs<T extends { setKnobs(knobs: Knobs): Promise<void> }>(owner: string, spec: KnobSpec, session: T): T {
  const apply = session.setKnobs.bind(session);
  session.setKnobs = async (knobs: Knobs) => {
    const problem = knobProblem(owner, spec, knobs);
    if (problem !== null) throw new UserError(problem);
    await apply(knobs);
  };
  return session;
}
