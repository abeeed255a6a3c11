// Resumable downloads with progress and a sha256 check, for the datasets that live on the
// internet. A file downloads into `<name>.part`; an interruption keeps the part, and the next
// attempt (a retry, or the next `vecbench prepare`) asks the server for the rest with an HTTP
// Range request. When the publisher gives a sha256 (Hugging Face's LFS object id is one) the
// finished file must match it; when it gives none, the first complete download's sha256 is
// recorded beside the file and in the dataset manifest (trust on first use).
import { createHash } from 'node:crypto';
import { closeSync, createReadStream, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { Agent, interceptors, request, type Dispatcher } from 'undici';
import { UserError } from '../../util/errors.ts';
import { writeJsonAtomic } from '../../util/atomic.ts';
import { Progress, log } from '../../util/progress.ts';

interface RemoteFile {
  url: string;
  /** Local path of the finished file. */
  path: string;
  /** The publisher's sha256, when it gives one. */
  sha256?: string;
  /** The publisher's size in bytes, when known. */
  bytes?: number;
}

export interface Downloaded {
  path: string;
  url: string;
  bytes: number;
  sha256: string;
  /** "pinned": matched the publisher's sha256; "recorded": first download, none published. */
  check: 'pinned' | 'recorded';
}

let agent: Dispatcher | null = null;
function dispatcher(): Dispatcher {
  // Hugging Face answers file URLs with a redirect to its CDN.
  agent ??= new Agent({ connect: { timeout: 30_000 }, headersTimeout: 60_000, bodyTimeout: 120_000 }).compose(interceptors.redirect({ maxRedirections: 8 }));
  return agent;
}

const MB = 2 ** 20;
const fmtMB = (b: number) => `${(b / MB).toFixed(2)} MB`;

async function hashPrefix(path: string): Promise<ReturnType<typeof createHash>> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 22 })) h.update(chunk as Buffer);
  return h;
}

/** Sidecar written when a file is complete: its size and sha256, so later prepares need not
 * hash it again. */
function sidecarPath(path: string): string {
  return `${path}.sha256.json`;
}

function readSidecar(path: string): { bytes: number; sha256: string; url: string } | null {
  try {
    const s = JSON.parse(readFileSync(sidecarPath(path), 'utf8')) as { bytes: number; sha256: string; url: string };
    if (typeof s.sha256 === 'string' && typeof s.bytes === 'number' && statSync(path).size === s.bytes) return s;
  } catch {
    // absent or unreadable: hash again
  }
  return null;
}

interface DownloadOptions {
  quiet?: boolean;
  /** Attempts within this call before giving up (each resumes the part). */
  attempts?: number;
  /** Wait between attempts, ms. */
  retryDelayMs?: number;
}

/** Downloads `file` unless it is already complete; resumes a part left by an interruption. */
export async function download(file: RemoteFile, opts: DownloadOptions = {}): Promise<Downloaded> {
  const { url, path } = file;
  const side = existsSync(path) ? readSidecar(path) : null;
  if (side) {
    if (file.sha256 && side.sha256 !== file.sha256) {
      rmSync(path, { force: true });
      rmSync(sidecarPath(path), { force: true });
    } else {
      return { path, url, bytes: side.bytes, sha256: side.sha256, check: file.sha256 ? 'pinned' : 'recorded' };
    }
  }
  mkdirSync(dirname(path), { recursive: true });
  const part = `${path}.part`;
  if (existsSync(path) && !existsSync(part)) renameSync(path, part); // a finished file without a sidecar is checked again
  const attempts = opts.attempts ?? 4;
  let lastError = '';
  for (let attempt = 1; attempt <= attempts; attempt++) {
    try {
      const done = await fetchInto(file, part, opts.quiet);
      if (done) return finishDownload(file, part, done);
    } catch (e) {
      if (e instanceof UserError) throw e;
      lastError = (e as Error).message ?? String(e);
      const have = existsSync(part) ? statSync(part).size : 0;
      if (attempt < attempts) {
        log(`download ${url}: ${lastError}; resuming from ${fmtMB(have)} (attempt ${attempt + 1} of ${attempts})`);
        await new Promise((r) => setTimeout(r, opts.retryDelayMs ?? 2000 * attempt));
      }
    }
  }
  const have = existsSync(part) ? statSync(part).size : 0;
  throw new UserError(`download of ${url} stopped after ${fmtMB(have)} (${lastError}); the part is kept: run the same command again to resume`);
}

/** One request: appends to the part from where it ends. Returns the sha256 and size when the
 * file is complete. */
