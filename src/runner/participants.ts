// Finding and validating participants: participants/<name>/settings.json + adapter.ts.
// Adding a participant is adding a directory; nothing here names an engine (what src/ needs to
// know about one, its settings.json declares: src/runner/registry.ts).
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import type { EngineSession, Knobs, Participant } from '../contracts.ts';
import { knobProblem, knobSpecOf, withCheckedKnobs } from '../adapters/knobs.ts';
import { importable } from '../util/code-paths.ts';
import { UserError } from '../util/errors.ts';
import { isSafeName } from '../util/names.ts';
import { issueLine } from '../util/zod-issue.ts';
import { KS, filterKind } from '../datasets/groups.ts';
import { adapterFile, listParticipants, PARTICIPANTS_DIR, registrySchema } from './registry.ts';

export { listParticipants, PARTICIPANTS_DIR };

const knobValues = z.array(z.union([z.number(), z.string()])).min(1, 'a ladder knob needs at least one value');

const ladderRule = z
  .object({
    k: z.array(z.number().int().positive()).optional(),
    filters: z.array(z.string()).optional(),
    /** Only for these datasets (e.g. a real set whose recall needs a longer ladder); a rule
     * without it applies to every dataset. */
    datasets: z.array(z.string().min(1)).min(1).optional(),
    knobs: z.record(z.string(), knobValues),
  })
  .strict();

export const settingsFileSchema = z
  .object({
    /** Engine index parameters, validated by the adapter's own schema. */
    index: z.unknown(),
    /** Search-knob ladders; the first rule matching a group (k, filter) applies. */
    ladders: z.array(ladderRule).min(1, 'at least one ladder rule is needed'),
    /** Another participant's directory whose adapter.ts this one runs with these settings (a
     * variant of an engine, e.g. another quantization); this directory then has no adapter.ts. */
    adapter: z
      .string()
      .regex(/^[a-z0-9][a-z0-9._-]*$/, 'a participant directory name')
      .optional(),
    /** Rows per ingest batch. */
    batch_size: z.number().int().positive().default(10_000),
    /** Optional notes recorded in results: facts that are not in the code. */
    notes: z.string().optional(),
    /** The main numeric search knob, searched to each target recall (src/runner/calibrate.ts):
     * its name (or names, the first a ladder has), optionally the range the search may leave
     * the ladder for, and the knob's grain (`step`: no two values searched are closer, e.g.
     * a re-rank factor at 0.1, one candidate at k = 10; integers have a grain of 1). */
    calibration: z
      .object({
        knob: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).transform((k) => (typeof k === 'string' ? [k] : k)),
        min: z.number().optional(),
        max: z.number().optional(),
        step: z.number().positive().optional(),
      })
      .strict()
      .optional(),
    /** Knob values that make the engine scan exactly instead of searching its index (e.g. the
     * knob ef_search at a string value its adapter reads as a scan): such points are read as
     * the participant's exact row. */
    exact_search: z.record(z.string().min(1), z.union([z.number(), z.string()])).optional(),
    /** What src/ needs to know about this participant (src/runner/registry.ts). Read from the
     * participant's own settings.json only; a --settings file may hold it too (it is
     * validated, and has no effect). Not recorded in results. */
    registry: registrySchema.optional(),
    /** What the shared contract suite (test/contract/suite.ts) may expect of this participant:
     * `min_recall`, the recall at k = 10, unfiltered, at the top of its ladder, on the suite's
     * small synthetic set (default 0.95); `min_filtered_recall`, the same for each filter kind
     * it supports (default 0.8). Read by the tests only; not recorded in results. */
    contract: z
      .object({
        min_recall: z.number().min(0).max(1).optional(),
        min_filtered_recall: z.number().min(0).max(1).optional(),
      })
      .strict()
      .optional(),
  })
  .strict();
export type SettingsFile = z.infer<typeof settingsFileSchema>;
type LadderRule = z.infer<typeof ladderRule>;

export interface LoadedParticipant {
  name: string;
  dir: string;
  adapter: Participant<unknown>;
  settings: SettingsFile;
  /** settings.index after the adapter's schema (defaults applied). */
  index: unknown;
  settingsPath: string;
}

