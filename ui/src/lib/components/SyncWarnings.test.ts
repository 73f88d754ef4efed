import { afterEach, describe, expect, it } from 'vitest';
import { mount, tick, unmount } from 'svelte';
import SyncWarnings from './SyncWarnings.svelte';
import type { SyncReport } from '../api';

let component: ReturnType<typeof mount> | undefined;

afterEach(() => {
  if (component) unmount(component);
  component = undefined;
  document.body.innerHTML = '';
});

function shown(warnings: SyncReport['warnings']): HTMLElement | null {
  component = mount(SyncWarnings, { target: document.body, props: { warnings } });
  return document.querySelector('[data-testid="sync-warnings"]');
}

describe('SyncWarnings', () => {
  it('says nothing after a sync that read everything', () => {
    expect(shown([])).toBeNull();
  });

  it('counts what a sync could not read and names each file and line', () => {
    const el = shown([
      { path: '/home/me/.codex/sessions/a.jsonl', line: 12, message: 'malformed JSON skipped' },
      { path: '/home/me/.claude/projects/p/b.jsonl', line: null, message: 'cannot read: permission denied' },
    ]);
    expect(el?.querySelector('summary')?.textContent).toBe('2 warnings');
    const items = [...(el?.querySelectorAll('li') ?? [])].map((li) => li.textContent?.replace(/\s+/g, ' ').trim());
    expect(items).toEqual([
      '/home/me/.codex/sessions/a.jsonl:12 malformed JSON skipped',
      '/home/me/.claude/projects/p/b.jsonl cannot read: permission denied',
    ]);
  });

  it('lists the first fifty and says where the rest are', () => {
    const many = Array.from({ length: 53 }, (_, i) => ({ path: `/t/${i}.jsonl`, line: null, message: 'empty file skipped' }));
    const el = shown(many);
    expect(el?.querySelector('summary')?.textContent).toBe('53 warnings');
    const items = el?.querySelectorAll('li') ?? [];
    expect(items.length).toBe(51);
    expect(items[50]?.textContent).toContain('3 more warnings');
  });

  it('closes on Esc, which is then not the window\'s "back", and on a click elsewhere', async () => {
    const el = shown([{ path: '/t/a.jsonl', line: null, message: 'empty file skipped' }]) as HTMLDetailsElement;
    const summary = el.querySelector('summary') as HTMLElement;
    summary.click();
    await tick();
    expect(el.open).toBe(true);
    const esc = new KeyboardEvent('keydown', { key: 'Escape', bubbles: true, cancelable: true });
    summary.dispatchEvent(esc);
    await tick();
    expect(el.open).toBe(false);
    expect(esc.defaultPrevented).toBe(true);
    expect(document.activeElement).toBe(summary);

    summary.click();
    await tick();
    expect(el.open).toBe(true);
    el.querySelector('li')?.dispatchEvent(new MouseEvent('click', { bubbles: true }));
    await tick();
    expect(el.open).toBe(true);
    const elsewhere = document.createElement('button');
    document.body.append(elsewhere);
    elsewhere.dispatchEvent(new MouseEvent('click', { bubbles: true }));
    await tick();
    expect(el.open).toBe(false);

    // Closed, Esc is left to the window.
    const later = new KeyboardEvent('keydown', { key: 'Escape', bubbles: true, cancelable: true });
    summary.dispatchEvent(later);
    expect(later.defaultPrevented).toBe(false);
  });
});
