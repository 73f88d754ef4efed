import { afterEach, describe, expect, it } from 'vitest';
import { createRawSnippet, flushSync, mount, unmount } from 'svelte';
import VariableList from './VariableList.svelte';

type Item = { id: number; tall: boolean };

const row = createRawSnippet((item: () => Item, index: () => number) => ({
  render: () => `<span class="cell">${item().id}:${index()}</span>`,
}));

let component: ReturnType<typeof mount> | undefined;

afterEach(() => {
  if (component) unmount(component);
  component = undefined;
  document.body.innerHTML = '';
});

const items = (n: number): Item[] => Array.from({ length: n }, (_, id) => ({ id, tall: id % 10 === 0 }));

function render(list: Item[], props: Record<string, unknown> = {}) {
  const target = document.createElement('div');
  document.body.append(target);
  const events: string[] = [];
  component = mount(VariableList<Item>, {
    target,
    props: {
      items: list,
      estimate: (item: Item) => (item.tall ? 120 : 40),
      key: (item: Item) => String(item.id),
      row,
      label: 'Turns',
      idPrefix: 'turn',
      overscan: 200,
      onselect: (index: number) => events.push(`select ${index}`),
      onactivate: (index: number) => events.push(`open ${index}`),
      ...props,
    },
  });
  flushSync();
  const viewport = target.querySelector<HTMLElement>('[role="listbox"]')!;
  return { target, viewport, events };
}

const cells = (target: HTMLElement) => [...target.querySelectorAll('.cell')].map((c) => c.textContent);

describe('VariableList', () => {
  it('renders a window of 100k rows of different heights, positioned by the estimates', () => {
    const { target } = render(items(100_000));
    const rows = [...target.querySelectorAll<HTMLElement>('[role="option"]')];
    expect(rows.length).toBeLessThan(20);
    expect(cells(target).slice(0, 3)).toEqual(['0:0', '1:1', '2:2']);
    // Row 1 sits below the tall row 0 (120 px), row 2 below row 1 (40 px).
    expect(rows[1]!.style.transform).toBe('translateY(120px)');
    expect(rows[2]!.style.transform).toBe('translateY(160px)');
    const spacer = target.querySelector<HTMLElement>('.spacer')!;
    expect(spacer.style.height).toBe(`${10_000 * 120 + 90_000 * 40}px`);
  });

  it('brings a far row into view when asked (deep links)', () => {
    const { target, viewport } = render(items(100_000), { scrollTo: { index: 50_000, token: 1 } });
    flushSync();
    expect(viewport.scrollTop).toBeGreaterThan(0);
    expect(cells(target)).toContain('50000:50000');
  });

  it('is a listbox whose active row follows the selection', () => {
    const { target, events } = render(items(5), { active: 2 });
    const listbox = target.querySelector('[role="listbox"]')!;
    expect(listbox.getAttribute('aria-activedescendant')).toBe('turn-2');
    expect(target.querySelector('#turn-2')!.getAttribute('aria-selected')).toBe('true');
    target.querySelector<HTMLElement>('#turn-3')!.click();
    target.querySelector<HTMLElement>('#turn-3')!.dispatchEvent(new MouseEvent('dblclick', { bubbles: true }));
    expect(events).toEqual(['select 3', 'open 3']);
  });
});
