// A report's HTML comes from the core's Markdown renderer, which already escapes raw HTML and
// keeps only safe links. The window does not rely on that alone: before it is shown, the HTML is
// parsed (never executed: a <template> document runs no scripts) and rebuilt from an allowlist of
// elements, with no attributes but a checked `href`. Anything else becomes its text.

const ELEMENTS = new Set([
  'P', 'H1', 'H2', 'H3', 'H4', 'H5', 'H6', 'UL', 'OL', 'LI', 'A', 'CODE', 'PRE', 'EM', 'STRONG', 'DEL',
  'BLOCKQUOTE', 'HR', 'BR', 'TABLE', 'THEAD', 'TBODY', 'TR', 'TH', 'TD', 'SPAN',
]);
/** Elements dropped with everything inside them. */
const DROPPED = new Set(['SCRIPT', 'STYLE', 'IFRAME', 'OBJECT', 'EMBED', 'TEMPLATE', 'NOSCRIPT', 'svg', 'math']);

/** The links a report may hold: sessions and other Cairn places, the web, mail, in-page. */
export function safeHref(href: string): string | null {
  const value = href.trim();
  if (value.startsWith('#')) return value;
  return /^(cairn:\/\/|https?:\/\/|mailto:)/i.test(value) ? value : null;
}

function copy(node: Node, into: Node, doc: Document): void {
  for (const child of Array.from(node.childNodes)) {
    if (child.nodeType === Node.TEXT_NODE) {
      into.appendChild(doc.createTextNode(child.textContent ?? ''));
      continue;
    }
    if (child.nodeType !== Node.ELEMENT_NODE) continue;
    const element = child as Element;
    const name = element.tagName.toUpperCase();
    if (DROPPED.has(element.tagName) || DROPPED.has(name)) continue;
    if (!ELEMENTS.has(name)) {
      // Unknown elements keep their text, not themselves.
      copy(element, into, doc);
      continue;
    }
    const clean = doc.createElement(name.toLowerCase());
    if (name === 'A') {
      const href = safeHref(element.getAttribute('href') ?? '');
      if (href !== null) clean.setAttribute('href', href);
      if (href?.startsWith('cairn://')) clean.setAttribute('data-cairn-link', '');
    }
    copy(element, clean, doc);
    into.appendChild(clean);
  }
}

/** `html` reduced to the allowlisted elements, as an HTML string. */
export function sanitize(html: string): string {
  const template = document.createElement('template');
  template.innerHTML = html;
  const out = document.createElement('div');
  copy(template.content, out, document);
  return out.innerHTML;
}
