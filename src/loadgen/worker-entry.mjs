// Worker-thread entry of the load generator's client pool (pool.ts). Plain JavaScript so it can
// load the TypeScript worker through tsx however the process was started (the CLI registers tsx
// through its API, which worker threads do not inherit). Messages the pool sends meanwhile
// wait on the port until worker.ts listens.
const { register } = await import('tsx/esm/api');
register();
await import('./worker.ts');
