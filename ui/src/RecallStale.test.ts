// The Recall inbox's "Check for stale entries" over a mocked IPC layer (the generated bindings
// run for real): busy while the core checks, its outcome said in words, and a flagged entry
// waiting in the inbox with the commit and files that made it stale.
import { afterEach, describe, expect, it } from 'vitest';
import { flushSync, mount, tick, unmount } from 'svelte';
import { clearMocks, mockIPC } from '@tauri-apps/api/mocks';
import App from './App.svelte';
import { createStores, type Stores } from './lib/stores';
import { READ_ONLY_TITLE } from './lib/read-only';
import { staleNotice } from './lib/stores/recall.svelte';
import { fakeBackend, fakeEntry, type FakeOptions } from './testing/fake-backend';

let component: ReturnType<typeof mount> | undefined;

afterEach(() => {
  if (component) unmount(component);
  component = undefined;
  clearMocks();
  document.body.innerHTML = '';
});

async function settle() {
  for (let i = 0; i < 10; i++) {
    await new Promise((resolve) => setTimeout(resolve, 0));
    await tick();
  }
  flushSync();
}

const NOTE = 'vite.config.ts changed in 1a2b3c4 ("Move the dev server to 5173") after this was recorded';

/** The window on the inbox over the fake backend, whose staleness check waits until `finish()`
 * and then flags a trusted entry (it then waits in the inbox, stale). */
async function render(options: FakeOptions = {}) {
  const fake = fakeBackend(options);
  let finish = () => {};
  let checked = false;
  const checks: number[] = [];
  const stale = { ...fakeEntry('rc-9', 'The dev server listens on 4173', true), trusted: false, stale: true, stale_note: NOTE };
  mockIPC(
    async (cmd, payload) => {
      if (cmd === 'recall_check_stale') {
        checks.push(checks.length);
        await new Promise<void>((resolve) => {
          finish = resolve;
        });
        checked = true;
        return { trusted: 2, untrusted: 1 };
      }
      const answer = await fake.handler(cmd, payload);
      if (cmd === 'recall_inbox' && checked) return [{ reason: 'stale', entry: stale, proposed_by: null }, ...(answer as unknown[])];
      return answer;
    },
    { shouldMockEvents: true },
  );
  const target = document.createElement('div');
  document.body.append(target);
  const stores: Stores = createStores();
  component = mount(App, { target, props: { stores } });
  await settle();
  stores.router.open('cairn://recall?tab=inbox');
  await settle();
  return { target, checks, finish: () => finish() };
}

const button = (target: HTMLElement) => target.querySelector<HTMLButtonElement>('[data-testid="check-stale"]')!;

describe('Check for stale entries', () => {
  it('is busy while the core checks, then says what it did in words and shows why each entry waits', async () => {
    const { target, checks, finish } = await render();
    const check = button(target);
    // A button in the toolbar's tab order, named by what it does.
    expect(check.tagName).toBe('BUTTON');
    expect(check.tabIndex).toBe(0);
    check.focus();
    expect(document.activeElement).toBe(check);
    expect(check.textContent?.trim()).toBe('Check for stale entries');
    expect(check.disabled).toBe(false);

    check.click();
    await settle();
    expect(checks).toEqual([0]);
    expect(check.textContent?.trim()).toBe('Checking…');
    expect(check.getAttribute('aria-busy')).toBe('true');
    expect(check.disabled).toBe(true);
    // The other reviews wait for it too.
    expect(target.querySelector<HTMLButtonElement>('[data-testid="accept"]')!.disabled).toBe(true);

    finish();
    await settle();
    expect(check.textContent?.trim()).toBe('Check for stale entries');
    expect(check.getAttribute('aria-busy')).toBe('false');
    expect(check.disabled).toBe(false);
    const notice = target.querySelector('[data-testid="review-notice"]')!;
    expect(notice.getAttribute('role')).toBe('status');
    expect(notice.textContent).toContain('2 entries taken out of service, 1 marked stale: files they cite changed in a later commit');
    // The flagged entry waits first, its reason naming the commit and the file.
    const first = target.querySelector<HTMLElement>('[data-testid="inbox-item"]')!;
    expect(first.dataset.entryId).toBe('rc-9');
    expect(first.querySelector('[data-testid="inbox-reason"]')!.textContent).toBe(`Stale: ${NOTE}`);
    // An entry waiting for another reason keeps its label.
    const reasons = [...target.querySelectorAll('[data-testid="inbox-reason"]')].map((r) => r.textContent);
    expect(reasons.slice(1).every((r) => r === 'New')).toBe(true);
  });

  it('is off on a read-only archive, saying why, and checks nothing', async () => {
    const { target, checks } = await render({ readOnly: '/tmp/cairn-test/cairn.db cannot be written' });
    const check = button(target);
    expect(check.disabled).toBe(true);
    expect(check.title).toBe(READ_ONLY_TITLE);
    check.click();
    await settle();
    expect(checks).toEqual([]);
  });

  it('says the trusted entries taken out of service apart from those only marked', () => {
    expect(staleNotice({ trusted: 0, untrusted: 0 })).toBe('No cited file changed in a commit since the last check: nothing is stale');
    expect(staleNotice({ trusted: 1, untrusted: 0 })).toBe('1 entry taken out of service: files they cite changed in a later commit');
    expect(staleNotice({ trusted: 0, untrusted: 3 })).toBe('3 entries waiting for review marked stale: files they cite changed in a later commit');
    expect(staleNotice({ trusted: 2, untrusted: 1 })).toBe('2 entries taken out of service, 1 marked stale: files they cite changed in a later commit');
  });
});
