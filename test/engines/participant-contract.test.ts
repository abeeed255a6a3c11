// The contract suite (test/contract/suite.ts) over participants/_template,
// participants/_template-python and participants/_template-java by their path, and over every
// participant the registry lists that does not run it in its own file: a participant written
// from the template passes the same checks as the others. Adding a participant adds its checks
// here with no edit.
//
// One load per engine: the participants named in SHARED_IN_OWN_FILE (test/contract/suite.ts) run
// the suite in their own file (test/engines/participant-<name>.test.ts) on the engine that file
// loads: the read checks, the file's own tests, then the write checks and the reopen. A test
// below holds every listed participant to exactly one of the two places. To run the contract
// checks of such a participant alone, run its own file with a name pattern:
//   node --import tsx --test --test-name-pattern='^contract: hnswlib' test/engines/participant-hnswlib.test.ts
// (VECBENCH_CONTRACT=hnswlib here only says where its checks live.)
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { listParticipants, loadParticipant, PARTICIPANTS_DIR } from '../../src/runner/participants.ts';
import { contractSuite, SHARED_IN_OWN_FILE } from '../contract/suite.ts';

const TEMPLATE = join(PARTICIPANTS_DIR, '_template');
/** The template of a participant whose host is in Python (the participant protocol). */
const TEMPLATE_PYTHON = join(PARTICIPANTS_DIR, '_template-python');
/** The template of a participant whose host is in Java (the participant protocol). */
const TEMPLATE_JAVA = join(PARTICIPANTS_DIR, '_template-java');
const ENGINE_TESTS = dirname(fileURLToPath(import.meta.url));

test('the registry skips directories starting with _ (the template is no participant)', async () => {
  assert.ok(existsSync(join(TEMPLATE, 'adapter.ts')), 'participants/_template/adapter.ts exists');
  assert.ok(!listParticipants().some((n) => n.startsWith('_')), `listed: ${listParticipants().join(', ')}`);
  await assert.rejects(loadParticipant('_template'), /unknown participant "_template"/);
  const dir = mkdtempSync(join(tmpdir(), 'vecbench-registry-'));
  try {
    for (const name of ['_draft', 'real', 'no-adapter']) mkdirSync(join(dir, name));
    writeFileSync(join(dir, '_draft', 'adapter.ts'), '');
    writeFileSync(join(dir, 'real', 'adapter.ts'), '');
    assert.deepEqual(listParticipants(dir), ['real']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

const templates: Record<string, string> = { _template: TEMPLATE, '_template-python': TEMPLATE_PYTHON, '_template-java': TEMPLATE_JAVA };
/** The participants this file runs the suite over: the templates and every listed participant
 * whose own file does not. */
const here = [...Object.keys(templates), ...listParticipants().filter((n) => !Object.hasOwn(SHARED_IN_OWN_FILE, n))];

test('every listed participant gets the contract checks exactly once: in its own file (SHARED_IN_OWN_FILE) or in this one', () => {
  const listed = listParticipants();
  for (const [name, file] of Object.entries(SHARED_IN_OWN_FILE)) {
    assert.ok(listed.includes(name), `SHARED_IN_OWN_FILE names ${name}, which the registry does not list`);
    const path = join(ENGINE_TESTS, file);
    assert.ok(existsSync(path), `SHARED_IN_OWN_FILE names test/engines/${file} for ${name}; it does not exist`);
    const text = readFileSync(path, 'utf8');
    assert.ok(text.includes('contractSuite('), `test/engines/${file} does not call contractSuite(, yet ${name}'s checks are left to it`);
    assert.ok(text.includes(`'${name}'`), `test/engines/${file} does not name ${name}`);
    for (const part of ['reads', 'writes']) assert.ok(text.includes(`part: '${part}'`), `test/engines/${file} does not run the suite's ${part}`);
  }
  for (const name of listed) {
    const times = (Object.hasOwn(SHARED_IN_OWN_FILE, name) ? 1 : 0) + here.filter((n) => n === name).length;
    assert.equal(times, 1, `${name} gets the contract checks ${times} times`);
  }
  // Every participant file that calls the suite is named in the list, so none runs it twice.
  for (const file of listed.map((n) => `participant-${n}.test.ts`)) {
    const path = join(ENGINE_TESTS, file);
    if (!existsSync(path) || !readFileSync(path, 'utf8').includes('contractSuite(')) continue;
    assert.ok(Object.values(SHARED_IN_OWN_FILE).includes(file), `test/engines/${file} calls contractSuite( but is not in SHARED_IN_OWN_FILE`);
  }
});

// Filtered with VECBENCH_CONTRACT=name,name (e.g. to run one participant's checks while
// writing it); everything by default.
const only = process.env.VECBENCH_CONTRACT?.split(',').filter((s) => s !== '');
for (const name of only ?? []) {
  if (Object.hasOwn(SHARED_IN_OWN_FILE, name)) {
    const file = SHARED_IN_OWN_FILE[name];
    test(`contract: ${name} runs in test/engines/${file}`, {
      skip: `run it there: node --import tsx --test --test-name-pattern='^contract: ${name}' test/engines/${file}`,
    }, () => {});
  }
}
for (const name of here) {
  if (only && !only.includes(name)) continue;
  contractSuite(name, templates[name] ?? join(PARTICIPANTS_DIR, name));
}
