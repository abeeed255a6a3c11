// The features that plug into the runner (src/runner/feature.ts): the messages each handles in
// the participant host, and the steps a run takes after each participant's groups. The runner
// imports none of them; the host's entry (host-main.ts) and `vecbench run` read this list.
import { churnHost } from './churn/host-side.ts';
import { qualityHost } from './hybrid/host-side.ts';
import { loadgenHost } from './loadgen/host-side.ts';
import type { LoadOptions } from './loadgen/load-options.ts';
import type { HostFeature, RunStep } from './runner/feature.ts';

export const HOST_FEATURES: readonly HostFeature[] = [churnHost, qualityHost, loadgenHost];

/** What `vecbench run` asks of the features after each participant's groups. */
export interface StepOptions {
  /** Answer quality on a dataset with relevance labels (--no-quality turns it off). */
  quality: boolean;
  /** Results asked of each quality arm (--quality-k). */
  qualityK?: number;
  /** The concurrency sweep and / or open loop (--concurrency, --open-loop). */
  load?: Omit<LoadOptions, 'pointTimeoutS'>;
}

/** The run's steps, in the order they measure; loaded only when a run asks for them. */
export async function runSteps(o: StepOptions): Promise<RunStep[]> {
  const steps: RunStep[] = [];
  if (o.quality) steps.push((await import('./hybrid/quality-step.ts')).qualityStep(o.qualityK));
  if (o.load) steps.push((await import('./loadgen/load-step.ts')).loadStep(o.load));
  return steps;
}
