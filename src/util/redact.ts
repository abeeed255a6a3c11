// Credentials never leave the process: one redaction layer applied wherever text does (result
// and other JSON files through writeJsonAtomic, the results page, stdout and stderr, which carry
// log lines, progress and error lines). Three rules:
//  1. secrets the process was given (the password of a --connect URL or a VECBENCH_CONNECT_*
//     variable, read from the raw text so that a URL that does not parse is covered too, and
//     the values of the credential variables participants declare in settings.json) are
//     registered and replaced wherever they appear, in any text;
//  2. the password of any URL (scheme://user:password@host) becomes ***;
//  3. values of credential-named keys (password, secret, token, api_key...) become ***, in JSON
//     values, `key=value` text (libpq conninfo, query strings) and quoted JSON text.
// Output is redacted write by write: our own lines are written whole, so a secret is never split.
import { declaredCredentialEnvVars } from './credential-env.ts';

export const MASK = '***';

/** Key names whose values are credentials (exact, or as the last part: db_password, x-api-key). */
const KEY_WORDS = 'password|passwd|pwd|passphrase|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|auth[_-]?token|authorization|credentials?';
const SECRET_KEY = new RegExp(`^(?:.*[_.-])?(?:${KEY_WORDS})$`, 'i');
/** key=value with a credential key (sslpassword=, ?password=, api_key = 'x'). */
const KEY_VALUE = new RegExp(`\\b([\\w.-]*?(?:${KEY_WORDS}))(\\s*=\\s*)('[^']*'|"[^"]*"|[^\\s&;,'"]+)`, 'gi');
/** "key": "value" in JSON text. */
const JSON_PAIR = new RegExp(`("(?:[^"\\\\]*[_.-])?(?:${KEY_WORDS})"\\s*:\\s*)"(?:[^"\\\\]|\\\\.)*"`, 'gi');
/** scheme://user:password@ (the password may hold an unencoded @: the host follows the last). */
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/?#@'"<>]*):([^\s/?#'"<>]*)@/gi;

/** Shorter registered strings would mask ordinary text; rules 2 and 3 still cover them. */
const MIN_SECRET_LENGTH = 4;

/** The environment variable that hands registered secrets to child processes. */
export const SECRETS_ENV = 'VECBENCH_SECRETS';

const secrets = new Set<string>();
let ordered: string[] = [];

/** Registers a secret so that it is masked wherever it appears in text leaving the process. */
export function registerSecret(secret: string | null | undefined): void {
  if (!secret || secret.length < MIN_SECRET_LENGTH || secret === MASK) return;
  const forms = new Set([secret]);
  try {
    const plain = decodeURIComponent(secret);
    // As a URL may carry it: encodeURIComponent's form, and every reserved character escaped.
    for (const f of [plain, encodeURIComponent(plain), strictlyEncoded(plain)]) forms.add(f);
  } catch {
    forms.add(encodeURIComponent(secret));
    forms.add(strictlyEncoded(secret));
  }
  for (const f of forms) if (f.length >= MIN_SECRET_LENGTH) secrets.add(f);
  // Longest first, so a secret containing another is masked whole.
  ordered = [...secrets].sort((a, b) => b.length - a.length);
  // Child processes (participant hosts) inherit them and mask them too; spawnServer strips this
  // variable from the environment of engine servers.
  process.env[SECRETS_ENV] = ordered.join('\n');
}

function strictlyEncoded(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** A scheme and its slashes, also the typos `postgres:/` and `postgres//`; a bare `u:` is not
 * taken for a scheme, since in `u:pw@host` it is the user. */
const SCHEME_PREFIX = /^\s*[A-Za-z][A-Za-z0-9+.-]*(?::\/+|\/\/)/;

/**
 * Where the password of a URL lies in its raw text, whether or not it parses: from the first
 * ':' after the scheme (and user) to the LAST '@' (a password may hold '@', '/', '?', '#').
 * Null when the text has no ':' before its last '@'. Taking too much is safe; too little leaks.
 */
export function rawPasswordSpan(text: string): { start: number; end: number } | null {
  const end = text.lastIndexOf('@');
  if (end < 0) return null;
  const skip = SCHEME_PREFIX.exec(text)?.[0].length ?? 0;
  if (skip > end) return null;
  const colon = text.indexOf(':', skip);
  return colon < 0 || colon >= end ? null : { start: colon + 1, end };
}

/** The text with its raw password span (rawPasswordSpan) replaced by ***. */
function maskRawPassword(text: string): string {
  const span = rawPasswordSpan(text);
  return span && span.end > span.start ? `${text.slice(0, span.start)}${MASK}${text.slice(span.end)}` : text;
}

/** Registers the password (and credential-named query parameters) of a URL: first from the raw
 * text, so that a URL that does not parse (a '/' in the password, a typo in the scheme) is
 * masked in the very message that says so, then from what the parser finds. */
export function registerUrlSecrets(url: string): void {
  const span = rawPasswordSpan(url);
  if (span) registerSecret(url.slice(span.start, span.end));
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return;
  }
  if (u.password) registerSecret(u.password);
  for (const [k, v] of u.searchParams) if (SECRET_KEY.test(k)) registerSecret(v);
}

