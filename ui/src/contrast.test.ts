// The window's muted text stays readable where it is drawn: on the page and on a selected row,
// in both colour schemes (WCAG AA for body text, 4.5:1). Read from app.css itself, so a colour
// changed there is checked here.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const css = readFileSync(resolve(__dirname, 'app.css'), 'utf8');

/** The custom properties of the first block after `marker` in app.css. */
function scheme(marker: string): Map<string, string> {
  const start = css.indexOf(marker);
  expect(start, marker).toBeGreaterThanOrEqual(0);
  const open = css.indexOf(':root {', start);
  const body = css.slice(open, css.indexOf('}', open));
  const vars = new Map<string, string>();
  for (const m of body.matchAll(/(--[\w-]+):\s*(#[0-9a-fA-F]{6});/g)) vars.set(m[1] ?? '', m[2] ?? '');
  return vars;
}

function channel(hex: string, at: number): number {
  const c = parseInt(hex.slice(at, at + 2), 16) / 255;
  return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
}

function luminance(hex: string): number {
  return 0.2126 * channel(hex, 1) + 0.7152 * channel(hex, 3) + 0.0722 * channel(hex, 5);
}

function contrast(a: string, b: string): number {
  const [x, y] = [luminance(a), luminance(b)];
  return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05);
}

const SCHEMES: [string, string][] = [
  ['light', '/* Window-wide look'],
  ['dark', '@media (prefers-color-scheme: dark)'],
];

describe('muted text', () => {
  for (const [name, marker] of SCHEMES) {
    it(`reads at 4.5:1 or more on the page and on a selected row (${name})`, () => {
      const vars = scheme(marker);
      const muted = vars.get('--muted') ?? '';
      for (const ground of ['--bg', '--selection']) {
        const on = vars.get(ground) ?? '';
        expect([muted, on].every((c) => /^#[0-9a-fA-F]{6}$/.test(c)), `${ground} in app.css`).toBe(true);
        expect(contrast(muted, on), `${muted} on ${on}`).toBeGreaterThanOrEqual(4.5);
      }
    });
  }
});
