// A local sentence-embedding model (a transformers.js / ONNX export such as
// all-MiniLM-L6-v2), run with transformers.js from local files only: remote loading is
// switched off, so a missing model is an error naming what to put where, never a download.
// The runtime (@huggingface/transformers, which brings onnxruntime-node) is not a vecbench
// dependency: it is large and no npm or Debian package ships model weights to use it with,
// so it is loaded only when a model directory is given and named in the error when absent.
// Mean pooling over tokens, then unit length (the sentence-transformers recipe for MiniLM).
import { existsSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { UserError } from '../util/errors.ts';
import { Progress } from '../util/progress.ts';
import type { TextEmbedder } from './embedder.ts';

const MODEL_FILES = ['config.json', 'tokenizer.json', 'tokenizer_config.json'] as const;
const MODEL_WEIGHTS = ['onnx/model.onnx', 'onnx/model_quantized.onnx'] as const;
const RUNTIME_PACKAGE = '@huggingface/transformers';

const layoutHelp = `a transformers.js model directory holds ${MODEL_FILES.join(', ')} and ${MODEL_WEIGHTS[0]} (or ${MODEL_WEIGHTS[1]}); copy one there from a machine that has it (e.g. an ONNX export of sentence-transformers/all-MiniLM-L6-v2)`;

/** Checks the directory before any runtime is loaded; returns the weights file found. */
export function checkModelDir(dirArg: string): { dir: string; weights: string } {
  const dir = resolve(dirArg);
  if (!existsSync(dir) || !statSync(dir).isDirectory())
    throw new UserError(`--embed model:${dirArg}: no model directory at ${dir}; ${layoutHelp}. vecbench never downloads models`);
  const missing: string[] = MODEL_FILES.filter((f) => !existsSync(join(dir, f)));
  const weights = MODEL_WEIGHTS.find((f) => existsSync(join(dir, f)));
  if (!weights) missing.push(MODEL_WEIGHTS[0]);
  if (missing.length > 0) throw new UserError(`--embed model:${dirArg}: ${dir} lacks ${missing.join(', ')}; ${layoutHelp}. vecbench never downloads models`);
  return { dir, weights: weights! };
}

interface Tensor {
  data: Float32Array;
  dims: number[];
}
type Extractor = (texts: string[], opts: { pooling: 'mean'; normalize: boolean }) => Promise<Tensor>;
interface TransformersModule {
  env: { allowRemoteModels: boolean; allowLocalModels: boolean; localModelPath: string };
  pipeline(task: 'feature-extraction', model: string, opts: Record<string, unknown>): Promise<Extractor>;
}

async function loadRuntime(dirArg: string): Promise<TransformersModule> {
  // A variable specifier keeps TypeScript from requiring the package at build time.
  const name: string = RUNTIME_PACKAGE;
  try {
    return (await import(name)) as TransformersModule;
  } catch (e) {
    throw new UserError(
      `--embed model:${dirArg} needs the transformers.js runtime, which is not installed (${(e as Error).message.split('\n')[0]}); run: npm install --save-exact ${RUNTIME_PACKAGE}, or use --embed glove or precomputed:DIR`,
    );
  }
}

export function transformerEmbedder(dirArg: string): TextEmbedder {
  const { dir, weights } = checkModelDir(dirArg);
  let extractor: Promise<Extractor> | null = null;
  const load = async (): Promise<Extractor> => {
    const tf = await loadRuntime(dirArg);
    tf.env.allowRemoteModels = false;
    tf.env.allowLocalModels = true;
    tf.env.localModelPath = dirname(dir);
    try {
      return await tf.pipeline('feature-extraction', basename(dir), { local_files_only: true, dtype: weights.endsWith('_quantized.onnx') ? 'q8' : 'fp32' });
    } catch (e) {
      throw new UserError(`--embed model:${dirArg}: the model in ${dir} does not load (${(e as Error).message.split('\n')[0]}); ${layoutHelp}`);
    }
  };
  return {
    describe: { embedder: 'transformer', model_dir: dir, weights, runtime: RUNTIME_PACKAGE, pooling: 'mean, unit length' },
    async embed(input, role) {
      extractor ??= load();
      const run = await extractor;
      const n = input.texts.length;
      const progress = new Progress(`embedding ${role} with ${basename(dir)}`, n);
      let out: Float32Array | null = null;
      let d = 0;
      const batch = 32;
      for (let from = 0; from < n; from += batch) {
        const t = await run(input.texts.slice(from, from + batch), { pooling: 'mean', normalize: true });
        d = t.dims[t.dims.length - 1];
        out ??= new Float32Array(n * d);
        out.set(t.data, from * d);
        progress.update(Math.min(n, from + batch));
      }
      progress.done();
      return { vectors: out ?? new Float32Array(0), d };
    },
  };
}
