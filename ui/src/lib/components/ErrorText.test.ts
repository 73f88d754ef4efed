// A failure's text: a short one in the flow of its sentence; a long one (an error quoting 10 KB
// of what it was given) in a box of its own that scrolls, whole, selectable and copyable.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { flushSync, mount, unmount } from 'svelte';
import ErrorText from './ErrorText.svelte';

let component: ReturnType<typeof mount> | undefined;

afterEach(() => {
  if (component) unmount(component);
  component = undefined;
  document.body.innerHTML = '';
});

function show(error: unknown): HTMLElement {
  const target = document.createElement('p');
  document.body.append(target);
  component = mount(ErrorText, { target, props: { error: error as string } });
  flushSync();
  return target;
}

describe('ErrorText', () => {
  it('keeps a short message in the sentence it ends', () => {
    const p = show({ kind: 'io', message: 'cannot read /x: permission denied', hint: 'Make /x readable.' });
    expect(p.querySelector('[data-testid="error-long"]')).toBeNull();
    expect(p.querySelector('[data-testid="error-copy"]')).toBeNull();
    expect(p.querySelector('.message')!.textContent).toBe('cannot read /x: permission denied');
  });

  it('puts a 10 KB message in a box a keyboard can scroll, whole, with a Copy button', async () => {
    const message = `search: fts5: syntax error near "${'? , '.repeat(2500)}"`;
    const p = show({ kind: 'invalid', message, hint: 'Search for fewer words.' });
    const box = p.querySelector<HTMLElement>('[data-testid="error-long"]')!;
    expect(box).not.toBeNull();
    expect(box.textContent).toBe(message);
    expect(box.tabIndex).toBe(0);
    expect(box.getAttribute('aria-label')).toBe('The whole message');
    expect(p.querySelector('[data-testid="error-hint"]')!.textContent).toBe('Search for fewer words.');
    const write = vi.fn(async () => {});
    Object.defineProperty(navigator, 'clipboard', { value: { writeText: write }, configurable: true });
    p.querySelector<HTMLButtonElement>('[data-testid="error-copy"]')!.click();
    await new Promise((resolve) => setTimeout(resolve, 0));
    flushSync();
    expect(write).toHaveBeenCalledWith(`${message}\nSearch for fewer words.`);
    expect(p.querySelector('[data-testid="error-copy"]')!.textContent).toBe('Copied');
  });

  it('boxes a message of many lines too', () => {
    const p = show('line\n'.repeat(12));
    expect(p.querySelector('[data-testid="error-long"]')).not.toBeNull();
  });
});
