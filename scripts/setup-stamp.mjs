// Whether `npm run setup` has run on this machine with the current setup scripts. scripts/setup.sh
// writes the stamp when it succeeds (`node scripts/setup-stamp.mjs write`); `npm test` reads it
// (scripts/test.mjs): a machine whose stamp is missing, or was written by other scripts, is set up
// again (as root) or told to run `sudo npm run setup`. The stamp names the scripts' sha256, so
// editing scripts/setup.sh or a participant's provision.sh asks for the setup again.
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cache = process.env.VECBENCH_CACHE ?? '/var/cache/vecbench';
const STAMP = path.join(cache, 'setup.json');

/** The setup scripts (scripts/setup.sh, every participant's provision.sh and the bench's) and
 * the pinned requirements they install. */
function scripts() {
  const dir = path.join(root, 'participants');
  const provisions = readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => path.join('participants', e.name, 'provision.sh'))
    .filter((rel) => {
      try {
        readFileSync(path.join(root, rel));
        return true;
      } catch {
        return false;
      }
    })
    .sort();
  // What the provisions install from: a changed pin asks for the setup again too.
  const pins = [
    ...readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => path.join('participants', e.name, 'requirements.txt')),
    ...readdirSync(path.join(root, 'bench', 'native'))
      .filter((f) => f.endsWith('.requirements.txt'))
      .map((f) => path.join('bench', 'native', f)),
  ].filter((rel) => {
    try {
      readFileSync(path.join(root, rel));
      return true;
    } catch {
      return false;
    }
  });
  return ['scripts/setup.sh', ...provisions, 'bench/native/provision.sh', ...pins.sort()];
}

function scriptsHash() {
  const h = createHash('sha256');
  for (const rel of scripts())
    h.update(`${rel}\0`)
      .update(readFileSync(path.join(root, rel)))
      .update('\0');
  return h.digest('hex');
}

/** Null when the setup ran with these scripts; else why it is needed. */
export function setupProblem() {
  let stamp;
  try {
    stamp = JSON.parse(readFileSync(STAMP, 'utf8'));
  } catch {
    return `the machine is not set up (no ${STAMP})`;
  }
  return stamp.scripts_sha256 === scriptsHash() ? null : 'the setup scripts changed since the last setup';
}

export function writeStamp() {
  mkdirSync(cache, { recursive: true });
  const tmp = `${STAMP}.tmp-${process.pid}`;
  writeFileSync(tmp, `${JSON.stringify({ scripts_sha256: scriptsHash(), at: new Date().toISOString() })}\n`);
  renameSync(tmp, STAMP);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv[2] === 'write') writeStamp();
  else {
    const problem = setupProblem();
    process.stdout.write(`${problem ?? 'set up'}\n`);
    process.exit(problem === null ? 0 : 1);
  }
}