/** Checks the ladders: every knob list sorted ascending (numbers) and filters known. */
function checkLadders(name: string, rules: LadderRule[]): void {
  rules.forEach((rule, i) => {
    for (const f of rule.filters ?? []) {
      try {
        filterKind(f);
      } catch (e) {
        throw new UserError(`participant ${name}: settings.json ladders.${i}.filters: ${(e as Error).message}`);
      }
    }
    for (const k of rule.k ?? []) {
      if (!(KS as readonly number[]).includes(k)) throw new UserError(`participant ${name}: settings.json ladders.${i}.k: ${k} is not one of ${KS.join(', ')}`);
    }
    for (const [knob, values] of Object.entries(rule.knobs)) {
      for (let j = 1; j < values.length; j++) {
        const a = values[j - 1];
        const b = values[j];
        if (typeof a === 'number' && typeof b === 'number' && a === b) {
          throw new UserError(`participant ${name}: settings.json ladders.${i}.knobs.${knob} lists ${a} twice; list each value once, in ascending order`);
        }
        if (typeof a === 'number' && typeof b === 'number' && !(b > a)) {
          throw new UserError(
            `participant ${name}: settings.json ladders.${i}.knobs.${knob} is not sorted ascending (${a} then ${b}); sort the ladder so curves read left to right`,
          );
        }
      }
    }
  });
}

/** Checks the exact_search declaration: every value it names is one some ladder measures (else
 * the declaration could never mark a point, and a typo would pass unseen). */
export function checkExactSearch(name: string, settings: Pick<SettingsFile, 'ladders' | 'exact_search'>): void {
  for (const [knob, value] of Object.entries(settings.exact_search ?? {})) {
    if (!settings.ladders.some((r) => (r.knobs[knob] as readonly unknown[] | undefined)?.includes(value))) {
      throw new UserError(
        `participant ${name}: settings.json exact_search.${knob}: no ladder lists ${knob} ${JSON.stringify(value)}; add it to a ladder or correct exact_search`,
      );
    }
  }
}

/** Checks the registry declarations against the adapter: a --connect example needs a server
 * the user can run (`server.remote`) and one of its schemes; a ceiling protocol needs a server
 * lifecycle. */
function checkRegistry(name: string, adapter: Pick<Participant<unknown>, 'server'>, settings: Pick<SettingsFile, 'registry'>): void {
  const example = settings.registry?.connect_example;
  if (example) {
    const schemes = adapter.server?.remote?.schemes;
    if (!schemes)
      throw new UserError(
        `participant ${name}: settings.json registry.connect_example: the adapter takes no server given by URL (server.remote); remove the example`,
      );
    const scheme = example.url.slice(0, example.url.indexOf(':'));
    if (!schemes.includes(scheme))
      throw new UserError(
        `participant ${name}: settings.json registry.connect_example: ${scheme}:// is not a scheme the adapter takes (${schemes.join(', ')}); correct the example`,
      );
  }
  if (settings.registry?.ceiling && !adapter.server)
    throw new UserError(
      `participant ${name}: settings.json registry.ceiling: the adapter has no server lifecycle to hold a null ceiling's k rows; remove the declaration`,
    );
}

/** Checks every knob settings.json names (ladders, calibration, exact_search) against the knobs
 * the adapter declares, so a misspelt or out-of-range knob stops the run before any engine
 * starts instead of at the point that sets it. */
function checkKnobNames(name: string, adapter: Participant<unknown>, index: unknown, settings: SettingsFile): void {
  const spec = knobSpecOf(adapter, index);
  const problem = (at: string, knobs: Knobs) => {
    const line = knobProblem(`participant ${name}: settings.json ${at}`, spec, knobs);
    if (line !== null) throw new UserError(line);
  };
  settings.ladders.forEach((rule, i) => {
    for (const [knob, values] of Object.entries(rule.knobs)) for (const v of values) problem(`ladders.${i}.knobs`, { [knob]: v });
  });
  // calibration.knob lists alternatives (the first a ladder has): one of them must be a knob.
  const calibrated = settings.calibration?.knob ?? [];
  if (calibrated.length > 0 && !calibrated.some((k) => Object.hasOwn(spec, k)))
    throw new UserError(
      `participant ${name}: settings.json calibration.knob: no knob of ${calibrated.map((k) => `"${k}"`).join(', ')} is one it takes; its knobs are ${Object.keys(spec).join(', ') || 'none'}`,
    );
  problem('exact_search', settings.exact_search ?? {});
}

