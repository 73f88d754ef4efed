// Tests that change a mounted list's props (a `$state` object), so this file is compiled with runes.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createRawSnippet, flushSync, mount, unmount } from 'svelte';
import VariableList from './VariableList.svelte';

type Item = { id: number };

const row = createRawSnippet((item: () => Item) => ({ render: () => `<span class="cell">${item().id}</span>` }));

let component: ReturnType<typeof mount> | undefined;

afterEach(() => {
  if (component) unmount(component);
  component = undefined;
  document.body.innerHTML = '';
  vi.restoreAllMocks();
});

function render(n: number) {
  const props = $state({
    items: Array.from({ length: n }, (_, id) => ({ id })),
    estimate: () => 40,
    key: (item: Item) => String(item.id),
    row,
    label: 'Turns',
    idPrefix: 'turn',
    overscan: 200,
    active: -1,
    scrollTo: null as { index: number; token: number } | null,
  });
  const target = document.createElement('div');
  document.body.append(target);
  component = mount(VariableList<Item>, { target, props });
  flushSync();
  const viewport = target.querySelector<HTMLElement>('[role="listbox"]')!;
  return { props, viewport };
}

describe('VariableList after a scroll request', () => {
  it('follows the active row again once the deep link has been centred, with no resize after it', () => {
    let now = 1_000;
    vi.spyOn(performance, 'now').mockImplementation(() => now);
    const { props, viewport } = render(1_000);
    props.active = 500;
    props.scrollTo = { index: 500, token: 1 };
    flushSync();
    const centred = viewport.scrollTop;
    expect(centred).toBeGreaterThan(0);
    // Long after the request, with no row measured in between, the keyboard moves far away.
    now += 5_000;
    props.active = 10;
    flushSync();
    expect(viewport.scrollTop).toBe(10 * 40);
  });

  it('lets a keyboard move take over from a centring still under way', () => {
    vi.spyOn(performance, 'now').mockImplementation(() => 1_000);
    const { props, viewport } = render(1_000);
    props.active = 500;
    props.scrollTo = { index: 500, token: 1 };
    flushSync();
    props.active = 20;
    flushSync();
    expect(viewport.scrollTop).toBe(20 * 40);
  });
});
