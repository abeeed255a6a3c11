// debian-packages: a real labelled text corpus built from what every Debian machine already
// has, the package database /var/lib/dpkg/status, with known-item labels. No download.
//
// Documents: every package record with a long description; its text is the package name
// (title) and the long description. Queries: each package's one-line synopsis. Labels
// (graded): 2 = the package the synopsis belongs to; 1 = the other packages built from the
// same source package (libfoo1, libfoo-dev, foo-doc...), which a searcher would also accept.
// A synopsis shared by packages of different sources is ambiguous and dropped as a query.
//
// Real attributes: the label is the package's Section (libs, utils, python...), the measure its
// Installed-Size in KiB; a query carries those of its package.
//
// Limits, read before quoting figures: the labels are derived, not judged by people; the
// synopsis and the description are written by the same maintainer, so they share words more
// than a user's question would (this favours the keyword arm); it is English only; and the
// corpus is whatever this machine has installed (a few hundred to a few thousand packages),
// so two machines give different corpora: the manifest records the status file's sha256 and
// figures compare only on the same hash.
import { readFileSync } from 'node:fs';
import { gloveEmbedder } from '../../embed/glove.ts';
import { UserError } from '../../util/errors.ts';
import { sha256 } from '../../util/hash.ts';
import type { DatasetSource } from '../dataset-source.ts';
import { assembleLabelled, type LabelledCorpus } from '../labelled.ts';

export const DEBIAN_STATUS = '/var/lib/dpkg/status';
export const DEBIAN_DATASET = 'debian-packages';

interface PackageRecord {
  name: string;
  arch: string;
  source: string;
  synopsis: string;
  long: string;
  /** Section, or "unknown" when the record has none. */
  section: string;
  /** Installed-Size in KiB, 0 when the record has none. */
  installedKiB: number;
}

/** Parses deb822 paragraphs of a dpkg status (or Packages) file: name, architecture, source
 * package and the two parts of the description ("." lines are paragraph breaks). */
export function parseStatus(text: string): PackageRecord[] {
  const out: PackageRecord[] = [];
  for (const para of text.split(/\n\s*\n/)) {
    const fields = new Map<string, string[]>();
    let current: string[] | null = null;
    for (const line of para.split('\n')) {
      if (line === '') continue;
      if (line[0] === ' ' || line[0] === '\t') {
        current?.push(line.slice(1));
        continue;
      }
      const colon = line.indexOf(':');
      if (colon < 0) continue;
      current = [line.slice(colon + 1).trim()];
      fields.set(line.slice(0, colon), current);
    }
    const name = fields.get('Package')?.[0];
    const desc = fields.get('Description');
    if (!name || !desc) continue;
    const long = desc
      .slice(1)
      .map((l) => (l.trim() === '.' ? '' : l.trim()))
      .join('\n')
      .replace(/\n{2,}/g, '\n\n')
      .trim();
    const synopsis = desc[0].trim();
    if (!synopsis || !long) continue;
    // "Source: foo (1.2-3)" names a source with another version; absent means same as name.
    const source = (fields.get('Source')?.[0] ?? name).split(' ')[0];
    const size = Number(fields.get('Installed-Size')?.[0]);
    out.push({
      name,
      arch: fields.get('Architecture')?.[0] ?? 'all',
      source,
      synopsis,
      long,
      section: fields.get('Section')?.[0] || 'unknown',
      installedKiB: Number.isInteger(size) && size >= 0 && size <= 0x7fffffff ? size : 0,
    });
  }
  return out;
}

export function debianCorpus(statusText: string, origin = DEBIAN_STATUS): LabelledCorpus {
  const records = parseStatus(statusText);
  const names = new Map<string, number>();
  for (const r of records) names.set(r.name, (names.get(r.name) ?? 0) + 1);
  // Multi-arch copies of one package (libc6:amd64, libc6:i386) need ids of their own.
  const idOf = (r: PackageRecord) => ((names.get(r.name) ?? 0) > 1 ? `${r.name}:${r.arch}` : r.name);
  const seen = new Set<string>();
  const recs = records.filter((r) => {
    const id = idOf(r);
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
  if (recs.length < 3)
    throw new UserError(`${origin} describes ${recs.length} packages; the ${DEBIAN_DATASET} corpus needs a Debian package database with at least 3`);
  const bySource = new Map<string, string[]>();
  for (const r of recs) {
    const list = bySource.get(r.source) ?? [];
    list.push(idOf(r));
    bySource.set(r.source, list);
  }
  const sourcesOfSynopsis = new Map<string, Set<string>>();
  for (const r of recs) {
    const key = r.synopsis.toLowerCase();
    const s = sourcesOfSynopsis.get(key) ?? new Set<string>();
    s.add(r.source);
    sourcesOfSynopsis.set(key, s);
  }
  const sections = [...new Set(recs.map((r) => r.section))].sort();
  const sectionOf = new Map(sections.map((x, i) => [x, i]));
  const real = (r: PackageRecord) => ({ label: sectionOf.get(r.section)!, measure: r.installedKiB });
  const docs = recs.map((r) => ({ id: idOf(r), title: r.name, text: r.long, ...real(r) }));
  const queries: LabelledCorpus['queries'] = [];
  const qrels = new Map<string, Map<string, number>>();
  const asked = new Set<string>();
  for (const r of recs) {
    const key = r.synopsis.toLowerCase();
    if (sourcesOfSynopsis.get(key)!.size > 1 || asked.has(key)) continue;
    asked.add(key);
    const qid = `q:${idOf(r)}`;
    const judged = new Map<string, number>();
    for (const sibling of bySource.get(r.source)!) judged.set(sibling, 1);
    // Packages of one source sharing this synopsis are all the known item.
    for (const other of recs) if (other.source === r.source && other.synopsis.toLowerCase() === key) judged.set(idOf(other), 2);
    queries.push({ id: qid, text: r.synopsis, ...real(r) });
    qrels.set(qid, judged);
  }
  return {
    origin,
    docs,
    queries,
    qrels,
    real: { labels: sections, measure: 'installed size, KiB' },
    source: {
      generator: DEBIAN_DATASET,
      status_file: origin,
      status_sha256: sha256(statusText),
      packages: docs.length,
      labels: 'known-item: 2 = the package of the synopsis, 1 = other packages of its source package',
      real_attributes: "label: the package's Section; measure: its Installed-Size (KiB)",
    },
  };
}

export const debianPackagesSource: DatasetSource = {
  pattern: DEBIAN_DATASET,
  describe: `package descriptions of this Debian machine (${DEBIAN_STATUS}) with known-item labels (synopsis -> package), GloVe-embedded; for hybrid search and answer quality`,
  size: "this machine's packages x 100, ~1 query each, text, labels",
  metric: 'cosine',
  origin: `local: ${DEBIAN_STATUS}`,
  matches: (name) => name === DEBIAN_DATASET,
  make: async () => {
    const path = process.env.VECBENCH_DPKG_STATUS ?? DEBIAN_STATUS;
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (e) {
      throw new UserError(
        `${DEBIAN_DATASET} is built from ${path}, which cannot be read (${(e as Error).message.split('\n')[0]}); run it on a Debian machine or point VECBENCH_DPKG_STATUS at a dpkg status file`,
      );
    }
    return assembleLabelled(debianCorpus(text, path), gloveEmbedder());
  },
};
