// A participant's own N-API addon (participants/<name>/native, built by
// scripts/build-native.mjs at npm ci): loaded once, or unavailable with one line that names the
// command building it, so a missing or broken build never surfaces as a stack trace.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { besideSource } from '../util/code-paths.ts';
import { SetupNeeded } from '../util/errors.ts';

/** Where a participant's addon is and how it is built. */
export interface AddonSpec {
  participant: string;
  /** The built .node file. */
  path: string;
  /** The command that builds it by hand. */
  build: string;
  /** What the build needs from setup (e.g. a Debian package), named in the message. */
  needs?: string;
  /** Runs just before the library is loaded (settings the library reads at load time). */
  beforeLoad?: () => void;
}

/** The addon at `path` (default the spec's), or the one-line reason it is unavailable. */
function loadNativeAddon<T>(spec: AddonSpec, path: string = spec.path): T | SetupNeeded {
  const setup = spec.needs ? `it needs ${spec.needs}; after setup, ` : '';
  if (!existsSync(path))
    return new SetupNeeded(`${spec.participant} is unavailable: its addon ${path} is not built (${setup}\`npm ci\` or \`${spec.build}\` builds it)`);
  try {
    spec.beforeLoad?.();
    return createRequire(import.meta.url)(path) as T;
  } catch (e) {
    const why = (e instanceof Error ? e.message : String(e)).split('\n')[0];
    return new SetupNeeded(
      `${spec.participant} is unavailable: its addon ${path} does not load (${why}; ${setup ? 'after setup, ' : ''}\`${spec.build}\` builds it again)`,
    );
  }
}

/** The addon, loaded on first use; throws the SetupNeeded line when it is unavailable. */
function nativeAddon<T>(spec: AddonSpec): () => T {
  let loaded: T | SetupNeeded | undefined;
  return () => {
    loaded ??= loadNativeAddon<T>(spec);
    if (loaded instanceof SetupNeeded) throw loaded;
    return loaded;
  };
}

/** A participant's addon as its adapter uses it: where the build puts it, the one-line reason it
 * is unavailable when asked for at another path (the tests' missing file), and the addon itself,
 * loaded on first use. */
interface ParticipantAddon<T> {
  path: string;
  load(path?: string): T | SetupNeeded;
  get: () => T;
}

/** The addon of participants/<participant>/native, built by scripts/build-native.mjs as
 * build/Release/<file> beside the adapter (`moduleUrl`: its import.meta.url); `file` defaults to
 * the participant's name with `_` for `-` (binding.gyp's target_name allows no `-`). `get()` loads it on
 * first use; `load(path)` says in one line why an addon at `path` is unavailable. */
export function participantAddon<T>(
  moduleUrl: string,
  spec: { participant: string; file?: string } & Pick<AddonSpec, 'needs' | 'beforeLoad'>,
): ParticipantAddon<T> {
  const { file = `${spec.participant.replaceAll('-', '_')}.node`, ...rest } = spec;
  const full: AddonSpec = {
    ...rest,
    path: besideSource(moduleUrl, `native/build/Release/${file}`),
    build: `node scripts/build-native.mjs participants/${spec.participant}/native`,
  };
  return { path: full.path, load: (path = full.path) => loadNativeAddon<T>(full, path), get: nativeAddon<T>(full) };
}
