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
  return new Map([...body.matchAll(/(--[\w-]+):\s*(#[0-9a-fA-F]{6});/g)].map((m) => [m[1], m[2]]));
}

function luminance(hex: string): number {
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

function contrast(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

describe('muted text', () => {
  for (const [name, marker] of [
    ['light', '/* Window-wide look'],
    ['dark', '@media (prefers-color-scheme: dark)'],
  ]) {
    it(`reads at 4.5:1 or more on the page and on a selected row (${name})`, () => {
      const vars = scheme(marker);
      const muted = vars.get('--muted')!;
      for (const ground of ['--bg', '--selection']) {
        expect(contrast(muted, vars.get(ground)!), `${muted} on ${ground}`).toBeGreaterThanOrEqual(4.5);
      }
    });
  }
});
