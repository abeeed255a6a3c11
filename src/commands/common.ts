// Shared option parsing for the command modules.
import { InvalidArgumentError } from 'commander';
import { resolve } from 'node:path';

export const dataDir = (o: { data?: string }) => resolve(o.data ?? process.env.VECBENCH_DATA ?? '.vecbench/data');
export const outDir = (o: { out?: string }) => resolve(o.out ?? 'results');

export function positiveInt(name: string) {
  return (v: string) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError(`${name} must be a positive integer`);
    return n;
  };
}

export function list(v: string): string[] {
  return v.split(',').map((s) => s.trim()).filter(Boolean);
}
