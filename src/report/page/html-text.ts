// ---------- escaping ----------

const ESC: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
/** Text or attribute value made inert: no tag, no entity, no quote survives. */
export function esc(v: unknown): string {
  return String(v).replace(/[&<>"']/g, (c) => ESC[c]);
}

/** JSON safe inside <script type="application/json">: no "</script", no "<!--". */
export function jsonForScript(v: unknown): string {
  return JSON.stringify(v)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

// ---------- formatting ----------

export const nm = '<span class="nm">not measured</span>';

export function fmtBytes(b: number): string {
  if (!Number.isFinite(b)) return 'n/a';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = b;
  let u = 0;
  while (Math.abs(v) >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  // Three digits; 1000-1023 of a unit would otherwise print in exponent form.
  return `${u === 0 || v >= 1000 ? v.toFixed(0) : v.toPrecision(3)} ${units[u]}`;
}

export function fmtSecondsShort(s: number): string {
  if (!Number.isFinite(s)) return 'n/a';
  if (s >= 100) return `${s.toFixed(0)} s`;
  if (s >= 1) return `${s.toPrecision(3)} s`;
  return `${(s * 1000).toPrecision(3)} ms`;
}

export function fmtNum(v: number): string {
  if (!Number.isFinite(v)) return 'n/a';
  if (Number.isInteger(v)) return v.toLocaleString('en-US');
  if (Math.abs(v) >= 1000) return Math.round(v).toLocaleString('en-US');
  return v.toPrecision(4).replace(/\.?0+$/, '');
}

/** A leaf value of an extra section, formatted from its key's unit suffix. */
export function fmtLeaf(key: string, v: unknown): string {
  if (v === null || v === undefined) return nm;
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  if (typeof v === 'number') {
    if (/(^|_)bytes$/.test(key)) return esc(fmtBytes(v));
    if (/_s$/.test(key)) return esc(fmtSecondsShort(v));
    if (/_ms$/.test(key)) return esc(`${fmtNum(v)} ms`);
    return esc(fmtNum(v));
  }
  return esc(typeof v === 'string' ? v : JSON.stringify(v));
}

/** A small, safe subset of Markdown for participant READMEs: escaped first, then headings,
 * bullet lists, paragraphs, `code` and **bold**. Links keep their text and show the address. */
export function miniMarkdown(md: string): string {
  const inline = (s: string) =>
    esc(s)
      .replace(/`([^`]+)`/g, '<code>$1</code>')
      .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>')
      .replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, '$1 ($2)');
  const out: string[] = [];
  let para: string[] = [];
  let list: string[] = [];
  const flush = () => {
    if (para.length) out.push(`<p>${inline(para.join(' '))}</p>`);
    if (list.length) out.push(`<ul>${list.map((li) => `<li>${inline(li)}</li>`).join('')}</ul>`);
    para = [];
    list = [];
  };
  for (const raw of md.split('\n')) {
    const line = raw.trimEnd();
    const h = /^(#{1,6})\s+(.*)$/.exec(line);
    const li = /^\s*[-*]\s+(.*)$/.exec(line);
    if (h) {
      flush();
      out.push(`<h4>${inline(h[2])}</h4>`);
    } else if (li) {
      if (para.length) {
        out.push(`<p>${inline(para.join(' '))}</p>`);
        para = [];
      }
      list.push(li[1]);
    } else if (line.trim() === '') {
      flush();
    } else if (list.length && /^\s+/.test(raw)) {
      list[list.length - 1] += ` ${line.trim()}`;
    } else {
      if (list.length) {
        out.push(`<ul>${list.map((x) => `<li>${inline(x)}</li>`).join('')}</ul>`);
        list = [];
      }
      para.push(line.trim());
    }
  }
  flush();
  return out.join('\n');
}

export function pretty(v: unknown): string {
  return esc(JSON.stringify(v, null, 2) ?? 'null');
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