/** The participant's session as the harness hands it on: setKnobs checked against the knobs
 * the adapter declares before the adapter sees them. Every caller opens sessions through it. */
export function checkedSession<T extends Pick<EngineSession, 'setKnobs'>>(p: Pick<LoadedParticipant, 'name' | 'adapter' | 'index'>, session: T): T {
  return withCheckedKnobs(p.name, knobSpecOf(p.adapter, p.index), session);
}

/** The ladder rules in effect for a dataset: rules naming other datasets are dropped and the
 * `datasets` matcher of the kept ones is removed, so results record the ladders measured. */
export function laddersForDataset(rules: LadderRule[], dataset: string): LadderRule[] {
  return rules
    .filter((r) => r.datasets === undefined || r.datasets.includes(dataset))
    .map((r) => {
      const { datasets: _datasets, ...rest } = r;
      return rest;
    });
}

/** Loads a participant; with `dataset`, its ladders are those in effect for that dataset
 * (laddersForDataset). */
export async function loadParticipant(name: string, settingsPath?: string, dataset?: string): Promise<LoadedParticipant> {
  const dir = join(PARTICIPANTS_DIR, name);
  if (!isSafeName(name) || adapterFile(dir) === null) {
    throw new UserError(`unknown participant "${name}"; known participants: ${listParticipants().join(', ')}`);
  }
  return loadParticipantFrom(dir, name, settingsPath, dataset);
}

/** Loads the participant in `dir` (adapter.ts, settings.json), known as `name` in messages,
 * whether or not the registry lists it: loadParticipant for a listed one, the contract suite
 * for participants/_template. */
export async function loadParticipantFrom(dir: string, name: string, settingsPath?: string, dataset?: string): Promise<LoadedParticipant> {
  const file = adapterFile(dir);
  if (file === null)
    throw new UserError(
      `participant ${name}: ${dir} has no adapter.ts, and its settings.json names no participant whose adapter it uses ("adapter"); copy participants/_template`,
    );
  const mod = (await import(pathToFileURL(await importable(file)).href)) as { default: Participant<unknown> };
  const adapter = mod.default;
  const path = settingsPath ?? join(dir, 'settings.json');
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new UserError(`participant ${name}: cannot read ${path} (${(e as Error).message.split('\n')[0]}); fix the JSON`);
  }
  const parsed = settingsFileSchema.safeParse(raw);
  if (!parsed.success) throw new UserError(`participant ${name}: ${path} does not validate: ${issueLine(parsed.error)}`);
  checkLadders(name, parsed.data.ladders);
  checkExactSearch(name, parsed.data);
  checkRegistry(name, adapter, parsed.data);
  const index = adapter.settingsSchema.safeParse(parsed.data.index ?? {});
  if (!index.success) throw new UserError(`participant ${name}: ${path} does not validate: ${issueLine(index.error, 'index')}`);
  checkKnobNames(name, adapter, index.data, parsed.data);
  const settings = dataset === undefined ? parsed.data : { ...parsed.data, ladders: laddersForDataset(parsed.data.ladders, dataset) };
  return { name, dir, adapter, settings, index: index.data, settingsPath: resolve(path) };
}

/** The ladder points of a group: the first matching rule's knobs expanded as a product, in
 * order (the last knob varies fastest). Empty when no rule matches. A rule with `datasets`
 * matches only when `dataset` is one of them (loadParticipant with a dataset has already
 * resolved those rules). */
export function ladderFor(settings: SettingsFile, filter: string, k: number, dataset?: string): Knobs[] {
  const rule = settings.ladders.find(
    (r) =>
      (r.k === undefined || r.k.includes(k)) &&
      (r.filters === undefined || r.filters.includes(filter)) &&
      (r.datasets === undefined || (dataset !== undefined && r.datasets.includes(dataset))),
  );
  if (!rule) return [];
  let points: Knobs[] = [{}];
  for (const [knob, values] of Object.entries(rule.knobs)) {
    points = points.flatMap((p) => values.map((v) => ({ ...p, [knob]: v })));
  }
  return points;
}
