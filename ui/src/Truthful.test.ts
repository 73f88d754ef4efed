// The window says what is so, over a mocked IPC layer (the generated bindings run for real): a
// live capture that fails is shown until capture works again (never "Synced, up to date"
// meanwhile), a source folder the user may not read is not said to be missing, and on a read-only
// archive every button that would write is off, saying why.
import { afterEach, describe, expect, it } from 'vitest';
import { flushSync, mount, tick, unmount } from 'svelte';
import { clearMocks, mockIPC } from '@tauri-apps/api/mocks';
import { emit } from '@tauri-apps/api/event';
import App from './App.svelte';
import { createStores, type Stores } from './lib/stores';
import { READ_ONLY_TITLE } from './lib/read-only';
import { fakeBackend, key, type FakeOptions } from './testing/fake-backend';

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

async function render(options: FakeOptions = {}) {
  const fake = fakeBackend(options);
  mockIPC(fake.handler, { shouldMockEvents: true });
  const target = document.createElement('div');
  document.body.append(target);
  const stores: Stores = createStores();
  component = mount(App, { target, props: { stores } });
  await settle();
  return { target, stores, calls: fake.calls };
}

const one = (target: HTMLElement, testid: string) => target.querySelector<HTMLElement>(`[data-testid="${testid}"]`);
const text = (element: Element | null) => element?.textContent?.replace(/\s+/g, ' ').trim() ?? '';

function click(element: Element | null | undefined) {
  if (!(element instanceof HTMLElement)) throw new Error('nothing to click');
  element.click();
}

const DISK_FULL = {
  kind: 'no_room',
  message: 'cannot write to the data dir /home/dev/.local/share/cairn: the disk is full (writing cairn.db); nothing stored before this was lost',
  hint: 'Free some space on the disk, then try again.',
};

describe('live capture', () => {
  it('shows a failed capture until one succeeds, once however often the watcher retries', async () => {
    const { target, stores } = await render();
    await stores.sync.run();
    await settle();
    const footer = target.querySelector('footer')!;
    expect(text(footer)).toContain('Synced, up to date');

    await emit('live-capture', { step: 'capture', problem: DISK_FULL });
    await settle();
    const banner = one(target, 'live-problem-capture')!;
    expect(text(banner)).toContain('Live capture failed');
    expect(text(banner)).toContain('the disk is full');
    expect(text(banner)).toContain('Free some space on the disk');
    // The footer no longer says all is well.
    expect(text(footer)).not.toContain('Synced, up to date');
    expect(text(one(target, 'live-capture-status'))).toBe('Live capture failing');

    // The watcher tries again at the next write: the same problem, counted, not a second notice.
    await emit('live-capture', { step: 'capture', problem: DISK_FULL });
    await emit('live-capture', { step: 'capture', problem: DISK_FULL });
    await settle();
    expect(target.querySelectorAll('[data-testid="live-problem-capture"]')).toHaveLength(1);
    expect(text(one(target, 'live-problem-count'))).toMatch(/^3 times since /);

    await emit('live-capture', { step: 'capture', problem: null });
    await settle();
    expect(one(target, 'live-problem-capture')).toBeNull();
    expect(one(target, 'live-capture-status')).toBeNull();
    expect(text(footer)).toContain('Synced, up to date');
  });

  it('says who holds the capture lock and that capture resumes; Dismiss hides it while it repeats', async () => {
    const { target } = await render();
    const locked = {
      kind: 'locked',
      message: 'Live capture is waiting: `cairn sync` (process 4242) holds the capture lock (/d/capture.lock) and is stopped',
      hint: 'Capture resumes by itself when it goes on or ends: continue it (`fg` in its terminal) or end it.',
    };
    await emit('live-capture', { step: 'capture', problem: locked });
    await settle();
    const banner = one(target, 'live-problem-capture')!;
    expect(banner.dataset.tone).toBe('warning');
    expect(text(banner)).not.toContain('Live capture failed');
    expect(text(banner)).toContain('cairn sync (process 4242)');
    expect(banner.querySelector('code')?.textContent).toBe('cairn sync');
    expect(text(banner)).toContain('resumes by itself');
    expect(text(one(target, 'live-capture-status'))).toBe('Live capture waiting');

    click(one(target, 'live-problem-dismiss'));
    await emit('live-capture', { step: 'capture', problem: locked });
    await settle();
    expect(one(target, 'live-problem-capture')).toBeNull();
    // Still true in the footer: dismissing hides the notice, not the fact.
    expect(text(one(target, 'live-capture-status'))).toBe('Live capture waiting');
  });
});