async function fetchInto(file: RemoteFile, part: string, quiet?: boolean): Promise<{ sha256: string; bytes: number } | null> {
  let have = existsSync(part) ? statSync(part).size : 0;
  if (file.bytes !== undefined && have > file.bytes) {
    rmSync(part, { force: true });
    have = 0;
  }
  const headers: Record<string, string> = { 'user-agent': 'vecbench' };
  if (have > 0) headers.range = `bytes=${have}-`;
  // Hash the bytes already on disk before asking: once the response starts, its body must be
  // read at once (a body left waiting can be dropped when the connection breaks).
  const prefixHash = have > 0 ? await hashPrefix(part) : null;
  const res = await request(file.url, { method: 'GET', headers, dispatcher: dispatcher() });
  const status = res.statusCode;
  if (status === 416 && have > 0) {
    // The part already holds every byte the server has.
    await res.body.dump();
    return { sha256: prefixHash!.digest('hex'), bytes: have };
  }
  if (status !== 200 && status !== 206) {
    await res.body.dump();
    if (status === 404 || status === 410)
      throw new UserError(`${file.url} answered HTTP ${status} (not found); the file has moved: update the URL in vecbench's registry or report it`);
    if (status === 401 || status === 403)
      throw new UserError(`${file.url} answered HTTP ${status} (access denied); check that the dataset is public and that this machine may reach it`);
    throw new Error(`HTTP ${status}`);
  }
  let start = 0;
  if (status === 206) {
    const range = /bytes (\d+)-(\d+)\/(\d+|\*)/.exec(String(res.headers['content-range'] ?? ''));
    start = range ? Number(range[1]) : -1;
    if (start !== have) {
      await res.body.dump();
      rmSync(part, { force: true });
      throw new Error(`server resumed at byte ${start}, not ${have}; starting again`);
    }
  }
  const length = Number(res.headers['content-length'] ?? NaN);
  const total = Number.isFinite(length) ? start + length : (file.bytes ?? NaN);
  if (file.bytes !== undefined && Number.isFinite(total) && total !== file.bytes) {
    await res.body.dump();
    throw new UserError(`${file.url} has ${total} bytes, vecbench expects ${file.bytes}; the file changed upstream: report it (or update the registry entry)`);
  }
  // Resuming: the hash must cover the bytes already on disk.
  const hash = start > 0 ? prefixHash! : createHash('sha256');
  const fd = openSync(part, start > 0 ? 'a' : 'w');
  let got = start;
  const name = file.path.split('/').slice(-2).join('/');
  const progress = new Progress(`download ${name}`, Number.isFinite(total) ? total : Number.MAX_SAFE_INTEGER, quiet);
  if (start > 0) log(`download ${name}: resuming at ${fmtMB(start)}`);
  try {
    for await (const chunk of res.body) {
      const buf = chunk as Buffer;
      let off = 0;
      while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
      hash.update(buf);
      got += buf.length;
      progress.update(got, `${fmtMB(got)}${Number.isFinite(total) ? ` of ${fmtMB(total)}` : ''}`);
    }
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  if (Number.isFinite(total) && got < total) throw new Error(`connection closed at ${fmtMB(got)} of ${fmtMB(total)}`);
  progress.done(fmtMB(got));
  return { sha256: hash.digest('hex'), bytes: got };
}

function finishDownload(file: RemoteFile, part: string, done: { sha256: string; bytes: number }): Downloaded {
  if (file.bytes !== undefined && done.bytes !== file.bytes) {
    rmSync(part, { force: true });
    throw new UserError(`${file.url}: downloaded ${done.bytes} bytes, expected ${file.bytes}; the partial file was deleted: run the same command again`);
  }
  if (file.sha256 && done.sha256 !== file.sha256) {
    rmSync(part, { force: true });
    throw new UserError(
      `${file.url}: sha256 ${done.sha256.slice(0, 12)}... does not match the published ${file.sha256.slice(0, 12)}... (corrupt transfer or changed upstream); the file was deleted: run the same command again`,
    );
  }
  renameSync(part, file.path);
  writeJsonAtomic(sidecarPath(file.path), { url: file.url, bytes: done.bytes, sha256: done.sha256, check: file.sha256 ? 'pinned' : 'recorded' });
  return { path: file.path, url: file.url, bytes: done.bytes, sha256: done.sha256, check: file.sha256 ? 'pinned' : 'recorded' };
}

/** GETs a small JSON document (e.g. a file listing); follows redirects. Returns the body and
 * the `next` page URL from a Link header, if any. */
export async function fetchJson(url: string): Promise<{ body: unknown; next: string | null }> {
  let res: Dispatcher.ResponseData;
  try {
    res = await request(url, { method: 'GET', headers: { 'user-agent': 'vecbench', accept: 'application/json' }, dispatcher: dispatcher() });
  } catch (e) {
    throw new UserError(`${url} cannot be reached (${(e as Error).message}); check this machine's network access, then prepare again`);
  }
  if (res.statusCode !== 200) {
    await res.body.dump();
    throw new UserError(`${url} answered HTTP ${res.statusCode}; check the dataset name and that it is public`);
  }
  const body = await res.body.json();
  const link = String(res.headers.link ?? '');
  const m = /<([^>]+)>\s*;\s*rel="?next"?/.exec(link);
  return { body, next: m ? new URL(m[1], url).toString() : null };
}
