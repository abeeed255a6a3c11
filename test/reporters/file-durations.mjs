// A node:test reporter that writes one JSON line per test file: its path, the summed duration
// of its top-level tests, and how many of them passed and failed. scripts/test.mjs reads the
// lines to print each tier's slowest files.
export default async function* fileDurations(source) {
  const files = new Map();
  for await (const event of source) {
    if ((event.type !== 'test:pass' && event.type !== 'test:fail') || event.data.nesting !== 0) continue;
    const file = event.data.file ?? '?';
    const f = files.get(file) ?? { file, ms: 0, pass: 0, fail: 0 };
    f.ms += event.data.details?.duration_ms ?? 0;
    if (event.type === 'test:pass') f.pass++;
    else f.fail++;
    files.set(file, f);
  }
  for (const f of files.values()) yield `${JSON.stringify(f)}\n`;
}
