// The form of a server URL the user gives (--connect NAME=URL or VECBENCH_CONNECT_<NAME>):
// parsed, or refused with one line that says in plain words what is wrong. Every message shows
// the URL with its password masked (redactUrl), also when the URL does not parse.
import { UserError } from '../util/errors.ts';
import { rawPasswordSpan, redactUrl } from '../util/redact.ts';

/** Characters that end a URL's user and password part when a password holds them unencoded. */
const ENDS_USERINFO = /[/?#]/;

/** `scheme://` at the start of the text, as written. */
const WRITTEN_SCHEME = /^\s*([A-Za-z][A-Za-z0-9+.-]*):\/\//;

/**
 * The URL of a server participant's server, checked for its form: a scheme the participant
 * takes, written with `://`, a password the parser reads as one, and a host. `from` names where
 * the URL came from (the option or the variable), for the messages.
 */
export function parseServerUrl(url: string, schemes: readonly string[], participant: string, from: string): URL {
  const head = `${from}: "${redactUrl(url)}"`;
  const takes = schemes.map((x) => `${x}://`).join(' or ');
  const form = `${schemes[0]}://user:password@host:port/...`;
  const written = WRITTEN_SCHEME.exec(url);
  if (!written) throw new UserError(`${head} does not start with ${takes}; write it as ${form}`);
  const scheme = written[1].toLowerCase();
  if (!schemes.includes(scheme)) throw new UserError(`${head} starts with ${scheme}://, but ${participant} takes ${takes}; write it as ${form}`);

  let u: URL | null = null;
  try {
    u = new URL(url);
  } catch {
    u = null;
  }
  // `scheme://u:1234/x@host` parses, as host u and port 1234 with '@' in the path: a password
  // holding '/' read as the end of the host.
  const misread = u !== null && u.username === '' && u.password === '' && u.pathname.includes('@');
  if (u === null || misread) {
    const span = rawPasswordSpan(url);
    if (span && ENDS_USERINFO.test(url.slice(span.start, span.end))) {
      throw new UserError(
        `${head}: its password holds one of / ? #, which end the user and password part of a URL; write those characters percent-encoded (/ as %2F, ? as %3F, # as %23)`,
      );
    }
    throw new UserError(`${head} is not a valid URL; write it as ${form}`);
  }
  if (!u.hostname) throw new UserError(`${head} names no host; write it as ${form}`);
  return u;
}
