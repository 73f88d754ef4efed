// The window's journeys over a mocked IPC layer (the generated bindings run for real):
// first run → sync → branch → skim → session → expand a turn → record link → search, plus
// keyboard, live updates and settings.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { flushSync, mount, tick, unmount } from 'svelte';
import { clearMocks, mockIPC } from '@tauri-apps/api/mocks';
import { emit } from '@tauri-apps/api/event';
import App from './App.svelte';
import { createStores, type Stores } from './lib/stores';
import { agentCounts } from './lib/stores/agents.svelte';
import { fakeBackend, key, type FakeOptions } from './testing/fake-backend';
import { SEARCH_DELAY_MS } from './lib/stores/search.svelte';

let component: ReturnType<typeof mount> | undefined;
let calls: { cmd: string; args: Record<string, unknown> }[] = [];

afterEach(() => {
  if (component) unmount(component);
  component = undefined;
  clearMocks();
  document.body.innerHTML = '';
});

beforeEach(() => {
  calls = [];
});

async function settle() {
  for (let i = 0; i < 8; i++) {
    await new Promise((resolve) => setTimeout(resolve, 0));
    await tick();
  }
  flushSync();
}

/** Answers to `held` commands wait until `release()`; everything else answers at once. */
const held = new Set<string>();
let waiting: (() => void)[] = [];
function release() {
  for (const go of waiting) go();
  waiting = [];
}

async function render(options: FakeOptions = {}): Promise<{ target: HTMLElement; stores: Stores; fake: ReturnType<typeof fakeBackend> }> {
  const fake = fakeBackend(options);
  calls = fake.calls;
  held.clear();
  waiting = [];
  mockIPC(
    (cmd, args) =>
      held.has(cmd)
        ? new Promise<void>((go) => waiting.push(go)).then(() => fake.handler(cmd, args))
        : fake.handler(cmd, args),
    { shouldMockEvents: true },
  );
  const target = document.createElement('div');
  document.body.append(target);
  const stores = createStores();
  component = mount(App, { target, props: { stores } });
  await settle();
  return { target, stores, fake };
}

/** The button of `within` that reads `text`. */
function button(within: Element | null, text: string): HTMLButtonElement {
  const found = [...(within?.querySelectorAll('button') ?? [])].find((b) => b.textContent?.trim() === text);
  if (!found) throw new Error(`no ${text} button`);
  return found;
}

const all = (target: HTMLElement, testid: string) => [...target.querySelectorAll<HTMLElement>(`[data-testid="${testid}"]`)];
const one = (target: HTMLElement, testid: string) => target.querySelector<HTMLElement>(`[data-testid="${testid}"]`);

function press(keyName: string, target: EventTarget = window) {
  target.dispatchEvent(new KeyboardEvent('keydown', { key: keyName, bubbles: true, cancelable: true }));
  flushSync();
}

/** Unfold the session header's secondary parts (folded in the test window, 768 px tall). */
function showDetails(target: HTMLElement) {
  const toggle = one(target, 'session-more-toggle')!;
  if (toggle.getAttribute('aria-expanded') !== 'true') click(toggle);
  flushSync();
}

function click(element: Element | null | undefined) {
  if (!(element instanceof HTMLElement)) throw new Error('nothing to click');
  element.click();
}

describe('first run', () => {
  it('offers the initial sync, then shows the branches', async () => {
    const { target } = await render({ sessions: 0 });
    const welcome = one(target, 'welcome')!;
    expect(welcome.textContent).toContain('Welcome to Cairn');
    expect(welcome.textContent).toContain('/home/dev/.claude/projects');
    // Every agent without a folder is named once, not listed folder by folder, and the import
    // names the agents it will read.
    expect(one(target, 'welcome-missing')!.textContent).toMatch(/Codex.*no folder found/);
    expect(one(target, 'welcome-found')!.textContent).not.toContain('Codex');
    expect(target.querySelector('#first-sync')!.textContent).toContain('Import from Claude');

    click(target.querySelector('#first-sync'));
    await settle();

    expect(calls.some((c) => c.cmd === 'sync_archive')).toBe(true);
    expect(one(target, 'welcome')).toBeNull();
    expect(all(target, 'branch-row').map((r) => r.dataset.branchKey)).toEqual([
      'ref:refs/heads/feature/login',
      'ref:refs/heads/main',
      'ref:refs/heads/drafts',
      'ref:refs/heads/main',
      'ref:refs/heads/main',
    ]);
    expect(document.documentElement.dataset.ready).toBe('true');
  });

  it('shows the page of the tab clicked before the first import, the welcome at Branches', async () => {
    const { target } = await render({ sessions: 0 });
    const current = () => target.querySelector<HTMLElement>('nav .tab[aria-current="page"]')?.dataset.tab;
    expect(current()).toBe('branches');
    expect(one(target, 'welcome')).not.toBeNull();
    click(target.querySelector('nav .tab[data-tab="recall"]'));
    await settle();
    // The tab marked and the page shown agree.
    expect(current()).toBe('recall');
    expect(one(target, 'welcome')).toBeNull();
    expect(target.querySelector('.window')!.getAttribute('data-view')).toBe('recall');
    click(target.querySelector('nav .tab[data-tab="sessions"]'));
    await settle();
    expect(one(target, 'welcome')).toBeNull();
    expect(one(target, 'empty-state')!.textContent).toContain('No sessions yet');
    click(target.querySelector('nav .tab[data-tab="branches"]'));
    await settle();
    expect(one(target, 'welcome')).not.toBeNull();
  });

  it('goes to a view with its tab\'s number, each tab saying which', async () => {
    const { target } = await render();
    const current = () => target.querySelector<HTMLElement>('nav .tab[aria-current="page"]')?.dataset.tab;
    press('4');
    await settle();
    expect(current()).toBe('recall');
    expect(target.querySelector('nav .tab[data-tab="recall"]')!.getAttribute('aria-keyshortcuts')).toBe('4');
    press('2');
    await settle();
    expect(current()).toBe('sessions');
    press('9');
    await settle();
    expect(current()).toBe('sessions');
  });

  it('shows a failed sync and retries it', async () => {
    const { target } = await render({ sessions: 0, failOnce: { sync_archive: 'cannot read /x: permission denied' } });
    click(target.querySelector('#first-sync'));
    await settle();
    expect(target.textContent).toContain('permission denied');
    click([...target.querySelectorAll('button')].find((b) => b.textContent?.includes('Try again')));
    await settle();
    expect(one(target, 'welcome')).toBeNull();
  });
});

describe('retention', () => {
  it('warns when an agent is about to delete uncaptured transcripts, and Capture now clears it', async () => {
    const { target, stores } = await render({ expiring: true });
    if (!calls.some((c) => c.cmd === 'sync_archive')) await stores.sync.run();
    await settle();
    const banner = one(target, 'retention-banner')!;
    expect(banner.getAttribute('role')).toBe('alert');
    expect(banner.textContent).toContain('will be deleted by Claude Code within 7 days');
    expect(banner.textContent).toContain('cairn sync --agent claude');
    click(one(target, 'retention-capture'));
    await settle();
    expect(calls.filter((c) => c.cmd === 'sync_archive').length).toBe(2);
    expect(one(target, 'retention-banner')).toBeNull();
  });

  it('shows no banner when nothing is at risk', async () => {
    const { target, stores } = await render();
    if (!calls.some((c) => c.cmd === 'sync_archive')) await stores.sync.run();
    await settle();
    expect(one(target, 'retention-banner')).toBeNull();
  });
});