interface RedactOptions {
  /** Apply rule 3 to free text (key=value and "key": "value"). Off for the page's script, where
   * code like `token=next()` is not a credential (its data is redacted as values instead). */
  keyValues?: boolean;
}

/** Text with every credential replaced by ***. */
export function redact(text: string, opts: RedactOptions = {}): string {
  let out = text;
  for (const s of ordered) if (out.includes(s)) out = out.split(s).join(MASK);
  out = out.replace(URL_USERINFO, (m, pre: string, pw: string) => (pw === MASK ? m : `${pre}:${MASK}@`));
  if (opts.keyValues !== false) {
    out = out.replace(KEY_VALUE, (m, key: string, eq: string, value: string) =>
      value === MASK || value === `'${MASK}'` || value === `"${MASK}"` ? m : `${key}${eq}${MASK}`,
    );
    out = out.replace(JSON_PAIR, `$1"${MASK}"`);
  }
  return out;
}

/** A URL for messages and files: its password (and credential-named parameters) masked. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    // The parser did not find the password where the raw text has one (no host, or a '/' in
    // the password read as the end of the host): mask the raw span.
    if (!u.host || (!u.password && rawPasswordSpan(url))) return redact(maskRawPassword(url));
    if (u.password) u.password = MASK;
    for (const k of [...u.searchParams.keys()]) if (SECRET_KEY.test(k)) u.searchParams.set(k, MASK);
    // URL encodes the mask's asterisks nowhere; keep the text readable.
    return redact(u.toString());
  } catch {
    return redact(maskRawPassword(url));
  }
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object') return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** A deep copy of a JSON-like value with credential-named keys' string values masked and every
 * string redacted. Typed arrays, buffers and other objects are kept as they are. */
export function redactValue<T>(value: T): T {
  if (typeof value === 'string') return redact(value) as T;
  if (Array.isArray(value)) return value.map((v) => redactValue(v)) as T;
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = typeof v === 'string' && v !== '' && SECRET_KEY.test(k) ? MASK : redactValue(v);
  }
  return out as T;
}

let streamsWrapped = false;
/** Redacts everything this process writes to stdout and stderr (log lines, progress, error
 * lines, and whatever a library prints). Idempotent. */
export function redactStandardStreams(): void {
  if (streamsWrapped) return;
  streamsWrapped = true;
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream) as (chunk: unknown, ...rest: unknown[]) => boolean;
    stream.write = ((chunk: unknown, ...rest: unknown[]) => {
      if (typeof chunk === 'string') return write(redact(chunk), ...rest);
      if (chunk instanceof Uint8Array) {
        const text = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('utf8');
        const clean = redact(text);
        if (clean !== text) return write(clean, ...rest.filter((r) => typeof r === 'function'));
      }
      return write(chunk, ...rest);
    }) as typeof stream.write;
  }
}

/** The environment variable that gives participant NAME's server URL (VECBENCH_CONNECT_REDIS_Q8). */
export function connectEnvVar(participant: string): string {
  return `VECBENCH_CONNECT_${participant.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
}

// Secrets the environment gives every vecbench process (the runner and its hosts alike): the
// connect URLs, those handed down by a parent, and the credential variables the participants
// declare (settings.json registry.credential_env).
const credentialVars = new Set(declaredCredentialEnvVars());
for (const [k, v] of Object.entries(process.env)) {
  if (!v) continue;
  if (k.startsWith('VECBENCH_CONNECT_')) registerUrlSecrets(v);
  else if (k === SECRETS_ENV) for (const s of v.split('\n')) registerSecret(s);
  else if (credentialVars.has(k)) registerSecret(v);
}
