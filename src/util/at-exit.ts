// Clean-up that must happen however the process ends: a normal end, an error the CLI turns
// into an exit code, or SIGINT / SIGTERM (the CLI's handlers call process.exit, which skips
// every pending finally block but still emits 'exit'). Tasks are synchronous, as 'exit' needs.
const tasks = new Set<() => void>();
let installed = false;

/** Runs task when the process exits; the returned function cancels it (call it once the
 * clean-up happened the ordinary way). */
export function atExit(task: () => void): () => void {
  if (!installed) {
    installed = true;
    process.on('exit', () => {
      for (const t of [...tasks]) {
        try {
          t();
        } catch {
          // One failed clean-up must not stop the others.
        }
      }
      tasks.clear();
    });
  }
  tasks.add(task);
  return () => {
    tasks.delete(task);
  };
}

/** Lets the event loop run once, so a SIGINT / SIGTERM that arrived during a long synchronous
 * stretch (a prepare writing block after block) is acted on now rather than when it ends. */
export function yieldToSignals(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