describe('branches and skim', () => {
  it('opens a branch timeline with why-related and a collapsed weak group', async () => {
    const { target, stores } = await render();
    click(all(target, 'branch-row')[0]);
    await settle();

    expect(stores.router.current).toEqual({
      view: 'branches',
      branch: 'ref:refs/heads/feature/login',
      repo: '/home/dev/shop',
    });
    expect(one(target, 'skim-head')!.textContent).toContain('feature/login');
    const sessions = all(target, 'skim-session');
    expect(sessions).toHaveLength(2);
    expect(sessions[0]!.textContent).toContain('committed abc1234');
    // Every turn is a row; the virtual list renders those near the viewport.
    expect(stores.skim.rows.filter((r) => r.type === 'turn')).toHaveLength(6);
    expect(all(target, 'skim-turn')[1]!.textContent).toContain('implemented');

    // The weak group is the last row (off screen here): End selects it, Enter opens it.
    expect(stores.skim.rows.at(-1)).toEqual({ type: 'weak-group', count: 1, open: false });
    press('End');
    await settle();
    expect(one(target, 'weak-group')!.textContent).toContain('Also ran on this branch (1)');
    press('Enter');
    await settle();
    expect(stores.skim.rows.filter((r) => r.type === 'session').map((r) => r.type === 'session' && r.session.weak)).toEqual([
      false,
      false,
      true,
    ]);
  });

  it('keeps a branch the agent filter hides picked, says why, and shows it again in one click', async () => {
    const { target, stores } = await render();
    // The window's one list of agents may hold an earlier test's archive.
    await agentCounts.load();
    await settle();
    const drafts = all(target, 'branch-row').find((r) => r.dataset.branchKey === 'ref:refs/heads/drafts');
    click(drafts);
    await settle();
    expect(one(target, 'skim-head')!.textContent).toContain('drafts');

    // Codex did no work on drafts: the list drops it, the timeline says why instead of going blank.
    click(target.querySelector('[data-agent-filter="codex"] input'));
    await settle();
    expect(all(target, 'branch-row').map((r) => r.dataset.branchKey)).toEqual(['ref:refs/heads/feature/login']);
    const filtered = one(target, 'branch-filtered')!;
    expect(filtered.textContent).toContain('No Codex sessions on drafts');
    expect(filtered.textContent).toContain('agent filter hides this branch');
    expect(one(target, 'skim-head')).toBeNull();
    expect(stores.router.current).toMatchObject({ view: 'branches', branch: 'ref:refs/heads/drafts' });

    click(filtered.querySelector('button'));
    await settle();
    expect(stores.branches.agent).toBe('all');
    expect(one(target, 'branch-filtered')).toBeNull();
    expect(all(target, 'branch-row')).toHaveLength(5);
    expect(stores.branches.selectedRow?.branch.key).toBe('ref:refs/heads/drafts');
    expect(one(target, 'skim-head')!.textContent).toContain('drafts');
  });

  it('explains an empty archive of branches', async () => {
    const fake = fakeBackend();
    mockIPC(async (cmd, args) => (cmd === 'list_branches' ? [] : fake.handler(cmd, args)), { shouldMockEvents: true });
    const target = document.createElement('div');
    document.body.append(target);
    component = mount(App, { target, props: { stores: createStores() } });
    await settle();
    expect(one(target, 'branches-empty')!.textContent).toContain('git repository');
  });

  it('shows a failed load with a retry', async () => {
    const { target } = await render({ failOnce: { list_branches: 'database /x/cairn.db: locked' } });
    const error = one(target, 'error-state')!;
    expect(error.textContent).toContain('locked');
    click(error.querySelector('button'));
    await settle();
    expect(all(target, 'branch-row').length).toBe(5);
  });

  it('shows a failure’s hint under its message when the backend sends one', async () => {
    const failure = { kind: 'locked', message: 'database /x/cairn.db: locked', hint: 'Close the other Cairn window, then Retry.' };
    const { target } = await render({ failOnce: { list_branches: failure } });
    const error = one(target, 'error-state')!;
    expect(error.textContent).toContain('database /x/cairn.db: locked');
    expect(one(error, 'error-hint')?.textContent).toBe('Close the other Cairn window, then Retry.');
    expect(error.querySelector('[data-kind="locked"]')).not.toBeNull();
    expect(error.textContent).not.toContain('[object Object]');
  });

  it('opens the archive on Retry once its config.toml is corrected, and catches up', async () => {
    const fake = fakeBackend();
    calls = fake.calls;
    let corrected = false;
    let open = false;
    let retries = 0;
    const broken = {
      kind: 'config',
      message: 'config /home/dev/.local/share/cairn/config.toml: TOML parse error at line 2, column 8',
      hint: null,
    };
    mockIPC(
      async (cmd, args) => {
        if (cmd === 'reopen_archive') {
          retries += 1;
          if (!corrected) throw broken;
          open = true;
        }
        if (!open && cmd !== 'app_info' && cmd !== 'reopen_archive') throw broken;
        return fake.handler(cmd, args);
      },
      { shouldMockEvents: true },
    );
    const target = document.createElement('div');
    document.body.append(target);
    component = mount(App, { target, props: { stores: createStores() } });
    await settle();
    const error = one(target, 'error-state')!;
    expect(error.textContent).toContain('Couldn’t open the archive');
    expect(error.textContent).toContain('config.toml: TOML parse error at line 2');
    expect(one(error, 'config-advice')!.textContent).toContain('Retry');
    expect(calls.some((c) => c.cmd === 'sync_archive')).toBe(false);

    // Settings stays reachable, each of its parts saying what it could not read.
    click(target.querySelector('nav .tab[data-tab="settings"]'));
    await settle();
    expect(one(target, 'error-state')).toBeNull();
    expect(target.querySelector('.window')!.getAttribute('data-view')).toBe('settings');
    click(target.querySelector('nav .tab[data-tab="branches"]'));
    await settle();

    // Still broken: Retry says so again, and nothing is synced.
    click(button(one(target, 'error-state'), 'Retry'));
    await settle();
    expect(one(target, 'config-advice')).not.toBeNull();
    expect(calls.some((c) => c.cmd === 'sync_archive')).toBe(false);

    corrected = true;
    click(button(one(target, 'error-state'), 'Retry'));
    await settle();
    expect(one(target, 'error-state')).toBeNull();
    expect(all(target, 'branch-row').length).toBe(5);
    expect(retries).toBe(2);
    expect(calls.some((c) => c.cmd === 'sync_archive')).toBe(true);
  });

  it('offers Settings meanwhile as a button, the 6 said to be a key', async () => {
    const { target, stores } = await render({ unopened: { kind: 'locked', message: 'a sync is running on /tmp/cairn-test', hint: null } });
    const meanwhile = one(target, 'settings-meanwhile')!;
    expect(meanwhile.textContent!.replace(/\s+/g, ' ').trim()).toBe('Settings still works meanwhile: open Settings (or press the 6 key).');
    click(button(meanwhile, 'open Settings'));
    await settle();
    expect(stores.router.current.view).toBe('settings');
  });

  it('shows no hint for a plain message', async () => {
    const { target } = await render({ failOnce: { list_branches: 'database /x/cairn.db: locked' } });
    expect(one(target, 'error-state')).not.toBeNull();
    expect(one(target, 'error-hint')).toBeNull();
  });
});

