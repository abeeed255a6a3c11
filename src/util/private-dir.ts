// Directories vecbench keeps its own state in, under shared places like /tmp or /var/tmp where
// another local user could create the path first (a directory of theirs, or a symlink to a
// victim). Each use checks the directory again: not a link, owned by this user, writable by
// nobody else; a file in it is created exclusively and never through a link. Anything else is
// refused in one line naming the path, so root never follows another user's path.
import { closeSync, constants, lstatSync, mkdirSync, openSync, readFileSync, type Stats, unlinkSync, writeSync } from 'node:fs';
import { UserError } from './errors.ts';

/** Why `st` (lstat of a directory path) is not this user's private directory, or null. */
function notPrivate(st: Stats, groupOtherWrite: number): string | null {
  if (st.isSymbolicLink()) return 'is a symbolic link';
  if (!st.isDirectory()) return 'is not a directory';
  const me = process.getuid?.();
  if (me !== undefined && st.uid !== me) return `belongs to uid ${st.uid}, not to you (uid ${me})`;
  if ((st.mode & groupOtherWrite) !== 0) return 'can be written by other users';
  return null;
}

/** Creates `dir` (mode `mode`) when absent and checks it is this user's own, unshared; returns
 * it. `fix` says how to get past a refusal (e.g. the variable that moves it). */
export function privateDir(dir: string, fix: string, mode = 0o700): string {
  try {
    mkdirSync(dir, { mode });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw new UserError(`cannot create ${dir} (${(e as Error).message}); ${fix}`);
  }
  checkPrivateDir(dir, fix);
  return dir;
}

/** Why an existing directory is not this user's own and unshared, or null when it is. */
export function privateDirProblem(dir: string): string | null {
  return notPrivate(lstatSync(dir), 0o022);
}

/** Checks an existing directory as privateDir does (without creating it). */
export function checkPrivateDir(dir: string, fix: string): void {
  const why = privateDirProblem(dir);
  if (why !== null) throw new UserError(`${dir} ${why}, so vecbench will not use it; remove it, or ${fix}`);
}

/** Writes a new file exclusively (mode 0600), never through a link: an existing entry of that
 * name (a stale file, a planted link) is removed first, and a race that re-creates it fails. */
export function writeNewPrivateFile(path: string, text: string): void {
  try {
    unlinkSync(path);
  } catch {
    // absent
  }
  const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
}

/** Reads a file of a private directory, or null when it is not a regular file of this user's
 * (a link, another user's file) or cannot be read. */
export function readOwnFile(path: string): string | null {
  try {
    const st = lstatSync(path);
    const me = process.getuid?.();
    if (!st.isFile() || (me !== undefined && st.uid !== me)) return null;
    const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      return readFileSync(fd, 'utf8');
    } finally {
      closeSync(fd);
    }
  } catch {
    return null;
  }
}
