// The participants' registry: which participants there are (a directory under participants/
// with an adapter.ts, its name not starting with `_`) and what each declares about itself for src/ to use (the `registry`
// block of its settings.json; docs/contracts.md, "The registry block"): membership of the
// embedded default run, the environment variables holding its credentials, the example of
// its --connect URL in the help, the protocol whose null ceiling its server and load client
// make. src/ names no engine: whatever it needs to know about a particular one is read here.
//
// Read from the settings files alone, never by importing an adapter (adapters load native
// addons and engines), so the command line can build its defaults and help at startup.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { ROOT } from '../util/code-paths.ts';
import { UserError } from '../util/errors.ts';
import { issueLine } from '../util/zod-issue.ts';

export const PARTICIPANTS_DIR = join(ROOT, 'participants');

/** Protocols src/ measures a null ceiling of on its own (src/loadgen/ceiling.ts): no participant
 * may declare them. */
const BUILT_IN_PROTOCOLS = ['in-process', 'http'] as const;

/** The `registry` block of a participant's settings.json. Every field is optional: a
 * participant that declares nothing is known by its directory alone. */
export const registrySchema = z
  .object({
    /** Member of the embedded default run (`vecbench run` and `vecbench churn` without
     * --participants), at this position: members run in ascending order. */
    default_run: z.number().int().positive().optional(),
    /** The named tiers of `vecbench run --tier` this participant runs in when --participants is
     * not given: it has a layout meant for the tier (src/commands/tiers.ts). */
    tiers: z.array(z.enum(['disk'])).optional(),
    /** `resident`: the engine holds its whole index, vectors included, in memory. A named tier's
     * run (which has a memory budget) runs it too when --participants is not given, held by the
     * budget from its first start, so that it is reported as not fitting, with the kernel's
     * figures, rather than left out or built for nothing. */
    memory: z.enum(['resident']).optional(),
    /** Environment variables that hold a credential of this participant's engine (e.g. the
     * password its client library reads): their values are registered as secrets in every
     * vecbench process (src/util/redact.ts) and masked wherever they would appear. */
    credential_env: z
      .array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name (letters, digits, _)'))
      .min(1)
      .optional(),
    /** The example of this participant's --connect URL shown in the help, at `order` among
     * the participants' examples (the first is also the one the error for a malformed
     * --connect shows). Its scheme must be one the adapter's `server.remote` takes. */
    connect_example: z
      .object({ url: z.string().regex(/^[a-z][a-z0-9+.-]*:\/\/\S+$/, 'a URL: scheme://...'), order: z.number().int().positive() })
      .strict()
      .optional(),
    /** The network protocol whose null ceiling (`vecbench ceiling`, and the client-limited
     * flag of load-generator points over that protocol) is this participant's own server
     * holding k rows, queried through its own load client, which must export `protocol` equal
     * to it. `name` is how the help names the protocol's server (e.g. the server's product
     * name). One participant per protocol. */
    ceiling: z
      .object({ protocol: z.string().regex(/^[a-z][a-z0-9-]*$/, 'a protocol name: lower-case letters, digits, -'), name: z.string().min(1) })
      .strict()
      .optional(),
  })
  .strict();
type RegistryDeclarations = z.infer<typeof registrySchema>;

interface RegistryEntry {
  name: string;
  declares: RegistryDeclarations;
}

/** A directory under participants/ whose name starts with this is not a participant: it is
 * participants/_template (what a new participant is copied from), never listed or run. */
const NOT_A_PARTICIPANT_PREFIX = '_';

/** The participants: directories under participants/ holding an adapter.ts, or a settings.json
 * whose `adapter` names another participant's (a variant of an engine, e.g. another
 * quantization), by name, but those whose name starts with `_` (the template, shared code). */
export function listParticipants(dir: string = PARTICIPANTS_DIR): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !e.name.startsWith(NOT_A_PARTICIPANT_PREFIX) && adapterFile(join(dir, e.name)) !== null)
    .map((e) => e.name)
    .sort();
}

/** The adapter.ts a participant directory runs: its own, or that of the participant its
 * settings.json's `adapter` names (a sibling directory). Null when there is neither. */
export function adapterFile(participantDir: string): string | null {
  const own = join(participantDir, 'adapter.ts');
  if (existsSync(own)) return own;
  let settings: unknown;
  try {
    settings = JSON.parse(readFileSync(join(participantDir, 'settings.json'), 'utf8'));
  } catch {
    return null;
  }
  const name = (settings as { adapter?: unknown } | null)?.adapter;
  if (typeof name !== 'string' || !/^[a-z0-9][a-z0-9._-]*$/.test(name)) return null;
  const shared = join(dirname(participantDir), name, 'adapter.ts');
  return existsSync(shared) ? shared : null;
}