describe('an archive that cannot be written', () => {
  // As the desktop reports a first run on a data dir the user may not write (`report::report`).
  const cannotCreate = {
    kind: 'io',
    message: 'cannot create cairn.db in /tmp/cairn-test: your user may not write to that folder (Permission denied (os error 13))',
    hint: "Make /tmp/cairn-test readable and writable for your user (`chmod u+rwx '/tmp/cairn-test'`), then try again.",
  };

  it('names the folder on a first run, says it once in Settings beside the checks, and forgets it once it opens', async () => {
    const { target, fake } = await render({ sessions: 0, unopened: cannotCreate });
    const error = one(target, 'error-state')!;
    expect(error.textContent).toContain('cannot create cairn.db in /tmp/cairn-test');
    expect(one(error, 'error-hint')!.textContent).toContain("chmod u+rwx '/tmp/cairn-test'");

    // Settings: the one problem once (the archive's check), every check that needs no archive
    // still there, and each panel that needs the archive waiting for it quietly.
    click(target.querySelector('nav .tab[data-tab="settings"]'));
    await settle();
    const page = one(target, 'settings-view')!;
    expect(one(page, 'settings-unopened')!.textContent).toContain('The archive did not open');
    expect(page.textContent!.split('cannot create cairn.db in /tmp/cairn-test').length - 1).toBe(1);
    expect(page.querySelectorAll('[role="alert"] [data-kind]').length).toBe(0);
    const checks = one(page, 'health-checks')!.textContent!;
    expect(checks).toContain('did not open: cannot create cairn.db in /tmp/cairn-test');
    expect(checks).toContain('Claude Code deletes transcripts after 30 days');
    expect(all(page, 'panel-waits').length).toBeGreaterThanOrEqual(5);

    // Back at Branches, a sync fails for the same reason; the folder is put right, and Retry
    // opens the archive: the first-run page shows, with no failure left over from before.
    click(target.querySelector('nav .tab[data-tab="branches"]'));
    await settle();
    click(button(target.querySelector('footer'), 'Sync'));
    await settle();
    expect(one(target, 'sync-error')!.textContent).toContain('cannot create cairn.db');
    fake.fix();
    click(button(one(target, 'error-state'), 'Retry'));
    await settle();
    expect(one(target, 'error-state')).toBeNull();
    const welcome = one(target, 'welcome')!;
    expect(welcome.textContent).not.toContain('The import failed');
    expect(one(target, 'sync-error')).toBeNull();
    expect(target.querySelector('#first-sync')).not.toBeNull();
  });

  it('says a read-only archive at the top, why and what to do, and writes again after Try again', async () => {
    const why = '/tmp/cairn-test/cairn.db cannot be written (Permission denied (os error 13))';
    const { target, fake } = await render({ readOnly: why });
    const banner = one(target, 'read-only-banner')!;
    const said = banner.textContent!.replace(/\s+/g, ' ');
    expect(said).toContain(`Read-only archive. ${why}. It shows what the archive holds`);
    expect(said).toContain('captures no new sessions and saves no reviews or settings');
    expect(said).not.toMatch(/--data-dir|CAIRN_DATA_DIR/);
    const footer = target.querySelector('footer')!;
    expect(one(footer as HTMLElement, 'read-only-status')!.textContent).toBe('Read-only');
    expect([...footer.querySelectorAll('button')].some((b) => b.textContent?.trim() === 'Sync')).toBe(false);

    // Still read-only: said, so the click is seen to have done something.
    click(one(target, 'read-only-retry'));
    await settle();
    expect(one(target, 'read-only-still')!.textContent).toBe('Still read-only.');
    fake.fix();
    click(one(target, 'read-only-retry'));
    await settle();
    expect(one(target, 'read-only-banner')).toBeNull();
    expect(one(footer as HTMLElement, 'read-only-status')).toBeNull();
    expect(button(footer, 'Sync')).not.toBeNull();
  });
});

