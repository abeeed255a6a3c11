// TEMPLATE PARTICIPANT IN PYTHON: copy this directory to participants/<name>/ for an engine that
// is a Python library. The registry skips directories whose name starts with `_`; the contract
// suite tests this one by its path, so it always works as shipped.
//
// This file declares what the harness must know before the host starts (the settings schema,
// which filters the engine takes, how it starts); the engine is driven by host.py, in Python,
// over the participant protocol (docs/protocol.md, "The participant protocol").
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import * as sdk from '../../src/sdk/index.ts';

// REPLACE: the directory name, also in provision.sh.
const NAME = '_template-python';

// REPLACE: the engine's index parameters as settings.json's `index` holds them
// (sdk.settingsObject: an unknown key is an error naming it).
const settingsSchema = sdk.settingsObject({
  /** How many lists (centroids) build makes. */
  lists: sdk.intSetting(1, 65_536, 16),
});

/** The interpreter of the participant's own virtual environment (provision.sh makes it). */
function python(): string {
  const venv = join(process.env.VECBENCH_CACHE ?? '/var/cache/vecbench', 'venv', NAME);
  if (!existsSync(join(venv, '.vecbench-requirements')))
    throw new sdk.SetupNeeded(`the Python environment of ${NAME} is not installed (${venv}; participants/${NAME}/provision.sh makes it)`);
  return join(venv, 'bin', 'python');
}

export default sdk.foreignParticipant({
  name: NAME,
  engine: 'template (Python inverted file)', // REPLACE
  settingsSchema,
  // REPLACE: the knobs the host applies; the harness checks them first.
  knobs: (settings) => ({ probes: sdk.intKnob(1, settings.lists, 'index.lists') }),
  filters: sdk.EVERY_FILTER,
  filterStrategy: 'a mask over the rows of the probed lists (exact within them)', // REPLACE
  reopen: true,
  // One query at a time per host (Python's GIL); the harness's search threads each run a host
  // of their own on a copy of the shard, so the engine gets a thread per core.
  concurrency: 'processes',
  host: () => sdk.pythonHost(import.meta.url, python()),
});