describe('Settings › Transcript folders', () => {
  it('says a folder the user may not read is not readable, with the fix, not that it is missing', async () => {
    const { target, stores } = await render({ unreadableSource: true });
    stores.router.go({ view: 'settings' });
    await settle();
    const codex = one(target, 'sources-codex')!;
    const dir = codex.querySelector<HTMLElement>('[data-testid="source-dir"]')!;
    expect(dir.dataset.state).toBe('unreadable');
    expect(text(dir.querySelector('.badge'))).toBe('not readable by you');
    expect(text(codex)).not.toContain('not found');
    expect(text(one(codex, 'source-dir-unreadable'))).toContain("sudo chown -R $USER '/home/dev/.codex'");
    // A folder that is not there is said so, plainly.
    stores.settings.sources.data = stores.settings.sources.data!.map((d) => (d.agent === 'codex' ? { ...d, unreadable: null } : d));
    await settle();
    expect(text(one(target, 'sources-codex')!.querySelector('.badge'))).toBe('not found');
  });
});

describe('a read-only archive', () => {
  const why = '/tmp/cairn-test/cairn.db cannot be written (Permission denied (os error 13))';
  const off = (button: HTMLElement | null) => {
    expect(button).not.toBeNull();
    expect((button as HTMLButtonElement).disabled).toBe(true);
    expect(button!.title).toBe(READ_ONLY_TITLE);
  };

  it('turns off Archive and its Undo, and the inbox’s reviews, keys included', async () => {
    const { target, stores, calls } = await render({ readOnly: why });
    stores.router.open('cairn://recall?tab=corpus');
    await settle();
    off(target.querySelector('[data-testid="recall-entry"][data-entry-id="rc-1"] [data-testid="archive-entry"]'));

    click(target.querySelector('[data-recall-tab="inbox"]'));
    await settle();
    for (const testid of ['accept', 'reject', 'bulk-accept', 'bulk-reject']) off(one(target, testid));
    window.dispatchEvent(new KeyboardEvent('keydown', { key: 'a', bubbles: true, cancelable: true }));
    await settle();
    expect(calls.some((c) => c.cmd === 'recall_accept')).toBe(false);
    expect(one(target, 'review-error')).toBeNull();
  });

  it('turns off forget, link corrections, the pull and the settings that save', async () => {
    const { target, stores } = await render({ readOnly: why });
    click(target.querySelectorAll('[data-testid="branch-row"]')[0]);
    await settle();
    off(one(target, 'not-related'));
    off(one(target, 'pull-teammates'));

    stores.router.go({ view: 'session', key: key(1), record: null, turn: null });
    await settle();
    const more = one(target, 'session-more-toggle');
    if (more?.getAttribute('aria-expanded') !== 'true') click(more);
    await settle();
    off(one(target, 'forget-button'));

    stores.router.go({ view: 'settings' });
    await settle();
    off(one(target, 'reindex-run'));
    // The read-only answers what may be looked at: checking what reading again would change.
    expect((one(target, 'reindex-check') as HTMLButtonElement).disabled).toBe(false);
  });

  it('turns them on again once the archive opens for writing', async () => {
    const { target, stores } = await render({ readOnly: why });
    stores.router.open('cairn://recall?tab=corpus');
    await settle();
    const archive = () => target.querySelector<HTMLButtonElement>('[data-testid="recall-entry"][data-entry-id="rc-1"] [data-testid="archive-entry"]')!;
    off(archive());
    stores.app.info = { ...stores.app.info!, read_only: false, read_only_why: null };
    await settle();
    expect(archive().disabled).toBe(false);
    expect(archive().title).toBe('No longer served to agents; Undo puts it back');
  });
});