describe('session', () => {
  it('offers to resume in the agent by its name, and says a problem as a sentence', async () => {
    for (const gone of [false, true]) {
      const { target, stores } = await render({ resumeFolderGone: gone });
      stores.router.go({ view: 'session', key: key(1), record: null, turn: null });
      await settle();
      showDetails(target);
      expect(target.textContent).toContain('Resume in Claude');
      expect(target.textContent).toContain('cd /home/dev/shop && claude --resume fake-id');
      const problem = one(target, 'resume-problem');
      if (gone)
        expect(problem!.textContent).toBe(
          'The folder it ran in, /home/dev/shop, is gone from this machine: make it again at that path (a clone of the project), then resume (agents find a session by the folder it ran in)',
        );
      else expect(problem).toBeNull();
      if (component) unmount(component);
      component = undefined;
      clearMocks();
      document.body.innerHTML = '';
    }
  });

  it('says, before a forget, that a published copy goes at the next push', async () => {
    const { target, stores } = await render();
    stores.router.go({ view: 'session', key: key(1), record: null, turn: null });
    await settle();
    showDetails(target);
    click(one(target, 'forget-button'));
    await settle();
    expect(one(target, 'forget-plan')).not.toBeNull();
    expect(one(target, 'forget-published')?.textContent).toContain('the next push from its repository');
    expect(one(target, 'forget-published')?.textContent).toContain('no pull brings it back');
    expect(one(target, 'forget-published')?.textContent).toContain('a teammate who pulled a copy before drops it at their next pull');
    expect(one(target, 'forget-team')).toBeNull();
  });

  it('after a forget, says the session is gone as a stale link does, and offers nothing to do on it', async () => {
    const { target, stores } = await render();
    stores.router.go({ view: 'session', key: key(1), record: null, turn: null });
    await settle();
    showDetails(target);
    click(one(target, 'forget-button'));
    await settle();
    click(one(target, 'forget-confirm'));
    await settle();
    const page = one(target, 'session-missing')!;
    expect(page.textContent).toContain('This session is not in the archive');
    expect(one(target, 'forget-result')?.textContent).toBe('Forgot 1 session and 23 records.');
    expect(target.textContent).not.toContain('Loading the session');
    expect(one(target, 'export-button')).toBeNull();
    expect(one(target, 'forget-button')).toBeNull();
    expect(one(target, 'session-recall')).toBeNull();
    // The archive changing (a sync after the forget) loads nothing back onto the page.
    stores.live.version++;
    await settle();
    expect(one(target, 'session-missing')).not.toBeNull();
    click(one(target, 'go-sessions'));
    await settle();
    expect(stores.router.current.view).toBe('sessions');
  });

  it('takes the focus into the forget dialog; Esc closes it as Cancel does and stays on the session', async () => {
    const { target, stores } = await render();
    stores.router.go({ view: 'session', key: key(1), record: null, turn: null });
    await settle();
    showDetails(target);
    const forget = one(target, 'forget-button') as HTMLButtonElement;
    forget.focus();
    click(forget);
    await settle();
    const dialog = one(target, 'forget-plan')!;
    expect(document.activeElement).toBe(dialog);
    press('Escape', dialog);
    await settle();
    expect(one(target, 'forget-plan')).toBeNull();
    expect(stores.router.current.view).toBe('session');
    expect(document.activeElement).toBe(one(target, 'forget-button'));
    // Cancel puts the focus back the same way.
    click(one(target, 'forget-button'));
    await settle();
    click(one(target, 'forget-cancel'));
    await settle();
    expect(one(target, 'forget-plan')).toBeNull();
    expect(document.activeElement).toBe(one(target, 'forget-button'));
  });

  it('names, before a forget, the databases a rebuild set aside that it cleans, deletes or cannot clean', async () => {
    const fake = fakeBackend();
    const aside = [
      { path: '/d/cairn.db.damaged-20260101T000000Z', sessions: 1, fate: 'removed', why: null },
      { path: '/d/cairn.db.rebuilding', sessions: 0, fate: 'deleted', why: null },
      {
        path: "/d/it's\u202E.damaged",
        // As the core writes it: the file itself, its hidden character escaped.
        rm: "rm -f $'/d/it\\'s\\xe2\\x80\\xae.damaged' $'/d/it\\'s\\xe2\\x80\\xae.damaged-wal' $'/d/it\\'s\\xe2\\x80\\xae.damaged-shm'",
        sessions: 1,
        fate: 'holds',
        why: 'its schema (version 3) is not the archive’s (48)',
      },
    ];
    mockIPC(
      async (cmd, args) => {
        const answer = await fake.handler(cmd, args);
        return cmd === 'forget_preview' ? { ...(answer as object), set_aside: aside } : answer;
      },
      { shouldMockEvents: true },
    );
    const target = document.createElement('div');
    document.body.append(target);
    const stores = createStores();
    component = mount(App, { target, props: { stores } });
    await settle();
    stores.router.go({ view: 'session', key: key(1), record: null, turn: null });
    await settle();
    showDetails(target);
    click(one(target, 'forget-button'));
    await settle();
    const lines = [...one(target, 'forget-set-aside')!.querySelectorAll('p')].map((p) => p.textContent?.replace(/\s+/g, ' ').trim());
    expect(lines).toEqual([
      'Also removed from a database a rebuild set aside: /d/cairn.db.damaged-20260101T000000Z.',
      'Also deleted: /d/cairn.db.rebuilding, left by a rebuild that did not finish (a half-made copy of the archive).',
      "/d/it's.damaged, set aside by a rebuild, cannot be cleaned: it holds this session (its schema (version 3) is not the archive’s (48)). Delete it once the rebuilt archive is checked: rm -f $'/d/it\\'s\\xe2\\x80\\xae.damaged' $'/d/it\\'s\\xe2\\x80\\xae.damaged-wal' $'/d/it\\'s\\xe2\\x80\\xae.damaged-shm'",
    ]);
    // Said before the button that forgets.
    expect(one(target, 'forget-confirm')).not.toBeNull();
    expect(fake.calls.some((c) => c.cmd === 'forget_sessions')).toBe(false);
  });

  it('opens from the skim timeline at a turn, expands turns into records', async () => {
    const { target, stores } = await render();
    click(all(target, 'branch-row')[0]);
    await settle();
    click(one(target, 'skim-session')!.querySelector('button.open'));
    await settle();

    expect(stores.router.current).toMatchObject({ view: 'session', key: key(1) });
    const head = one(target, 'session-head')!;
    expect(head.textContent).toContain('claude-opus-4');
    expect(one(target, 'session-tokens')!.textContent).toContain('12.3k');
    expect(head.textContent).toContain('1 sub-agent session');
    expect(all(target, 'turn-row')).toHaveLength(5);

    click(all(target, 'turn-row')[0]!.querySelector('button'));
    await settle();
    const records = all(target, 'record-row');
    expect(records.map((r) => r.dataset.kind)).toEqual(['message', 'tool_call', 'tool_call', 'tool_result']);
    // Transcript text is text, never HTML.
    expect(records[0]!.textContent).toContain('<b>not bold</b>');
    expect(records[0]!.querySelector('b')).toBeNull();
    expect(records[1]!.querySelector('[data-testid="tool-diff"]')!.textContent).toContain('-return false;');
    expect(records[2]!.querySelector('[data-testid="tool-command"]')!.textContent).toContain('$ npm test -- login');
    // Tool output starts folded.
    expect(records[3]!.textContent).toContain('test 2 ... ok');
    expect(records[3]!.textContent).not.toContain('test 19 ... ok');
    click(records[3]!.querySelector('button.fold'));
    await settle();
    expect(all(target, 'record-row')[3]!.textContent).toContain('test 19 ... ok');

    press('Escape');
    await settle();
    expect(stores.router.current.view).toBe('branches');
  });

  it('follows a record link: the turn opens and the record is highlighted', async () => {
    const { target, stores } = await render();
    expect(stores.router.open(`cairn://session/${key(1)}?record=9`)).toBe(true);
    await settle();
    const highlighted = target.querySelector<HTMLElement>('.record.highlighted')!;
    expect(highlighted.dataset.ordinal).toBe('9');
    expect(stores.session.expanded.has(2)).toBe(true);
    expect(highlighted.closest('[role="option"]')!.getAttribute('aria-selected')).toBe('true');
  });

  it('says so when a record link points past the session', async () => {
    const { target, stores } = await render();
    stores.router.open(`cairn://session/${key(1)}?record=999`);
    await settle();
    expect(one(target, 'anchor-error')!.textContent).toContain('no record #999');
  });

  it('refuses a malformed link and says why', async () => {
    const { target, stores } = await render();
    expect(stores.router.open('cairn://session/../../etc?record=1')).toBe(false);
    await settle();
    expect(one(target, 'link-error')!.textContent).toContain('not a session key');
    expect(stores.router.current.view).toBe('branches');
  });

  it('refuses a link whose %-escapes hide colour codes or a right-to-left override', async () => {
    const { target, stores } = await render();
    expect(stores.router.open('cairn://search?q=%1b%5b31mred%1b%5b0m%e2%80%ae')).toBe(false);
    await settle();
    expect(one(target, 'link-error')!.textContent).toContain('control or invisible formatting characters');
    expect(stores.router.current.view).toBe('branches');
  });

  it('opens the link a second launch of the app hands over', async () => {
    const { target, stores } = await render();
    await emit('open-link', { link: `cairn://session/${key(1)}?record=9` });
    await settle();
    expect(stores.router.current).toMatchObject({ view: 'session', key: key(1), record: 9 });
    expect(target.querySelector<HTMLElement>('.record.highlighted')!.dataset.ordinal).toBe('9');
    // A handed-over link is validated like any other.
    await emit('open-link', { link: 'cairn://session/%E0%A4%A?record=1' });
    await settle();
    expect(one(target, 'link-error')!.textContent).toContain('malformed %-escape');
    expect(stores.router.current).toMatchObject({ view: 'session', key: key(1) });
  });

  it('says why the shell refused a second launch’s link, never repeating the link', async () => {
    const { target, stores } = await render();
    await emit('link-refused', { reason: 'it names no place in Cairn' });
    await settle();
    const banner = one(target, 'link-error')!;
    expect(banner.getAttribute('role')).toBe('alert');
    expect(banner.textContent).toContain(
      'A link from outside was not opened: it names no place in Cairn. Open the place from the tabs above, or copy its link from Cairn again.',
    );
    expect(stores.router.current.view).toBe('branches');
    // Dismissed, it goes; the next refusal says its own reason.
    click(banner.querySelector('button'));
    await settle();
    expect(one(target, 'link-error')).toBeNull();
    await emit('link-refused', { reason: 'it is not a cairn:// link' });
    await settle();
    expect(one(target, 'link-error')!.textContent).toContain('not opened: it is not a cairn:// link.');
  });

  it('says why the link the app was started with was refused', async () => {
    const { target, stores } = await render({ launchRefused: 'it is longer than 2048 bytes' });
    expect(one(target, 'link-error')!.textContent).toContain('A link from outside was not opened: it is longer than 2048 bytes.');
    expect(stores.router.current.view).toBe('branches');
  });

  it('opens a sub-agent session nested under its parent', async () => {
    const { target, stores } = await render();
    stores.router.open(`cairn://session/${key(1)}`);
    await settle();
    showDetails(target);
    click(one(target, 'subagent-link'));
    await settle();
    expect(stores.router.current).toMatchObject({ view: 'session', key: key(900) });
  });

  it('folds the header’s secondary parts in a short window, says what they are, and keeps the choice', async () => {
    const { target, stores } = await render();
    stores.router.go({ view: 'session', key: key(1), record: null, turn: null });
    await settle();
    const toggle = one(target, 'session-more-toggle')!;
    expect(toggle.getAttribute('aria-expanded')).toBe('false');
    expect(toggle.textContent).toContain('1 file edited, 1 sub-agent session, export, forget and resume');
    expect(one(target, 'session-more')).toBeNull();
    expect(one(target, 'export-button')).toBeNull();
    // The title, facts and timeline stay.
    expect(one(target, 'session-tokens')).not.toBeNull();
    expect(all(target, 'turn-row').length).toBeGreaterThan(0);
    // A button, so Tab reaches it and Enter or Space opens it.
    expect(toggle.tagName).toBe('BUTTON');
    click(toggle);
    flushSync();
    expect(toggle.getAttribute('aria-expanded')).toBe('true');
    expect(one(target, 'export-button')).not.toBeNull();
    expect(one(target, 'session-resume')).not.toBeNull();
    // The next session opens as the person left the last one.
    stores.router.go({ view: 'session', key: key(2), record: null, turn: null });
    await settle();
    expect(one(target, 'session-more-toggle')!.getAttribute('aria-expanded')).toBe('true');
    expect(one(target, 'export-button')).not.toBeNull();
  });

  it('shows everything at once in a tall window', async () => {
    const height = window.innerHeight;
    window.innerHeight = 1000;
    try {
      const { target, stores } = await render();
      stores.router.go({ view: 'session', key: key(1), record: null, turn: null });
      await settle();
      expect(one(target, 'session-more-toggle')!.getAttribute('aria-expanded')).toBe('true');
      expect(one(target, 'export-button')).not.toBeNull();
    } finally {
      window.innerHeight = height;
    }
  });

  it('says once, as the page, that a session is not in the archive, with the way to Sessions', async () => {
    const missing = {
      kind: 'not_found',
      message: 'not found: session "sha256-00"; find sessions with `cairn sessions` or `cairn skim`',
      hint: null,
    };
    const { target, stores } = await render({
      failOnce: { session_detail: missing, session_timeline: missing, session_resume: missing, recall_for_session: missing },
    });
    stores.router.go({ view: 'session', key: 'sha256-00', record: null, turn: null });
    await settle();
    const page = one(target, 'session-missing')!;
    expect(page.textContent).toContain('This session is not in the archive');
    expect(page.textContent).toContain('sha256-00');
    // No header to an untitled nothing, nothing to export or forget, no second copy of the error.
    expect(one(target, 'session-head')).toBeNull();
    expect(one(target, 'export-button')).toBeNull();
    expect(one(target, 'forget-button')).toBeNull();
    expect(one(target, 'session-recall')).toBeNull();
    expect(target.textContent).not.toContain('cairn sessions');
    click(one(target, 'go-sessions'));
    await settle();
    expect(stores.router.current.view).toBe('sessions');
  });

  it('shows turn previews as a person reads their Markdown', async () => {
    const { target, stores } = await render();
    stores.router.go({ view: 'session', key: key(1), record: null, turn: null });
    await settle();
    const answer = all(target, 'turn-row')[0]!.querySelector('.assistant')!;
    expect(answer.textContent).toBe('Fixed bug 0 and added a test in tests/*.rs.');
  });
});

