// The concurrency sweep and the open loop as a run step (src/runner/feature.ts): after a
// participant's groups, when `vecbench run --concurrency / --open-loop` asks for them (sweep.ts).
import { HostError } from '../runner/client.ts';
import type { RunStep } from '../runner/feature.ts';
import { log } from '../util/progress.ts';
import type { LoadOptions } from './load-options.ts';
import { measureLoad } from './sweep.ts';

export function loadStep(o: Omit<LoadOptions, 'pointTimeoutS'>): RunStep {
  return {
    name: 'concurrency sweep / open loop',
    pending: (result) =>
      (o.concurrency !== undefined && result.extra.concurrency === undefined) || (o.openLoop !== undefined && result.extra.open_loop === undefined),
    async run({ engine, p, ds, groups, result, pointTimeoutS, save }) {
      try {
        await measureLoad(engine, p, ds, groups, result, { ...o, pointTimeoutS }, save);
      } catch (e) {
        if (!(e instanceof HostError) || e.userError) throw e;
        result.extra.load_error = e.message;
        log(`${p.name}: concurrency sweep / open loop failed: ${e.message}`);
      }
      save();
    },
  };
}
