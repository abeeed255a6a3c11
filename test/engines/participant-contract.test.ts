// The contract suite (test/contract/suite.ts) over every participant the registry lists, and
// over participants/_template by its path: a participant written from the template passes the
// same checks as the others. Adding a participant adds its checks here with no edit.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { listParticipants, loadParticipant, PARTICIPANTS_DIR } from '../../src/runner/participants.ts';
import { contractSuite } from '../contract/suite.ts';

const TEMPLATE = join(PARTICIPANTS_DIR, '_template');
/** The template of a participant whose host is in Python (the participant protocol). */
const TEMPLATE_PYTHON = join(PARTICIPANTS_DIR, '_template-python');

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

// Filtered with VECBENCH_CONTRACT=name,name (e.g. to run one participant's checks while
// writing it); everything by default.
const only = process.env.VECBENCH_CONTRACT?.split(',').filter((s) => s !== '');
const templates: Record<string, string> = { _template: TEMPLATE, '_template-python': TEMPLATE_PYTHON };
for (const name of [...Object.keys(templates), ...listParticipants()]) {
  if (only && !only.includes(name)) continue;
  contractSuite(name, templates[name] ?? join(PARTICIPANTS_DIR, name));
}