describe('keyboard', () => {
  it('moves with j/k, opens with Enter and goes back with Esc', async () => {
    const { target, stores } = await render();
    press('j');
    expect(stores.branches.selectedRow?.branch.name).toBe('feature/login');
    press('j');
    expect(stores.branches.selectedRow?.branch.name).toBe('main');
    press('k');
    press('Enter');
    await settle();
    expect(stores.skim.target).toBe('ref:refs/heads/feature/login');
    expect(stores.branches.pane).toBe('timeline');
    press('j');
    press('Enter');
    await settle();
    expect(stores.router.current).toMatchObject({ view: 'session', key: key(1), turn: 0 });
    expect(target.querySelector('[data-testid="turn-row"][data-turn-index="0"]')).not.toBeNull();
    expect(stores.session.expanded.has(0)).toBe(true);
    press('Escape');
    await settle();
    expect(stores.router.current.view).toBe('branches');
    press('Escape');
    expect(stores.branches.pane).toBe('list');
  });

  it('leaves the words on screen alone when Search is come back to by its tab', async () => {
    const { target, stores } = await render();
    press('/');
    await settle();
    await ask('flaky');
    stores.router.go({ view: 'sessions' });
    await settle();
    click(target.querySelector('[data-tab="search"]'));
    await settle();
    const input = target.querySelector<HTMLInputElement>('#search-input')!;
    expect(input.value).toBe('flaky');
    // Not focused with its words selected: a `j` next goes to the list, not over the words.
    expect(document.activeElement).not.toBe(input);
  });

  it('/ focuses the search box and Esc leaves it', async () => {
    const { target, stores } = await render();
    press('/');
    await settle();
    expect(stores.router.current.view).toBe('search');
    const input = target.querySelector<HTMLInputElement>('#search-input')!;
    expect(document.activeElement).toBe(input);
    press('Escape', input);
    expect(document.activeElement).not.toBe(input);
  });
});

/** Type `text` into the search box and submit it. */
async function ask(text: string): Promise<void> {
  const input = document.querySelector<HTMLInputElement>('#search-input')!;
  input.value = text;
  input.dispatchEvent(new Event('input', { bubbles: true }));
  input.form!.dispatchEvent(new Event('submit', { bubbles: true, cancelable: true }));
  await settle();
}

describe('search', () => {
  it('finds records with filters, marks matches as text, and opens the record', async () => {
    const { target, stores } = await render();
    press('/');
    await settle();
    const input = target.querySelector<HTMLInputElement>('#search-input')!;
    input.value = 'flaky';
    input.dispatchEvent(new Event('input', { bubbles: true }));
    const agent = target.querySelector<HTMLSelectElement>('[data-testid="search-agent"]')!;
    agent.value = 'codex';
    agent.dispatchEvent(new Event('change', { bubbles: true }));
    await settle();

    const query = calls.filter((c) => c.cmd === 'search_archive').at(-1)!.args.query;
    expect(query).toEqual({ text: 'flaky', agent: 'codex', limit: 200 });
    const hits = all(target, 'search-hit');
    expect(hits).toHaveLength(3);
    expect(hits[0]!.querySelector('mark')!.textContent).toBe('flaky');
    expect(hits[0]!.querySelector('script')).toBeNull();
    expect(hits[0]!.textContent).toContain('<script>');

    input.blur();
    press('j');
    press('Enter');
    await settle();
    expect(stores.router.current).toEqual({ view: 'session', key: key(1), record: 5, turn: null });
  });

  it('says when meaning was searched too, and counts the turns still waiting for a vector', async () => {
    const { target } = await render();
    press('/');
    await settle();
    await ask('nothing here');
    expect(one(target, 'search-empty')!.textContent).toContain('Nothing captured matches');
    expect(one(target, 'search-pending')).toBeNull();

    await ask('meaning nothing waiting');
    expect(one(target, 'search-empty')!.textContent!.replace(/\s+/g, ' ')).toContain('no turn is close enough in meaning');
    expect(one(target, 'search-pending')!.textContent).toBe(
      '4 turns captured since the last build wait for their vector and are found by words only until then.',
    );

    await ask('meaning waiting');
    expect(target.querySelector('#search-count')!.textContent).toContain('3 turns by meaning and words');
    expect(one(target, 'search-pending')!.textContent).toContain('4 turns captured since the last build');

    await ask('meaning built');
    expect(target.querySelector('#search-count')!.textContent).toContain('by meaning and words');
    expect(one(target, 'search-pending')).toBeNull();
  });

  it('keeps the last answer while a newer search runs, marked as out of date', async () => {
    const { target } = await render();
    press('/');
    await settle();
    await ask('flaky');
    const before = all(target, 'search-hit').length;
    expect(before).toBeGreaterThan(0);
    expect(one(target, 'search-stale')).toBeNull();

    held.add('search_archive');
    await ask('nothing here');
    expect(all(target, 'search-hit')).toHaveLength(before);
    expect(one(target, 'search-stale')!.textContent).toBe('Searching…');
    expect(target.querySelector('.results [aria-busy]')!.getAttribute('aria-busy')).toBe('true');

    release();
    await settle();
    expect(one(target, 'search-stale')).toBeNull();
    expect(target.querySelector('.results [aria-busy]')!.getAttribute('aria-busy')).toBe('false');
    // The empty state names the words it answered, not what the box holds since.
    const input = target.querySelector<HTMLInputElement>('#search-input')!;
    input.value = 'typed after';
    input.dispatchEvent(new Event('input', { bubbles: true }));
    flushSync();
    expect(one(target, 'search-empty')!.textContent).toContain('Nothing captured matches nothing here');
    // The words are isolated, so nothing typed can reorder the sentence around them.
    expect(one(target, 'search-empty')!.querySelector('bdi')!.textContent).toBe('nothing here');
  });

  it('asks a search again when the build its waiting turns waited for ends', async () => {
    await render();
    press('/');
    await settle();
    const searches = () => calls.filter((c) => c.cmd === 'search_archive').length;
    await ask('meaning built');
    const before = searches();
    await emit('meaning-finished', { embedded: 3, error: null });
    await settle();
    expect(searches()).toBe(before);

    await ask('meaning waiting');
    const waiting = searches();
    await emit('meaning-finished', { embedded: 4, error: null });
    await settle();
    expect(searches()).toBe(waiting + 1);
  });

  it('reports a query the backend rejects', async () => {
    // The last test's search (asked again when its build ended) may still be on its way: let
    // it land before the one failure is armed, or it takes it.
    await new Promise((resolve) => setTimeout(resolve, SEARCH_DELAY_MS + 50));
    const { target } = await render({ failOnce: { search_archive: 'cannot search for "\\"x": unterminated string; drop the leading quote' } });
    press('/');
    await settle();
    const input = target.querySelector<HTMLInputElement>('#search-input')!;
    input.value = '"x';
    input.dispatchEvent(new Event('input', { bubbles: true }));
    input.form!.dispatchEvent(new Event('submit', { bubbles: true, cancelable: true }));
    await settle();
    expect(one(target, 'search-error')!.textContent).toContain('drop the leading quote');
  });

  it('says a query it cannot read is the words to change, with no Retry that would fail again', async () => {
    // A search the last test typed may still be waiting out its delay: let it run before the one
    // failure is armed, or it would take it.
    await new Promise((resolve) => setTimeout(resolve, SEARCH_DELAY_MS + 50));
    const { target } = await render({
      failOnce: {
        search_archive: {
          kind: 'invalid',
          message: 'cannot search for “"x”: unterminated string; drop the leading quote to search for plain words',
          hint: null,
        },
      },
    });
    press('/');
    await settle();
    await ask('"x');
    const error = one(target, 'search-error')!;
    expect(error.querySelector('h2')!.textContent).toBe('This query cannot be searched');
    expect([...error.querySelectorAll('button')].map((b) => b.textContent)).not.toContain('Retry');
  });
});

