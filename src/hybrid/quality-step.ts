// Answer quality as a run step (src/runner/feature.ts): after a participant's groups, on a
// dataset with relevance labels, the dense, keyword and fused arms (quality-run.ts).
import { HostError } from '../runner/client.ts';
import type { RunStep } from '../runner/feature.ts';
import { log } from '../util/progress.ts';
import { DEFAULT_QUALITY_K, measureQuality } from './quality-run.ts';

/** k: results asked of each arm (--quality-k, default 100). */
export function qualityStep(k?: number): RunStep {
  return {
    name: 'answer quality',
    pending: (result, ds) => ds.labels !== undefined && result.extra.quality === undefined,
    async run({ engine, p, ds, result, clients, pointTimeoutS, save }) {
      try {
        result.extra.quality = await measureQuality(() => engine.ready('engine restarted'), p, ds, { clients, pointTimeoutS, qualityK: k });
      } catch (e) {
        if (!(e instanceof HostError) || e.userError) throw e;
        result.extra.quality = {
          format: 'vecbench-quality/1',
          status: 'failed',
          reason: e.message,
          k: k ?? DEFAULT_QUALITY_K,
          queries: 0,
          labels: '',
          keyword: null,
          fusion: null,
          oracle: null,
          points: [],
          unsupported: [],
        };
        log(`${p.name}: answer quality failed: ${e.message}`);
      }
      save();
    },
  };
}
