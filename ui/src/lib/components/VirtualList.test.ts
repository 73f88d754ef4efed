import { afterEach, describe, expect, it } from 'vitest';
import { createRawSnippet, flushSync, mount, unmount } from 'svelte';
import VirtualList from './VirtualList.svelte';
import virtualSource from './VirtualList.svelte?raw';
import variableSource from './VariableList.svelte?raw';

type Item = { id: number };

const row = createRawSnippet((item: () => Item, index: () => number) => ({
  render: () => `<span class="cell">${item().id}:${index()}</span>`,
}));

let component: ReturnType<typeof mount> | undefined;

afterEach(() => {
  if (component) unmount(component);
  component = undefined;
  document.body.innerHTML = '';
});

function render(items: Item[], props: { active?: number; onactivate?: (index: number) => void } = {}) {
  const target = document.createElement('div');
  document.body.append(target);
  let selected = -1;
  component = mount(VirtualList<Item>, {
    target,
    props: {
      items,
      rowHeight: 40,
      key: (item: Item) => String(item.id),
      row,
      label: 'Things',
      idPrefix: 'thing',
      overscan: 5,
      onselect: (index: number) => (selected = index),
      ...props,
    },
  });
  flushSync();
  const viewport = target.querySelector<HTMLElement>('[role="listbox"]')!;
  return { target, viewport, selected: () => selected };
}

const many = (n: number) => Array.from({ length: n }, (_, i) => ({ id: i }));

describe('VirtualList', () => {
  it('renders a handful of rows out of 100k and sizes the scroll area for all of them', () => {
    const { target, viewport } = render(many(100_000));
    const rows = target.querySelectorAll('[role="option"]');
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.length).toBeLessThan(60);
    const spacer = viewport.firstElementChild as HTMLElement;
    expect(spacer.style.height).toBe(`${100_000 * 40}px`);
    expect(rows[0]!.getAttribute('aria-setsize')).toBe('100000');
  });

  it('renders the rows at the scroll position', () => {
    const { target, viewport } = render(many(100_000));
    viewport.scrollTop = 40 * 50_000;
    viewport.dispatchEvent(new Event('scroll'));
    flushSync();
    const cells = [...target.querySelectorAll('.cell')].map((c) => c.textContent);
    expect(cells).toContain('50000:50000');
    expect(cells).not.toContain('0:0');
    const first = target.querySelector<HTMLElement>('[role="option"]')!;
    expect(first.style.transform).toMatch(/translateY\(\d+px\)/);
  });

  it('marks the active row and reports clicks', () => {
    const { target, selected } = render(many(10), { active: 2 });
    const active = target.querySelector('[aria-selected="true"]')!;
    expect(active.id).toBe('thing-2');
    expect(target.querySelector('[role="listbox"]')!.getAttribute('aria-activedescendant')).toBe('thing-2');
    (target.querySelector('#thing-4') as HTMLElement).click();
    expect(selected()).toBe(4);
  });

  it('opens a row on Enter when it can, and otherwise leaves Enter to what is inside the row', () => {
    const enter = (row: Element) => {
      const event = new KeyboardEvent('keydown', { key: 'Enter', bubbles: true, cancelable: true });
      row.dispatchEvent(event);
      return event.defaultPrevented;
    };
    let opened = -1;
    const { target } = render(many(10), { onactivate: (index) => (opened = index) });
    expect(enter(target.querySelector('#thing-3')!)).toBe(true);
    expect(opened).toBe(3);
    unmount(component!);
    component = undefined;
    document.body.innerHTML = '';
    const plain = render(many(10));
    expect(enter(plain.target.querySelector('#thing-3')!)).toBe(false);
  });

  it('scrolls a far-away active row into view', () => {
    const { viewport } = render(many(1000), { active: 500 });
    expect(viewport.scrollTop).toBeGreaterThan(0);
  });
});

describe('the focus of a list', () => {
  /** The declarations of `selector`'s rule in `css`. */
  const rule = (css: string, selector: string) => css.split(`${selector} {`)[1]?.split('}')[0]?.trim() ?? '';

  // happy-dom applies no component styles, so the rules are read as written: a list reached with
  // Tab shows the ring every other control shows, in the theme's accent colour.
  it.each([
    ['VirtualList', virtualSource],
    ['VariableList', variableSource],
  ])('%s rings the focused listbox as the other controls are ringed', (_, source) => {
    // app.css rings buttons and fields with the same declaration; `--accent` has a light and a
    // dark value.
    expect(rule(source, '.viewport:focus-visible')).toContain('outline: 2px solid var(--accent);');
    // Only the keyboard's focus is ringed: a click on a row leaves no ring.
    expect(rule(source, '.viewport')).toContain('outline: none;');
  });

  it('leaves Enter on a link or button inside a row to that control', () => {
    const opened: number[] = [];
    const linkRow = createRawSnippet((item: () => Item) => ({
      render: () => `<span><button type="button" class="inner">${item().id}</button></span>`,
    }));
    const target = document.createElement('div');
    document.body.append(target);
    component = mount(VirtualList<Item>, {
      target,
      props: { items: many(3), rowHeight: 40, key: (i: Item) => String(i.id), row: linkRow, label: 'Things', idPrefix: 'x', onactivate: (i: number) => opened.push(i) },
    });
    flushSync();
    const button = target.querySelector<HTMLButtonElement>('.inner')!;
    const enter = new KeyboardEvent('keydown', { key: 'Enter', bubbles: true, cancelable: true });
    button.dispatchEvent(enter);
    expect(opened).toEqual([]);
    expect(enter.defaultPrevented).toBe(false);
    // On the row itself, Enter opens it.
    const row = target.querySelector<HTMLElement>('[role="option"]')!;
    row.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true, cancelable: true }));
    expect(opened).toEqual([0]);
  });
});