describe('why', () => {
  it('asks why a commit of the branch timeline is there, and opens the turn that did it', async () => {
    const { target, stores } = await render();
    click(all(target, 'branch-row')[0]);
    await settle();
    click(one(target, 'why-commit'));
    await settle();

    expect(stores.router.current).toEqual({ view: 'search', q: 'abc1234', why: { repo: '/home/dev/shop', session: null } });
    expect(calls.filter((c) => c.cmd === 'why').at(-1)!.args).toEqual({
      target: 'abc1234',
      place: { type: 'repo', root: '/home/dev/shop' },
    });
    expect(one(target, 'why-commits')!.textContent).toContain('Fix the login bug');
    const sessions = all(target, 'why-session');
    expect(sessions).toHaveLength(1);
    expect(sessions[0]!.textContent).toContain('97%');
    expect(sessions[0]!.textContent).toContain('commit by session');
    click(one(target, 'why-turn'));
    await settle();
    expect(stores.router.current).toEqual({ view: 'session', key: key(1), record: 7, turn: null });
  });

  it('asks why a file a session edited is as it is, traced in the session’s folder', async () => {
    const { target, stores } = await render();
    expect(stores.router.open(`cairn://session/${key(1)}`)).toBe(true);
    await settle();
    showDetails(target);
    click(one(target, 'session-edited')!.querySelector('[data-testid="why-path"]'));
    await settle();
    expect(stores.router.current).toEqual({
      view: 'search',
      q: '/home/dev/shop/src/login.ts',
      why: { repo: null, session: key(1) },
    });
    expect(calls.filter((c) => c.cmd === 'why').at(-1)!.args).toEqual({
      target: '/home/dev/shop/src/login.ts',
      place: { type: 'session', session_key: key(1) },
    });
    expect(one(target, 'why-session-place')).not.toBeNull();
    // Enter opens the selected session at its most confident turn.
    press('Enter');
    await settle();
    expect(stores.router.current).toEqual({ view: 'session', key: key(1), record: 7, turn: null });
  });

  it('answers a description typed in Search without a repository', async () => {
    const { target, stores } = await render();
    press('/');
    await settle();
    click(one(target, 'search-mode-why'));
    const input = target.querySelector<HTMLInputElement>('#search-input')!;
    input.value = 'why does login retry';
    input.dispatchEvent(new Event('input', { bubbles: true }));
    input.form!.dispatchEvent(new Event('submit', { bubbles: true, cancelable: true }));
    await settle();
    expect(calls.filter((c) => c.cmd === 'why').at(-1)!.args).toEqual({
      target: 'why does login retry',
      place: { type: 'nowhere' },
    });
    // Ranked by a search, which proves nothing: no percentage reads as confidence.
    const first = all(target, 'why-session')[0]!.textContent!;
    // What the search matched, in words ("search found by turns" said nothing).
    expect(first).toContain('matched its turns, by their words or meaning');
    expect(first).not.toContain('found by');
    expect(first).not.toMatch(/\d+%/);
    expect(stores.search.whyFrom).toEqual({ repo: null, session: null });
    expect(one(target, 'search-pending')).toBeNull();

    input.value = 'why does login retry while waiting';
    input.dispatchEvent(new Event('input', { bubbles: true }));
    input.form!.dispatchEvent(new Event('submit', { bubbles: true, cancelable: true }));
    await settle();
    expect(one(target, 'search-pending')!.textContent).toBe(
      '1 turn captured since the last build waits for its vector and is found by words only until then.',
    );
  });
});

describe('live updates', () => {
  it('reloads the open view when the archive changes', async () => {
    await render();
    const before = calls.filter((c) => c.cmd === 'list_branches').length;
    await emit('archive-changed', { cause: 'watch', sessions_added: 1, sessions_updated: 0, records_added: 4 });
    await settle();
    expect(calls.filter((c) => c.cmd === 'list_branches').length).toBe(before + 1);
  });

  it('tells the shell the window is ready, then catches up with a sync', async () => {
    const { target } = await render();
    await new Promise((resolve) => setTimeout(resolve, 30));
    await settle();
    expect(calls.map((c) => c.cmd)).toContain('app_ready');
    expect(calls.map((c) => c.cmd)).toContain('sync_archive');
    expect(target.textContent).toContain('Live: 1 folder');
  });
});

