// Where a server participant's data directory lives. Normally in the run's work directory
// (`<work>/server`, inside the engine home under --out). A server that runs as another user
// (PostgreSQL started by root runs as `postgres`) cannot use it when an ancestor of --out is
// closed to that user (any clone under /root, 0700): its data then goes to a directory of its
// own under a base every user can traverse, `/var/tmp/vecbench-<uid>/` ($VECBENCH_SERVER_DATA
// overrides), created 0700 and owned by the server's user. `<work>/server` becomes a symbolic
// link to it: that link is the record a resumed run, a cold start and the cleanup follow. Each
// such directory has a claim file beside it (`<dir>.json`: the link and the runner's PID and
// start time), so data whose engine home was deleted by hand is reaped by the next run.
import {
  chmodSync,
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  type Stats,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { UserError } from '../util/errors.ts';
import { privateDirProblem } from '../util/private-dir.ts';
import { isRunning as processAlive, startTicks as processStartTicks } from '../util/proc.ts';

/** The system user a server runs as when it is not this process's (ServerLifecycle.runsAs). */
export interface ServerUser {
  name: string;
  uid: number;
  gid: number;
}

/** The data directory's name in a work directory (a directory, or the link to a relocated one). */
const SERVER_DIR = 'server';

interface Claim {
  link: string;
  runner: number;
  runnerStart: number | null;
  created: string;
}

/** The base of relocated server data directories. */
export function serverDataBase(): string {
  return resolve(process.env.VECBENCH_SERVER_DATA ?? `/var/tmp/vecbench-${process.getuid?.() ?? 'user'}`);
}

/** The first ancestor of path that user cannot traverse (no x bit for it), or null. Only the
 * primary group is considered: a directory open to a supplementary group counts as closed. */
function closedAncestor(path: string, user: ServerUser): string | null {
  for (let dir = dirname(resolve(path)); ; dir = dirname(dir)) {
    let st;
    try {
      st = statSync(dir);
    } catch {
      st = null; // not created yet: mkdir will make it 0755
    }
    if (st) {
      const bit = st.uid === user.uid ? 0o100 : st.gid === user.gid ? 0o010 : 0o001;
      if ((st.mode & bit) === 0) return dir;
    }
    if (dirname(dir) === dir) return null;
  }
}

/** Throws a UserError when a server running as user cannot reach dir (the adapter's check, for
 * a data directory it is given: the runner's come from makeServerDataDir and pass it). */
export function checkReachable(dir: string, user: ServerUser): void {
  const closed = closedAncestor(dir, user);
  if (closed)
    throw new UserError(
      `the ${user.name} server cannot reach its data directory ${dir}: ${closed} is closed to it; give it a directory it can reach (vecbench run does: docs/runs.md, "Server data outside --out") or chmod o+x ${closed}`,
    );
}

/** The base, created 0711 (others may traverse, not list). In /var/tmp anyone may create it
 * first: it is used only when it is a real directory of this user that nobody else can write. */
/** The base must be a directory of this user's that only this user can write (not a link). */
function checkPrivateBase(base: string): Stats {
  if (privateDirProblem(base) !== null) {
    throw new UserError(
      `${base} (where server data goes when --out is closed to the server's user) is not a directory of yours that only you can write; remove it, or set VECBENCH_SERVER_DATA to a directory of your own`,
    );
  }
  return lstatSync(base);
}

function ensureBase(user: ServerUser): string {
  const base = serverDataBase();
  mkdirSync(base, { recursive: true, mode: 0o711 });
  const st = checkPrivateBase(base);
  if ((st.mode & 0o777) !== 0o711) chmodSync(base, 0o711);
  const closed = closedAncestor(join(base, 'x'), user);
  if (closed)
    throw new UserError(
      `the ${user.name} server cannot reach ${base}: ${closed} is closed to other users; set VECBENCH_SERVER_DATA to a directory under one it can traverse (e.g. /var/tmp/vecbench)`,
    );
  return base;
}

/**
 * A fresh, empty data directory for a server started on new data, for work directory workDir:
 * `<work>/server` itself when the server runs as this process's user or can reach it, else a new
 * directory under the base (0700, owned by the server's user) that `<work>/server` links to.
 * label (dataset and participant) names the relocated directory for a reader of the base.
 */
export function makeServerDataDir(workDir: string, user: ServerUser | null, label: string): string {
  const inWork = join(workDir, SERVER_DIR);
  removeServerData(workDir);
  rmSync(inWork, { recursive: true, force: true });
  removeSideFiles(inWork);
  if (!user || closedAncestor(inWork, user) === null) {
    mkdirSync(inWork, { recursive: true });
    return inWork;
  }
  const base = ensureBase(user);
  const dir = mkdtempSync(join(base, `${label.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 80)}-`));
  const claim: Claim = { link: resolve(inWork), runner: process.pid, runnerStart: processStartTicks(process.pid), created: new Date().toISOString() };
  writeFileSync(`${dir}.json`, JSON.stringify(claim));
  chownSync(dir, user.uid, user.gid);
  mkdirSync(workDir, { recursive: true });
  symlinkSync(dir, inWork);
  return dir;
}

/** Where `<work>/server` links to, and whether that is inside the base; null when it is a plain
 * directory or absent. */
function linkOf(workDir: string): { target: string; inBase: boolean } | null {
  const inWork = join(workDir, SERVER_DIR);
  let st;
  try {
    st = lstatSync(inWork);
  } catch {
    return null;
  }
  if (!st.isSymbolicLink()) return null;
  const target = resolve(dirname(inWork), readlinkSync(inWork));
  return { target, inBase: dirname(target) === serverDataBase() };
}

/** The data directory a previous start left for workDir (to start the server on existing data),
 * or a fresh one when there is none. */
export function existingServerDataDir(workDir: string, user: ServerUser | null, label: string): string {
  const inWork = join(workDir, SERVER_DIR);
  const link = linkOf(workDir);
  if (link) {
    if (!link.inBase)
      throw new UserError(
        `${inWork} links to ${link.target}, outside ${serverDataBase()} where vecbench keeps server data (was VECBENCH_SERVER_DATA changed?); remove ${workDir} and run again`,
      );
    if (!existsSync(link.target)) throw new Error(`the server data ${inWork} links to is gone (${link.target})`);
    return link.target;
  }
  return existsSync(inWork) ? inWork : makeServerDataDir(workDir, user, label);
}

/** A file a participant keeps beside a server's data directory, not in it (a password, a config
 * holding one): its size is not the engine's disk use, and it goes when the directory goes. */
export function serverSideFile(dataDir: string, name: string): string {
  if (!/^[a-z0-9][a-z0-9.-]*$/.test(name)) throw new Error(`bad server side-file name "${name}"`);
  return `${dataDir}.side-${name}`;
}

function removeSideFiles(dataDir: string): void {
  const prefix = `${basename(dataDir)}.side-`;
  let names: string[];
  try {
    names = readdirSync(dirname(dataDir));
  } catch {
    return;
  }
  for (const f of names) if (f.startsWith(prefix)) rmSync(join(dirname(dataDir), f), { force: true });
}

/** Removes the relocated directory `<work>/server` links to, with its claim and the link.
 * Called wherever a work directory's data is removed. A link outside the base is never
 * followed: only the link goes. */
export function removeServerData(workDir: string): void {
  const link = linkOf(workDir);
  if (!link) return;
  if (link.inBase) {
    rmSync(link.target, { recursive: true, force: true });
    rmSync(`${link.target}.json`, { force: true });
    removeSideFiles(link.target);
  }
  rmSync(join(workDir, SERVER_DIR), { force: true });
}

/** Removes relocated directories nobody claims any more: their runner is gone and their link no
 * longer points at them (the engine home was deleted, or started afresh). Returns them. */
export function reapServerData(): string[] {
  const base = serverDataBase();
  if (!existsSync(base)) return [];
  // The checks of ensureBase again: nothing is removed inside a directory another user made.
  checkPrivateBase(base);
  const reaped: string[] = [];
  for (const f of readdirSync(base)) {
    if (!f.endsWith('.json')) continue;
    const dir = join(base, f.slice(0, -'.json'.length));
    let claim: Claim | null = null;
    try {
      claim = JSON.parse(readFileSync(`${dir}.json`, 'utf8')) as Claim;
    } catch {
      claim = null; // unreadable: nobody can follow it
    }
    if (claim && processAlive(claim.runner) && processStartTicks(claim.runner) === claim.runnerStart) continue;
    let linked = false;
    try {
      linked = claim !== null && resolve(dirname(claim.link), readlinkSync(claim.link)) === dir;
    } catch {
      linked = false;
    }
    if (linked) continue;
    rmSync(dir, { recursive: true, force: true });
    rmSync(`${dir}.json`, { force: true });
    removeSideFiles(dir);
    reaped.push(basename(dir));
  }
  return reaped;
}
