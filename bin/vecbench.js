#!/usr/bin/env node
// The CLI runs the TypeScript sources directly through tsx: no build step to forget,
// and tests exercise exactly the code users run.
import { register } from 'tsx/esm/api';
register();
await import('../src/cli.ts');
