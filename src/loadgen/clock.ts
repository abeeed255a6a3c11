// One clock for every thread of the load generator: CLOCK_MONOTONIC through process.hrtime,
// which worker threads share with their process (performance.now() has a per-thread origin, so
// an open-loop schedule written by one thread could not be read by another).
export function nowMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}
