// The credential variables participants declare (settings.json `registry.credential_env`),
// read as plain JSON so that output redaction (redact.ts) can mask their values from the first
// line a process prints without loading the settings schema. Validation is the registry's
// (src/runner/registry.ts), which reports a bad file where a message can be printed; masking
// more than declared is harmless, so every directory's file is read.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './code-paths.ts';

export function declaredCredentialEnvVars(participantsDir = join(ROOT, 'participants')): string[] {
  const names = new Set<string>();
  let dirs: string[];
  try {
    dirs = readdirSync(participantsDir);
  } catch {
    return [];
  }
  for (const dir of dirs) {
    let settings: unknown;
    try {
      settings = JSON.parse(readFileSync(join(participantsDir, dir, 'settings.json'), 'utf8'));
    } catch {
      continue;
    }
    const declared = (settings as { registry?: { credential_env?: unknown } } | null)?.registry?.credential_env;
    if (Array.isArray(declared)) for (const v of declared) if (typeof v === 'string') names.add(v);
  }
  return [...names];
}