describe('settings', () => {
  it('offers to read again what an older Cairn read, checks first, and stops offering once read', async () => {
    const { target } = await render({ readBefore: 3 });
    const offer = () => one(target, 'read-again-offer');
    expect(offer()?.textContent?.trim()).toBe('3 sessions can be read again');
    click(offer());
    await settle();
    expect(one(target, 'settings-view')).not.toBeNull();
    expect(document.activeElement?.getAttribute('data-testid')).toBe('reindex-check');
    click(one(target, 'reindex-check'));
    await settle();
    expect(one(target, 'reindex-result')!.textContent).toBe(
      '2 of 6 sessions would read differently (6 records changed, new or gone).',
    );
    expect(one(target, 'reindex-changed')!.textContent).toContain('session-1');
    expect(offer()).not.toBeNull();
    click(one(target, 'reindex-run'));
    await settle();
    expect(calls.filter((c) => c.cmd === 'reindex_archive').map((c) => (c.args.request as { dry_run: boolean }).dry_run)).toEqual([true, false]);
    expect(one(target, 'reindex-result')!.textContent).toMatch(/^Read again: 2 of 6 sessions read differently/);
    // The reindex told the window; the footer asked again and has nothing more to offer.
    expect(offer()).toBeNull();
  });

  it('shows sources, installs a hook after showing the diff, and previews redaction', async () => {
    const { target, stores } = await render();
    stores.router.go({ view: 'settings' });
    await settle();
    expect(one(target, 'sources-claude')!.textContent).toContain('/home/dev/.claude/projects');
    expect(one(target, 'sources-codex')!.textContent).toContain('not found');
    // Which `cairn` the hook would run, and where it was found.
    expect(one(target, 'cli-path')!.textContent).toContain('/usr/local/bin/cairn, found on PATH in /usr/local/bin');
    expect(one(target, 'health-checks')!.textContent).toContain('30 days');
    expect(one(target, 'privacy-output')!.textContent).toContain('[REDACTED]');

    const hook = one(target, 'hook-claude')!;
    expect(hook.textContent).toContain('not installed');
    click([...hook.querySelectorAll('button')].find((b) => b.textContent?.includes('Install…')));
    await settle();
    expect(one(target, 'hook-claude')!.textContent).toContain('"hooks"');
    click([...one(target, 'hook-claude')!.querySelectorAll('button')].find((b) => b.textContent?.includes('Install the hook')));
    await settle();
    expect(calls.filter((c) => c.cmd === 'install_hook').map((c) => c.args.dryRun)).toEqual([true, false]);
    expect(one(target, 'hook-claude')!.textContent).toContain('backup');
  });

  it('lists each agent’s folders on one line and edits them behind Change…', async () => {
    const { target, stores } = await render();
    stores.router.go({ view: 'settings' });
    await settle();
    expect(one(target, 'sources-found')!.textContent).toMatch(/^Found for 1 of \d+ agents\.$/);
    const row = () => one(target, 'sources-claude')!;
    const button = (label: string) => [...row().querySelectorAll('button')].find((b) => b.textContent?.trim() === label);
    expect(row().querySelector('textarea')).toBeNull();
    // An agent with no folder says so; Aider's histories are found in the repositories.
    expect(one(target, 'sources-gemini')!.textContent).toContain('No folder set.');
    expect(one(target, 'sources-aider-repositories')!.textContent!.trim()).toBe(
      'Read from every repository a captured session ran in.',
    );

    // Each Change… is named with its agent for a screen reader, and says Cancel… while open.
    const names = [...target.querySelectorAll('[data-testid^="sources-"] button[aria-controls]')].map((b) => b.getAttribute('aria-label'));
    expect(names).toContain('Change the Claude folders');
    expect(new Set(names).size).toBe(names.length);
    // Opened, edited, given up with Esc: nothing saved, the list as it was, the focus on Change….
    click(button('Change…'));
    await settle();
    expect(button('Cancel')!.getAttribute('aria-label')).toBe('Cancel changing the Claude folders');
    await settle();
    const editor = row().querySelector('textarea')!;
    expect(document.activeElement).toBe(editor);
    expect(editor.value).toBe('/home/dev/.claude/projects');
    editor.value = '/elsewhere';
    editor.dispatchEvent(new Event('input', { bubbles: true }));
    await settle();
    press('Escape', editor);
    await settle();
    expect(row().querySelector('textarea')).toBeNull();
    expect(document.activeElement).toBe(button('Change…'));
    expect(stores.settings.drafts.claude).toBe('/home/dev/.claude/projects');
    expect(stores.router.current.view).toBe('settings');

    // Saved: the editor closes and says what to do next.
    click(button('Change…'));
    await settle();
    const again = row().querySelector('textarea')!;
    again.value = '/data/claude';
    again.dispatchEvent(new Event('input', { bubbles: true }));
    await settle();
    click(button('Save'));
    await settle();
    expect(calls.filter((c) => c.cmd === 'set_source_dirs').map((c) => c.args)).toEqual([{ agent: 'claude', dirs: ['/data/claude'] }]);
    expect(row().querySelector('textarea')).toBeNull();
    expect(row().textContent).toContain('/data/claude');
    expect(row().textContent).toContain('Saved. Sync to import from the new folders.');
  });

  it('jumps to a section from the bar at the top of the page', async () => {
    const { target, stores } = await render();
    stores.router.go({ view: 'settings' });
    await settle();
    const scrolled: Element[] = [];
    const original = Element.prototype.scrollIntoView;
    Element.prototype.scrollIntoView = function (this: Element) {
      scrolled.push(this);
    };
    try {
      const bar = one(target, 'settings-jump')!;
      expect([...bar.querySelectorAll('button')].map((b) => b.textContent)).toEqual([
        'Folders',
        'Hooks',
        'MCP',
        'Data',
        'Meaning',
        'Extraction',
        'Programs',
        'Team',
        'Privacy',
      ]);
      click([...bar.querySelectorAll('button')].find((b) => b.textContent === 'Team'));
      const heading = target.querySelector('#team-title');
      expect(heading?.textContent).toBe('Team');
      expect(scrolled).toEqual([heading]);
      expect(document.activeElement).toBe(heading);
      // Every button has its section.
      for (const b of bar.querySelectorAll('button')) click(b);
      expect(scrolled.map((h) => h.tagName)).toEqual(Array(10).fill('H3'));
    } finally {
      Element.prototype.scrollIntoView = original;
    }
  });

  it('removes an installed hook after showing the diff', async () => {
    const { target, stores } = await render();
    stores.router.go({ view: 'settings' });
    await settle();
    const hook = one(target, 'hook-codex')!;
    expect(hook.textContent).toContain('installed');
    // Not installed, nothing to remove.
    expect([...one(target, 'hook-claude')!.querySelectorAll('button')].some((b) => b.textContent?.includes('Remove…'))).toBe(false);
    click([...hook.querySelectorAll('button')].find((b) => b.textContent?.includes('Remove…')));
    await settle();
    expect(one(target, 'hook-codex')!.textContent).toContain('- "Stop"');
    click([...one(target, 'hook-codex')!.querySelectorAll('button')].find((b) => b.textContent?.includes('Remove the hooks')));
    await settle();
    expect(calls.filter((c) => c.cmd === 'uninstall_hook').map((c) => c.args.dryRun)).toEqual([true, false]);
    expect(calls.some((c) => c.cmd === 'install_hook')).toBe(false);
    expect(one(target, 'hook-codex')!.textContent).toContain('Removed from /home/dev/.codex/hooks.json');
  });

  it('shows recall extraction coverage, generations and the last pass, and checks the endpoint', async () => {
    const { target, stores } = await render();
    stores.router.go({ view: 'settings' });
    await settle();
    const panel = one(target, 'extract-panel')!;
    expect(one(target, 'extract-enabled')!.textContent).toContain('qwen3:8b');
    expect(one(target, 'extract-enabled')!.textContent).toContain('after syncs');
    // 3 done + 1 partial + 2 not started = 6 eligible.
    expect(one(target, 'extract-coverage')!.textContent).toMatch(/3 of 6 eligible sessions read, 1 partly/);
    const gens = one(target, 'extract-generations')!.textContent!;
    expect(gens).toMatch(/active\s*qwen3:8b/);
    expect(gens).toMatch(/retired\s*llama3\.1:8b/);
    expect(one(target, 'extract-last-run')!.textContent).toContain('3 new entries');
    expect(one(target, 'extract-checks')).toBeNull();

    click([...panel.querySelectorAll('button')].find((b) => b.textContent?.includes('Check saved setup')));
    await settle();
    expect(calls.filter((c) => c.cmd === 'extract_doctor').length).toBe(1);
    const checks = all(target, 'extract-checks')[0]!.querySelectorAll('li');
    expect([...checks].map((li) => [li.className, li.querySelector('.name')!.textContent])).toEqual([
      ['ok', 'models'],
      ['fail', 'probe'],
    ]);
    expect(checks[1]!.textContent).toContain('not valid JSON');
  });

  it('offers, once, to distil what the agents learned, leading to the extraction form', async () => {
    localStorage.removeItem('cairn.distil-offer.dismissed');
    const { target } = await render({ extractDisabled: true });
    await settle();
    const offer = one(target, 'distil-offer')!;
    expect(offer.textContent).toContain('Distil what your agents learned');
    click(offer.querySelector('[data-testid="setup-extraction"]'));
    await settle();
    expect(one(target, 'extract-panel')).not.toBeNull();
    expect(localStorage.getItem('cairn.distil-offer.dismissed')).toBe('1');
  });

  it('does not offer extraction when a generator is configured', async () => {
    localStorage.removeItem('cairn.distil-offer.dismissed');
    const { target } = await render();
    await settle();
    expect(one(target, 'distil-offer')).toBeNull();
  });

  it('sets extraction up in the window: pick a detected server, test, start', async () => {
    const { target, stores } = await render({ extractDisabled: true });
    stores.router.go({ view: 'settings' });
    await settle();
    const found = one(target, 'extract-detected')!;
    expect(found.textContent).toContain('claude 2.1.3 (Claude Code)');
    expect(found.textContent).toContain('OpenAI (key in OPENAI_API_KEY)');
    // Nothing chosen yet: Test and Start say what is missing instead.
    expect(one(target, 'extract-gap')!.textContent).toContain('base URL');
    expect((one(target, 'extract-start') as HTMLButtonElement).disabled).toBe(true);
    const ollama = [...found.querySelectorAll('li')].find((li) => li.textContent?.includes('Ollama'))!;
    click(ollama.querySelector('input'));
    await settle();
    expect((one(target, 'extract-endpoint') as HTMLInputElement).value).toBe('http://127.0.0.1:11434/v1');
    expect((one(target, 'extract-model') as HTMLInputElement).value).toBe('qwen3:8b');
    expect(one(target, 'extract-gap')).toBeNull();
    click(one(target, 'extract-test'));
    await settle();
    const result = one(target, 'extract-test-result')!.textContent!;
    expect(result).toContain('port 4173');
    expect(result).toContain('Dev server on 4173');
    expect(calls.filter((c) => c.cmd === 'extract_save')).toEqual([]);
    click(one(target, 'extract-start'));
    await settle();
    const saves = calls.filter((c) => c.cmd === 'extract_save');
    expect(saves.length).toBe(1);
    expect(saves[0]!.args.setup).toMatchObject({ enabled: true, generator: 'endpoint', model: 'qwen3:8b' });
    expect(calls.filter((c) => c.cmd === 'extract_start').length).toBe(1);
    expect(one(target, 'extract-preview')!.textContent).toMatch(/6 sessions in 20 pieces \(a long session is read in several\)/);
  });

  it('shows why a setup was refused, with the hint', async () => {
    const { target, stores } = await render({ extractDisabled: true });
    stores.router.go({ view: 'settings' });
    await settle();
    const found = one(target, 'extract-detected')!;
    const key = [...found.querySelectorAll('li')].find((li) => li.textContent?.includes('OpenAI'))!;
    click(key.querySelector('input'));
    await settle();
    // A paid API asks for prices (for the cost estimate).
    expect(one(target, 'extract-price-in')).not.toBeNull();
    const model = one(target, 'extract-model') as HTMLInputElement;
    model.value = 'gpt-x';
    model.dispatchEvent(new Event('input'));
    const variable = one(target, 'extract-key-var') as HTMLInputElement;
    // A key is no variable's name: the form says so before anything is sent, and nothing starts.
    variable.value = 'sk-pasted-the-key';
    variable.dispatchEvent(new Event('input'));
    await settle();
    expect(one(target, 'extract-gap')!.textContent).toContain('never the key itself');
    expect((one(target, 'extract-start') as HTMLButtonElement).disabled).toBe(true);
    // One only the core can tell from a name is refused on Save, said once, its emphasis as emphasis.
    variable.value = 'sk_pasted_the_key';
    variable.dispatchEvent(new Event('input'));
    await settle();
    click(one(target, 'extract-test'));
    await settle();
    click(one(target, 'extract-save'));
    await settle();
    const refusal = one(target, 'extract-save-error')!;
    expect(refusal.textContent).toContain('the name of an environment variable');
    expect(refusal.textContent).not.toContain('*');
    expect(refusal.querySelector('em')!.textContent).toBe('name');
    expect(target.querySelectorAll('[data-testid="extract-panel"] .error[role="alert"]')).toHaveLength(1);
    expect((one(target, 'extract-start') as HTMLButtonElement).disabled).toBe(true);
    // Corrected, it may start again.
    variable.value = 'OPENAI_API_KEY';
    variable.dispatchEvent(new Event('input'));
    await settle();
    expect((one(target, 'extract-start') as HTMLButtonElement).disabled).toBe(false);
  });

  it('shows a running pass in the status bar, then badges the inbox tab until it is seen', async () => {
    const { target, stores } = await render();
    stores.router.go({ view: 'recall', tab: 'corpus', insight: null });
    await settle();
    expect(one(target, 'extract-status')).toBeNull();
    const progress = (event: Record<string, unknown>) => emit('extract-progress', { event });
    await progress({ event: 'pass_started', fingerprint: 'fp', sessions: 2 });
    await progress({ event: 'session_started', session_key: 'a', title: 'A', units_total: 4, units_todo: 4 });
    await progress({ event: 'unit_done', session_key: 'a', unit: 2, units_total: 4, entries: 3 });
    await settle();
    // One of two sessions half read: a quarter of the pass; three entries so far.
    expect(one(target, 'extract-status')!.querySelector('[role="progressbar"]')!.getAttribute('aria-valuenow')).toBe('25');
    expect(one(target, 'extract-new-entries')!.textContent).toBe('3 new entries');
    await progress({ event: 'session_done', session_key: 'a', entries: 3 });
    await progress({ event: 'session_started', session_key: 'b', title: 'B', units_total: 1, units_todo: 1 });
    await progress({ event: 'unit_done', session_key: 'b', unit: 1, units_total: 1, entries: 1 });
    await settle();
    expect(one(target, 'extract-new-entries')!.textContent).toBe('4 new entries');
    const report = { fingerprint: 'fp', sessions: 2, failed: 0, units: 5, entries: 4, calls: 5, usage: { prompt_tokens: 0, completion_tokens: 0 }, activated: true, aborted: null, cancelled: false, failures: [] };
    await emit('extract-finished', { kind: 'incremental', report, error: null });
    await settle();
    expect(one(target, 'extract-status')).toBeNull();
    expect(one(target, 'inbox-badge')!.textContent).toBe('4 new');
    // Seeing the inbox clears the badge.
    (target.querySelector('[data-recall-tab="inbox"]') as HTMLButtonElement).click();
    await settle();
    expect(one(target, 'inbox-badge')).toBeNull();
    // A pass ending while the inbox is on screen is seen at once.
    await emit('extract-finished', { kind: 'incremental', report: { ...report, entries: 2 }, error: null });
    await settle();
    expect(one(target, 'inbox-badge')).toBeNull();
  });

  it.each([
    ['manual', 'only when you press Run now'],
    ['nightly', 'each night'],
  ] as const)('says passes run as the saved schedule (%s) says, not after syncs', async (schedule, says) => {
    const { target, stores } = await render({ extractSchedule: schedule });
    stores.router.go({ view: 'settings' });
    await settle();
    const line = one(target, 'extract-enabled')!.textContent!;
    expect(line).toContain(says);
    expect(line).not.toContain('after syncs');
  });

  it('computes the turns’ vectors from Settings, following the build to the end', async () => {
    const { target, stores } = await render({ meaningWaiting: 1200 });
    stores.router.go({ view: 'settings' });
    await settle();
    expect(one(target, 'meaning-status')!.textContent).toContain('No turn has a vector yet');
    expect(one(target, 'meaning-estimate')!.textContent).toContain('1,200 turns wait');
    click(one(target, 'meaning-build'));
    // The build's events come through the IPC layer; its end reads the status again.
    await vi.waitFor(async () => {
      await settle();
      expect(one(target, 'meaning-status')!.textContent).toContain('Every turn is searchable by meaning.');
    });
    expect(one(target, 'meaning-status')!.textContent).toContain('New turns get theirs after each sync.');
    expect(one(target, 'meaning-build')).toBeNull();
    expect(calls.filter((c) => c.cmd === 'meaning_build').length).toBe(1);
  });

  it('says where the missing model was looked for, with no button', async () => {
    const { target, stores } = await render({ meaningMissing: true });
    stores.router.go({ view: 'settings' });
    await settle();
    expect(one(target, 'meaning-problem')!.textContent).toContain('scripts/fetch-model.sh');
    expect(one(target, 'meaning-build')).toBeNull();
  });

  it('says how to turn extraction on when it is off, and reloads when a pass finishes', async () => {
    const { target, stores } = await render({ extractDisabled: true });
    stores.router.go({ view: 'settings' });
    await settle();
    expect(one(target, 'extract-enabled')!.textContent).toContain('Choose who reads your sessions');
    const before = calls.filter((c) => c.cmd === 'extract_status').length;
    await emit('extract-finished', { kind: 'incremental', report: null, error: null });
    await settle();
    expect(calls.filter((c) => c.cmd === 'extract_status').length).toBe(before + 1);
  });
});
