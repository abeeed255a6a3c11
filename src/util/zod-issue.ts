// One line for the first problem zod found in a file: the path of the field (under a prefix,
// e.g. `index`) and what is wrong. Unknown keys are named by their own path, never as an
// empty path before zod's message.
import type { z } from 'zod';

export function issueLine(e: z.ZodError, prefix = ''): string {
  const issue = e.issues[0];
  const at = [prefix, ...issue.path.map(String)].filter((s) => s !== '');
  if (issue.code === 'unrecognized_keys') {
    const keys = issue.keys.map((k) => [...at, k].join('.'));
    return `${keys.join(', ')}: unknown key${keys.length > 1 ? 's' : ''} (remove ${keys.length > 1 ? 'them' : 'it'}, or check the spelling)`;
  }
  return `${at.length > 0 ? at.join('.') : '(top level)'}: ${issue.message}`;
}
