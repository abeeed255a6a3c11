// Load clients for test/e2e/loadgen.test.ts, built inside the load generator's worker threads like
// a participant's. They answer without a server; each does one thing on purpose:
// - stall: blocks its thread once (a synchronous busy wait of `ms`, at the `at`-th request);
// - burn: spends `ms` of CPU in the client thread on every request (a deliberately slow client);
// - wait: waits `ms` without using CPU (a slow engine behind an idle client).
import type { CreateLoadClient, LoadClient } from '../../src/contracts.ts';

export interface TestClientOptions {
  behaviour: 'stall' | 'burn' | 'wait';
  ms: number;
  at?: number;
}

function spin(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    /* busy */
  }
}

export const createLoadClient: CreateLoadClient = async (options) => {
  const o = options as TestClientOptions;
  let calls = 0;
  const client: LoadClient = {
    async setKnobs() {},
    async search(r) {
      const n = calls++;
      if (o.behaviour === 'stall' && n === (o.at ?? 0)) spin(o.ms);
      if (o.behaviour === 'burn') spin(o.ms);
      if (o.behaviour === 'wait') await new Promise((res) => setTimeout(res, o.ms));
      return [Math.round(r.vector[0])];
    },
    async close() {},
  };
  return client;
};
