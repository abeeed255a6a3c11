// The one rule for a name that vecbench turns into a single path component: a dataset's
// directory, a participant's directory or result file. Letters, digits, '.', '_' and '-',
// starting with a letter or digit, at most 100 characters: no '/', no '..', no NUL, nothing
// absolute passes it, and the file name it makes stays far below the file system's limit.
const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

/** The rule in words, for messages. */
export const SAFE_NAME_RULE = "letters, digits, '.', '_' and '-', starting with a letter or digit, at most 100 characters";

export function isSafeName(name: string): boolean {
  return SAFE_NAME.test(name);
}

/** A name for a one-line message: JSON-escaped (NUL, newlines, quotes) and cut when long. */
export function shownName(name: string): string {
  const LIMIT = 60;
  return name.length <= LIMIT ? JSON.stringify(name) : `${JSON.stringify(name.slice(0, LIMIT))}... (${name.length} characters)`;
}
