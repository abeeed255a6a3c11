/** An error caused by the user's input: the CLI prints its one-line message (problem and fix)
 * and exits non-zero, without a stack trace. */
export class UserError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UserError';
  }
}

/** The command that installs what vecbench needs on a Debian machine (scripts/setup.sh). */
const SETUP_COMMAND = 'sudo npm run setup';

/** Something `npm run setup` installs is missing (a server, chromium, a Debian data package):
 * one line naming it and the setup command. It carries no stack frames, so a test that fails on
 * it (a machine not set up) prints that one line and not a trace. */
export class SetupNeeded extends UserError {
  constructor(missing: string) {
    super(`${missing}; run \`${SETUP_COMMAND}\``);
    this.name = 'SetupNeeded';
    this.stack = `${this.name}: ${this.message}`;
  }
}

/** A full disk (ENOSPC) or exhausted quota (EDQUOT) as one UserError line naming the file and
 * the fix; null for any other error. */
export function diskFullError(e: unknown, path?: string): UserError | null {
  if (e instanceof UserError) return null;
  const err = e as NodeJS.ErrnoException | null;
  const code = err?.code;
  if (code !== 'ENOSPC' && code !== 'EDQUOT') return null;
  const file = path ?? err?.path;
  const what = code === 'EDQUOT' ? 'the disk quota is exhausted' : 'no space left on the device';
  return new UserError(
    `${what} while writing ${file ?? 'a file'}; free space there (or point --out / --data at a disk with room) and run again: finished results are kept`,
  );
}
