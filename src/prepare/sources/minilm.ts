// minilm-384: 778 real sentence embeddings (all-MiniLM-L6-v2, 384-d, unit length) of SAP
// Fiori documentation chunks, from the npm package @sap-ux/fiori-docs-embeddings (Apache-2.0):
// data/embeddings/embeddings.bin (raw float32) with each row's text in records.jsonl. 100 rows
// are held out as queries by a seeded choice; the rest keep their text for keyword search.
// The documents are English only: queries carry no language, so the language groups are not
// asked. A small set: groups whose filter keeps fewer than 10 x k rows are not asked either.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../../util/errors.ts';
import type { DatasetSource } from '../dataset-source.ts';
import { FIX_TRUNCATED, inputError } from '../../datasets/readers/common.ts';
import { openRawFloat32 } from '../../datasets/readers/npy.ts';
import { checkPinned, hashInputs, heldOutRows, packageFile, streamRows } from './common.ts';
import { NO_LANGUAGE, PreparedWriter, withWriter } from './writer.ts';

const MINILM_NAME = 'minilm-384';
const MINILM_PACKAGE = '@sap-ux/fiori-docs-embeddings';
const MINILM_VERSION = '1.2.6';
const MINILM_QUERIES = 100;
export const MINILM_SEED = 384;
/** sha256 of @sap-ux/fiori-docs-embeddings@1.2.6's files. */
const PINNED: Record<string, string> = {
  'embeddings.bin': '379f1c1d91bd5e3ff27aadbf8bc093636ee1b5236a61a491d751dada5c0c3c53',
  'records.jsonl': 'a8b669f6d52d630266b61af5bb11f21813ca9bc6468380b3828e24143199c0be',
};

/** The package's data/embeddings directory, or $VECBENCH_MINILM_DIR with the same three files
 * (recorded but not checked against the pins; the tests use it). */
function inputDir(): { dir: string; pinned: boolean } {
  const override = process.env.VECBENCH_MINILM_DIR;
  if (override) return { dir: override, pinned: false };
  const meta = packageFile(MINILM_PACKAGE, 'data/embeddings/metadata.json', `install it: npm install --save-exact ${MINILM_PACKAGE}@${MINILM_VERSION}`);
  return { dir: join(meta, '..'), pinned: true };
}

export const minilmSource: DatasetSource = {
  pattern: MINILM_NAME,
  describe: 'MiniLM sentence embeddings of SAP Fiori docs with their text, from the npm package @sap-ux/fiori-docs-embeddings; 100 held out as queries',
  size: '678 x 384, 100 queries, text',
  metric: 'cosine',
  origin: `npm: ${MINILM_PACKAGE}@${MINILM_VERSION}`,
  matches: (name) => name === MINILM_NAME,
  prepare: async (dataDir, name, opts) => {
    const { dir, pinned } = inputDir();
    const metaPath = join(dir, 'metadata.json');
    const binPath = join(dir, 'embeddings.bin');
    const recPath = join(dir, 'records.jsonl');
    let meta: { dimensions?: number; totalVectors?: number; model?: string };
    try {
      meta = JSON.parse(readFileSync(metaPath, 'utf8'));
    } catch {
      throw new UserError(`${metaPath}: missing or not JSON; reinstall ${MINILM_PACKAGE}@${MINILM_VERSION}`);
    }
    const d = meta.dimensions;
    if (!Number.isInteger(d) || d! <= 0) throw inputError(metaPath, 'has no positive "dimensions"', `reinstall ${MINILM_PACKAGE}`);
    const inputs = await hashInputs([binPath, recPath, metaPath]);
    if (pinned)
      for (const rec of inputs.slice(0, 2))
        checkPinned(rec, PINNED[rec.path.slice(dir.length + 1)], `reinstall it: npm install --save-exact ${MINILM_PACKAGE}@${MINILM_VERSION}`);
    const reader = openRawFloat32(binPath, d!);
    try {
      if (meta.totalVectors !== undefined && meta.totalVectors !== reader.rows) {
        throw inputError(binPath, `has ${reader.rows} rows, metadata.json says ${meta.totalVectors}`, FIX_TRUNCATED);
      }
      const lines = readFileSync(recPath, 'utf8')
        .split('\n')
        .filter((l) => l.trim().length > 0);
      if (lines.length !== reader.rows) throw inputError(recPath, `has ${lines.length} records for ${reader.rows} vectors`, FIX_TRUNCATED);
      const text = lines.map((l, i) => {
        try {
          const r = JSON.parse(l) as { content?: unknown };
          return typeof r.content === 'string' ? r.content : '';
        } catch {
          throw inputError(recPath, `line ${i + 1} is not JSON`, FIX_TRUNCATED);
        }
      });
      const nq = Math.min(MINILM_QUERIES, Math.floor(reader.rows / 5));
      const held = heldOutRows(reader.rows, nq, MINILM_SEED);
      const writer = new PreparedWriter({ dataDir, name, d: d!, metric: 'cosine', rows: reader.rows - nq, hasText: true, quiet: opts?.quiet });
      return await withWriter(writer, async (w) => {
        const { queries } = await streamRows(reader, w, { metric: 'cosine', heldOut: held, textOf: async (from, count) => text.slice(from, from + count) });
        w.setQueries(queries, nq, new Int32Array(nq).fill(NO_LANGUAGE));
        return w.finish({
          langs: ['en'],
          source: {
            kind: 'npm',
            package: `${MINILM_PACKAGE}@${MINILM_VERSION}`,
            model: meta.model ?? 'all-MiniLM-L6-v2',
            inputs,
            pinned,
            queries: `${nq} rows held out by a seeded choice (seed ${MINILM_SEED}), removed from the base set`,
            text: 'records.jsonl "content" of each base row',
            lang: 'one language (English): queries carry none, so the lang/otherlang groups are not asked',
          },
        });
      });
    } finally {
      await reader.close();
    }
  },
};
