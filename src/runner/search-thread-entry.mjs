// Worker-thread entry of the search threads (search-threads.ts). Plain JavaScript so it can load
// the TypeScript worker through tsx however the process was started (worker threads do not
// inherit a loader registered through tsx's API). Messages sent meanwhile wait on the port
// until search-thread.ts listens.
const { register } = await import('tsx/esm/api');
register();
await import('./search-thread.ts');