/** One participant's declarations, from its own settings.json; throws a UserError naming the
 * file when it does not parse or the block does not validate. */
function declarationsOf(name: string): RegistryDeclarations {
  const path = join(PARTICIPANTS_DIR, name, 'settings.json');
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new UserError(`participant ${name}: cannot read ${path} (${(e as Error).message.split('\n')[0]}); fix the JSON`);
  }
  const block = raw !== null && typeof raw === 'object' ? (raw as { registry?: unknown }).registry : undefined;
  const parsed = registrySchema.safeParse(block ?? {});
  if (!parsed.success) throw new UserError(`participant ${name}: ${path} does not validate: ${issueLine(parsed.error, 'registry')}`);
  return parsed.data;
}

/** Two participants claiming one slot (a default-run position, an example's place, a protocol). */
function unique(entries: RegistryEntry[], what: string, keyOf: (d: RegistryDeclarations) => string | number | undefined): void {
  const seen = new Map<string | number, string>();
  for (const e of entries) {
    const key = keyOf(e.declares);
    if (key === undefined) continue;
    const other = seen.get(key);
    if (other !== undefined)
      throw new UserError(`participants ${other} and ${e.name} both declare registry.${what} ${key} in their settings.json; give each its own`);
    seen.set(key, e.name);
  }
}

let cached: RegistryEntry[] | null = null;

/** Every participant's declarations, by name, checked against each other (one participant per
 * default-run position, example position and ceiling protocol; no built-in protocol). Read once
 * per process. */
function registry(): RegistryEntry[] {
  if (cached) return cached;
  const entries = listParticipants().map((name) => ({ name, declares: declarationsOf(name) }));
  unique(entries, 'default_run', (d) => d.default_run);
  unique(entries, 'connect_example.order', (d) => d.connect_example?.order);
  unique(entries, 'ceiling.protocol', (d) => d.ceiling?.protocol);
  for (const e of entries) {
    const p = e.declares.ceiling?.protocol;
    if (p !== undefined && (BUILT_IN_PROTOCOLS as readonly string[]).includes(p)) {
      throw new UserError(
        `participant ${e.name}: settings.json registry.ceiling.protocol: ${p} is measured by vecbench itself (${BUILT_IN_PROTOCOLS.join(', ')}); name the protocol its load client speaks`,
      );
    }
  }
  cached = entries;
  return entries;
}

/** The embedded default run's participants, in their declared order. */
export function defaultRunParticipants(): string[] {
  return registry()
    .filter((e) => e.declares.default_run !== undefined)
    .sort((a, b) => a.declares.default_run! - b.declares.default_run!)
    .map((e) => e.name);
}

/** The participants that declare a layout for a tier, by name. */
export function tierParticipants(tier: string): string[] {
  return registry()
    .filter((e) => (e.declares.tiers as string[] | undefined)?.includes(tier))
    .map((e) => e.name)
    .sort();
}

/** The participants that declare they hold their whole index in memory, by name. */
export function residentParticipants(): string[] {
  return registry()
    .filter((e) => e.declares.memory === 'resident')
    .map((e) => e.name)
    .sort();
}

/** The --connect examples, `name=url`, in their declared order. */
export function connectExamples(): string[] {
  return registry()
    .filter((e) => e.declares.connect_example !== undefined)
    .sort((a, b) => a.declares.connect_example!.order - b.declares.connect_example!.order)
    .map((e) => `${e.name}=${e.declares.connect_example!.url}`);
}

/** The protocols participants stand for in the ceiling, by participant name, with the
 * participant and how the help names the protocol's server. */
export function ceilingProtocols(): { protocol: string; participant: string; name: string }[] {
  return registry().flatMap((e) => (e.declares.ceiling ? [{ protocol: e.declares.ceiling.protocol, participant: e.name, name: e.declares.ceiling.name }] : []));
}

/** Every participant's credential variables. Never throws: it runs when src/util/redact.ts is
 * first imported, in every vecbench process, where an error could not be reported; a settings
 * file that does not parse contributes none (the command that uses that participant reports
 * it). */
export function credentialEnvVars(): string[] {
  const names = new Set<string>();
  for (const name of listParticipants()) {
    try {
      for (const v of declarationsOf(name).credential_env ?? []) names.add(v);
    } catch {
      // Reported by registry() or loadParticipant, where a message can be printed.
    }
  }
  return [...names];
}
