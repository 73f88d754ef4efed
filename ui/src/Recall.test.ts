// Recall in the window over a mocked IPC layer (the generated bindings run for real): review in
// the inbox, the trusted corpus, evidence links, the session's panel, Recall search, and
// generated insights (safe rendering, deep links, exports).
import { afterEach, describe, expect, it } from 'vitest';
import { flushSync, mount, tick, unmount } from 'svelte';
import { clearMocks, mockIPC } from '@tauri-apps/api/mocks';
import App from './App.svelte';
import { createStores, type Stores } from './lib/stores';
import { READ_ONLY_TITLE } from './lib/read-only';
import { sanitize, safeHref } from './lib/safe-html';
import { fakeBackend, HOSTILE_HTML, key, type FakeOptions } from './testing/fake-backend';

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

async function render(link?: string, options: FakeOptions = {}) {
  const fake = fakeBackend(options);
  mockIPC(fake.handler, { shouldMockEvents: true });
  const target = document.createElement('div');
  document.body.append(target);
  const stores: Stores = createStores();
  component = mount(App, { target, props: { stores } });
  await settle();
  if (link) {
    stores.router.open(link);
    await settle();
  }
  return { target, stores, calls: fake.calls };
}

const all = (target: HTMLElement, testid: string) => [...target.querySelectorAll<HTMLElement>(`[data-testid="${testid}"]`)];
const one = (target: HTMLElement, selector: string) => target.querySelector<HTMLElement>(selector);

function press(keyName: string, on: EventTarget = window) {
  on.dispatchEvent(new KeyboardEvent('keydown', { key: keyName, bubbles: true, cancelable: true }));
  flushSync();
}

function click(element: Element | null | undefined) {
  if (!(element instanceof HTMLElement)) throw new Error('nothing to click');
  element.click();
}

function choose(select: Element | null | undefined, value: string) {
  if (!(select instanceof HTMLSelectElement)) throw new Error('no select');
  select.value = value;
  select.dispatchEvent(new Event('change', { bubbles: true }));
}

const inboxIds = (target: HTMLElement) => all(target, 'inbox-item').map((e) => e.dataset.entryId);

describe('the keyboard in Recall', () => {
  it('searches Recall with / on Entries, and the archive from any other tab', async () => {
    const { target, stores } = await render('cairn://recall?tab=corpus');
    expect(stores.router.current.view).toBe('recall');
    press('/');
    await settle();
    expect(document.activeElement).toBe(one(target, '#recall-search'));
    expect(stores.router.current.view).toBe('recall');
    click(one(target, '[data-recall-tab="inbox"]'));
    await settle();
    press('/');
    await settle();
    expect(stores.router.current.view).toBe('search');
  });
});

describe('the review inbox', () => {
  it('edits then accepts an entry, which then shows in the trusted-only corpus and links to its record', async () => {
    const { target, stores, calls } = await render('cairn://recall?tab=inbox');
    expect(inboxIds(target)).toEqual(['rc-3', 'rc-4']);

    press('e');
    const title = one(target, '[data-testid="draft-title"]') as HTMLInputElement;
    title.value = 'Session hooks need tmux';
    title.dispatchEvent(new Event('input', { bubbles: true }));
    // Typing `a` in the field is text, not a shortcut.
    press('a', title);
    expect(calls.some((c) => c.cmd === 'recall_accept')).toBe(false);
    click(one(target, '[data-testid="accept"]'));
    await settle();
    const accepted = calls.find((c) => c.cmd === 'recall_accept');
    expect(accepted?.args).toEqual({ id: 'rc-3', edit: { title: 'Session hooks need tmux' } });
    expect(inboxIds(target)).toEqual(['rc-4']);

    click(one(target, '[data-recall-tab="corpus"]'));
    await settle();
    choose(one(target, '[data-testid="recall-show"]'), 'trusted');
    await settle();
    const search = one(target, '#recall-search') as HTMLInputElement;
    search.value = 'tmux';
    search.dispatchEvent(new Event('input', { bubbles: true }));
    await new Promise((r) => setTimeout(r, 250));
    await settle();
    const shown = all(target, 'recall-entry');
    expect(shown.map((e) => e.dataset.entryId)).toEqual(['rc-3']);
    expect(shown[0]?.textContent).toContain('Session hooks need tmux');
    expect(shown[0]?.dataset.trusted).toBe('true');

    const link = shown[0]?.querySelector<HTMLAnchorElement>('[data-testid="recall-evidence"]');
    expect(link?.getAttribute('href')).toBe(`cairn://session/${key(1)}?record=5`);
    click(link);
    await settle();
    expect(stores.router.current).toEqual({ view: 'session', key: key(1), record: 5, turn: null });
  });

  it('says which agent proposed an entry and opens the session it came from', async () => {
    const { target, stores } = await render('cairn://recall?tab=inbox');
    const items = all(target, 'inbox-item');
    const proposed = items.find((e) => e.dataset.entryId === 'rc-4');
    const plain = items.find((e) => e.dataset.entryId === 'rc-3');
    expect(plain?.querySelector('[data-testid="proposed-by"]')).toBeNull();
    const origin = proposed?.querySelector('[data-testid="proposed-by"]');
    expect(origin?.textContent).toContain('Proposed by codex (codex-mcp-client 0.1), turn 2');
    const link = origin?.querySelector<HTMLAnchorElement>('[data-testid="proposed-by-link"]');
    expect(link?.getAttribute('href')).toBe(`cairn://session/${key(1)}?record=6`);
    click(link);
    await settle();
    expect(stores.router.current).toEqual({ view: 'session', key: key(1), record: 6, turn: null });
  });

  it('offers no link for a proposal whose link is not a session of the archive', async () => {
    const { target } = await render('cairn://recall?tab=inbox', { hostileProposal: true });
    const origin = all(target, 'inbox-item')
      .find((e) => e.dataset.entryId === 'rc-4')
      ?.querySelector('[data-testid="proposed-by"]');
    expect(origin?.textContent).toContain('Proposed by codex');
    expect(origin?.textContent).toContain('(not in the archive)');
    expect(origin?.querySelector('a')).toBeNull();
  });

  it('triages with the keyboard: j moves, r rejects, a accepts', async () => {
    const { target, calls } = await render('cairn://recall?tab=inbox');
    const marked = () => all(target, 'inbox-item').filter((e) => e.classList.contains('selected')).map((e) => e.dataset.entryId);
    expect(marked()).toEqual(['rc-3']);
    press('j');
    expect(one(target, '[data-testid="inbox-review"]')?.dataset.entryId).toBe('rc-4');
    // The list marks the entry the letters act on, for the eye and for a screen reader.
    expect(marked()).toEqual(['rc-4']);
    expect(one(target, '[data-testid="inbox-item"][data-entry-id="rc-4"]')!.closest('[role="option"]')!.getAttribute('aria-selected')).toBe('true');
    press('r');
    await settle();
    expect(calls.filter((c) => c.cmd === 'recall_reject').map((c) => c.args.id)).toEqual(['rc-4']);
    expect(inboxIds(target)).toEqual(['rc-3']);
    // One key press took the entry away: the window says which, until the next review.
    const notice = one(target, '[data-testid="review-notice"]')!;
    expect(notice.getAttribute('role')).toBe('status');
    expect(notice.textContent).toContain('Rejected “The hook needs tmux installed”');
    press('a');
    await settle();
    // An accept is said too, with its own Undo.
    expect(one(target, '[data-testid="review-notice"]')!.textContent).toContain("Accepted “The hook calls tmux”: agents' briefs include it now");
    expect(calls.filter((c) => c.cmd === 'recall_accept').map((c) => c.args)).toEqual([{ id: 'rc-3', edit: null }]);
    expect(all(target, 'inbox-empty')).toHaveLength(1);
    // The empty inbox says what to do next and leads to the extraction form.
    const empty = one(target, '[data-testid="inbox-empty"]')!;
    expect(empty.textContent).toContain('A model reads your sessions');
    (empty.querySelector('[data-testid="setup-extraction"]') as HTMLButtonElement).click();
    await settle();
    expect(one(target, '[data-testid="extract-panel"]')).not.toBeNull();
  });

  it("says in Undo's notice which entry an accept had replaced is served again", async () => {
    const { target } = await render('cairn://recall?tab=inbox', { pendingReplacement: true });
    click(one(target, '[data-testid="accept"]'));
    await settle();
    click(one(target, '[data-testid="review-undo"]'));
    await settle();
    expect(one(target, '[data-testid="inbox-review"]')?.dataset.entryId).toBe('rc-3');
    expect(one(target, '[data-testid="review-notice"]')?.textContent).toContain(
      '“The hook calls tmux” is back in the inbox; “Tests need the fake clock” is served again in its place',
    );
  });

  it('takes an accept back with Undo: the entry waits in the inbox again, unreviewed', async () => {
    const { target, calls } = await render('cairn://recall?tab=inbox');
    click(one(target, '[data-testid="accept"]'));
    await settle();
    expect(inboxIds(target)).toEqual(['rc-4']);
    const notice = one(target, '[data-testid="review-notice"]')!;
    expect(notice.getAttribute('role')).toBe('status');
    expect(notice.textContent).toContain("Accepted “The hook calls tmux”: agents' briefs include it now");
    click(one(target, '[data-testid="review-undo"]'));
    await settle();
    expect(calls.filter((c) => c.cmd === 'recall_unaccept').map((c) => c.args)).toEqual([{ id: 'rc-3', previous: 'unreviewed_auto' }]);
    expect(inboxIds(target)).toContain('rc-3');
    expect(one(target, '[data-testid="inbox-review"]')?.dataset.entryId).toBe('rc-3');
    expect(one(target, '[data-testid="review-notice"]')).toBeNull();
  });

  it('narrows an entry to its branch and corrects its type in the edit form, keyboard first', async () => {
    const { target, calls } = await render('cairn://recall?tab=inbox');
    press('e');
    await settle();
    const type = one(target, '[data-testid="draft-type"]') as HTMLSelectElement;
    const scope = one(target, '[data-testid="draft-scope"]') as HTMLSelectElement;
    // The entry's own values shown; its branch and repository offered by name, nothing typed.
    expect(type.value).toBe('warning');
    expect([...type.options].map((o) => o.textContent)).toContain('debugging method');
    expect(scope.value).toBe('project');
    expect([...scope.options].map((o) => `${o.value}:${o.textContent}`)).toEqual([
      'branch:Only on branch feature/login',
      'project:All of this repository (shop)',
      'global:Every repository',
    ]);
    expect(one(target, '[data-testid="draft-scope-means"]')?.textContent).toContain('every branch of this repository (shop)');
    // Reached by the keyboard; a key typed on a select is the select's, not a review.
    scope.focus();
    expect(document.activeElement).toBe(scope);
    press('a', scope);
    expect(calls.some((c) => c.cmd === 'recall_accept')).toBe(false);
    choose(type, 'procedure');
    choose(scope, 'branch');
    await settle();
    expect(one(target, '[data-testid="draft-scope-means"]')?.textContent).toBe("Agents' briefs include it only in sessions on feature/login.");
    click(one(target, '[data-testid="accept"]'));
    await settle();
    expect(calls.filter((c) => c.cmd === 'recall_accept').map((c) => c.args)).toEqual([{ id: 'rc-3', edit: { type: 'procedure', scope: 'branch' } }]);
    expect(one(target, '[data-testid="review-notice"]')?.textContent).toContain("agents' briefs on feature/login include it now");

    // Undo takes the accept back; the core keeps the edit, and the notice says so.
    click(one(target, '[data-testid="review-undo"]'));
    await settle();
    expect(calls.filter((c) => c.cmd === 'recall_unaccept').map((c) => c.args)).toEqual([{ id: 'rc-3', previous: 'unreviewed_auto' }]);
    expect(inboxIds(target)).toContain('rc-3');
    expect(one(target, '[data-testid="review-notice"]')?.textContent).toContain('“The hook calls tmux” is back in the inbox as you edited it');
    // Edited again, the form starts from what is stored now, and putting it back sends that.
    press('e');
    await settle();
    expect((one(target, '[data-testid="draft-type"]') as HTMLSelectElement).value).toBe('procedure');
    expect((one(target, '[data-testid="draft-scope"]') as HTMLSelectElement).value).toBe('branch');
    choose(one(target, '[data-testid="draft-scope"]'), 'project');
    choose(one(target, '[data-testid="draft-type"]'), 'warning');
    click(one(target, '[data-testid="accept"]'));
    await settle();
    expect(calls.filter((c) => c.cmd === 'recall_accept').at(-1)?.args).toEqual({ id: 'rc-3', edit: { type: 'warning', scope: 'project' } });
  });

  it('turns the type and scope off on a read-only archive, with the reason', async () => {
    const { target, calls } = await render('cairn://recall?tab=inbox', { readOnly: '/tmp/cairn-test/cairn.db cannot be written' });
    press('e');
    await settle();
    for (const testid of ['draft-type', 'draft-scope', 'accept']) {
      const control = one(target, `[data-testid="${testid}"]`) as HTMLSelectElement | HTMLButtonElement;
      expect(control.disabled, testid).toBe(true);
      expect(control.title, testid).toBe(READ_ONLY_TITLE);
    }
    press('a');
    await settle();
    expect(calls.some((c) => c.cmd === 'recall_accept')).toBe(false);
  });

  it('shows the core’s refusal of an edit where the errors show, the form kept', async () => {
    const failure = {
      kind: 'invalid',
      message: 'recall entry rc-3: no branch is known for it (its session ran on none), so a branch scope would apply nowhere; keep scope project',
      hint: null,
    };
    const { target } = await render('cairn://recall?tab=inbox', { failOnce: { recall_accept: failure } });
    press('e');
    await settle();
    choose(one(target, '[data-testid="draft-scope"]'), 'branch');
    click(one(target, '[data-testid="accept"]'));
    await settle();
    expect(one(target, '[data-testid="review-error"]')?.textContent).toContain('keep scope project');
    expect((one(target, '[data-testid="draft-scope"]') as HTMLSelectElement).value).toBe('branch');
    expect(inboxIds(target)).toEqual(['rc-3', 'rc-4']);
  });

  it('puts the focus in the Title field when e opens the edit form', async () => {
    const { target } = await render('cairn://recall?tab=inbox');
    press('e');
    await settle();
    const title = one(target, '[data-testid="draft-title"]');
    expect(title).not.toBeNull();
    expect(document.activeElement).toBe(title);
    // j and k typed there are text; Escape leaves the field, and moving back to the entry
    // being edited leaves the focus where it is.
    (title as HTMLInputElement).blur();
    press('j');
    press('k');
    await settle();
    expect(document.activeElement).not.toBe(one(target, '[data-testid="draft-title"]'));
  });

  it('accepts ticked entries in bulk and merges a duplicate', async () => {
    const { target, stores, calls } = await render('cairn://recall?tab=inbox');
    press('x');
    await settle();
    click(one(target, '[data-testid="bulk-accept"]'));
    await settle();
    expect(calls.filter((c) => c.cmd === 'recall_accept').map((c) => c.args.id)).toEqual(['rc-3']);
    expect(inboxIds(target)).toEqual(['rc-4']);
    await stores.recall.merge('rc-4', 'rc-1');
    await settle();
    expect(calls.find((c) => c.cmd === 'recall_merge')?.args).toEqual({ duplicate: 'rc-4', keep: 'rc-1' });
    expect(inboxIds(target)).toEqual([]);
  });

  it('lays the entry out for review: why, the cited records quoted as text, near-duplicates, m merges', async () => {
    const { target, calls } = await render('cairn://recall?tab=inbox');
    const why = one(target, '[data-testid="proposal-why"]');
    expect(why?.textContent).toContain('Extracted by qwen3:8b');
    const quoted = all(target, 'quoted-record');
    expect(quoted.map((q) => q.textContent)).toEqual([expect.stringContaining('make the hook call tmux (rc-3)')]);
    // A transcript's markup is quoted as text, never run.
    expect(quoted[0]?.querySelector('script')).toBeNull();
    expect(quoted[0]?.textContent).toContain('<script>alert(1)</script>');
    expect(all(target, 'near-duplicate').map((d) => d.dataset.entryId)).toEqual(['rc-4']);
    // j: the next entry's layout follows the cursor.
    press('j');
    await settle();
    expect(all(target, 'near-duplicate').map((d) => d.dataset.entryId)).toEqual(['rc-3', 'rc-1']);
    // m: merged into the nearest duplicate; the merged proposal leaves the inbox, the kept one stays
    // unreviewed (a merge trusts nothing).
    press('m');
    await settle();
    expect(calls.filter((c) => c.cmd === 'recall_merge').map((c) => c.args)).toEqual([{ duplicate: 'rc-4', keep: 'rc-3' }]);
    expect(inboxIds(target)).toEqual(['rc-3']);
    expect(all(target, 'quoted-record')).toHaveLength(2);
    // With no near-duplicate left, m says so and changes nothing.
    press('m');
    await settle();
    expect(one(target, '[data-testid="review-error"]')?.textContent).toContain('No near-duplicate');
    expect(calls.filter((c) => c.cmd === 'recall_merge')).toHaveLength(1);
    // The pane says so in words; the measures and thresholds behind it stay out of the text.
    const dups = one(target, '[data-testid="proposal-duplicates"]')!;
    expect(one(target, '[data-testid="no-duplicates"]')?.textContent).toBe('No near-duplicate found.');
    expect(dups.textContent).not.toContain('TF-IDF');
  });

  it('shows a failed review and keeps the entry', async () => {
    const fake = fakeBackend({ failOnce: { recall_reject: 'the store is read-only' } });
    mockIPC(fake.handler, { shouldMockEvents: true });
    const target = document.createElement('div');
    document.body.append(target);
    const stores = createStores();
    component = mount(App, { target, props: { stores } });
    await settle();
    stores.router.open('cairn://recall?tab=inbox');
    await settle();
    press('r');
    await settle();
    expect(one(target, '[data-testid="review-error"]')?.textContent).toContain('read-only');
    expect(one(target, '[data-testid="review-notice"]')).toBeNull();
    expect(inboxIds(target)).toEqual(['rc-3', 'rc-4']);
  });

  it('names the entry a bulk review stopped at, with the backend’s hint', async () => {
    const failure = { kind: 'read_only', message: 'the store is read-only', hint: 'Open the archive without --read-only.' };
    const { target, stores } = await render('cairn://recall?tab=inbox', { failOnce: { recall_accept: failure } });
    stores.recall.togglePick('rc-3');
    await stores.recall.bulk('accept');
    await settle();
    const error = one(target, '[data-testid="review-error"]')!;
    expect(error.textContent).toContain('rc-3: the store is read-only');
    expect(error.querySelector('[data-testid="error-hint"]')?.textContent).toBe('Open the archive without --read-only.');
  });
});

describe('the Entries list', () => {
  const shownIds = (target: HTMLElement) => all(target, 'recall-entry').map((e) => `${e.dataset.entryId}:${e.querySelector('[data-testid="entry-state"]')?.textContent}`);

  it('says what each choice lists: trusted, unreviewed, archived, or all but archived', async () => {
    const { target, calls } = await render('cairn://recall?tab=corpus');
    const show = one(target, '[data-testid="recall-show"]') as HTMLSelectElement;
    expect([...show.options].map((o) => o.textContent)).toEqual(['All but archived', 'Trusted (reviewed by you)', 'Unreviewed', 'Archived']);
    expect(show.value).toBe('served');
    expect(shownIds(target)).toEqual(['rc-1:trusted', 'rc-2:trusted', 'rc-3:unreviewed', 'rc-4:unreviewed']);
    choose(show, 'trusted');
    await settle();
    expect(shownIds(target)).toEqual(['rc-1:trusted', 'rc-2:trusted']);
    choose(show, 'unreviewed');
    await settle();
    expect(shownIds(target)).toEqual(['rc-3:unreviewed', 'rc-4:unreviewed']);
    expect(calls.filter((c) => c.cmd === 'recall_list').at(-1)?.args.filters).toMatchObject({ status: 'accepted', review_state: 'unreviewed_auto' });
    choose(show, 'archived');
    await settle();
    expect(one(target, '[data-testid="recall-empty"]')?.textContent).toContain('No archived entries');
  });

  it('archives an entry a person accepted from its card, saying so, and Undo serves it again', async () => {
    const { target, calls } = await render('cairn://recall?tab=corpus');
    const card = (id: string) => one(target, `[data-testid="recall-entry"][data-entry-id="${id}"]`)!;
    // Only entries a person accepted offer it; an unreviewed one is rejected in the Inbox.
    expect(card('rc-1').querySelector('[data-testid="archive-entry"]')).not.toBeNull();
    expect(card('rc-3').querySelector('[data-testid="archive-entry"]')).toBeNull();
    click(card('rc-1').querySelector('[data-testid="archive-entry"]'));
    await settle();
    expect(calls.filter((c) => c.cmd === 'recall_reject').map((c) => c.args)).toEqual([{ id: 'rc-1' }]);
    const notice = one(target, '[data-testid="corpus-notice"]')!;
    expect(notice.getAttribute('role')).toBe('status');
    expect(notice.textContent).toContain("Archived “Login needs the session cookie”: agents' briefs leave it out now");
    expect(shownIds(target)).not.toContain('rc-1:trusted');
    click(one(target, '[data-testid="corpus-undo"]'));
    await settle();
    expect(calls.filter((c) => c.cmd === 'recall_restore').map((c) => c.args)).toEqual([{ id: 'rc-1' }]);
    expect(shownIds(target)).toContain('rc-1:trusted');
    expect(one(target, '[data-testid="corpus-notice"]')).toBeNull();
  });

  it('says which entry an archived replacement hands its place back to, and Undo replaces it again', async () => {
    const { target, calls } = await render('cairn://recall?tab=corpus', { replacements: true });
    expect(shownIds(target)).not.toContain('rc-0:trusted');
    click(one(target, '[data-testid="recall-entry"][data-entry-id="rc-1"] [data-testid="archive-entry"]'));
    await settle();
    expect(one(target, '[data-testid="corpus-notice"]')!.textContent).toContain(
      "Archived “Login needs the session cookie”: agents' briefs leave it out now; “Login needs the old cookie name” is served again in its place",
    );
    // The entry it had replaced is served again, trusted as it was.
    expect(shownIds(target)).toContain('rc-0:trusted');
    expect(shownIds(target)).not.toContain('rc-1:trusted');
    click(one(target, '[data-testid="corpus-undo"]'));
    await settle();
    expect(calls.filter((c) => c.cmd === 'recall_restore').map((c) => c.args)).toEqual([{ id: 'rc-1' }]);
    expect(one(target, '[data-testid="corpus-notice"]')!.textContent).toContain(
      '“Login needs the session cookie” is served again and replaces “Login needs the old cookie name” again',
    );
    expect(shownIds(target)).toContain('rc-1:trusted');
    expect(shownIds(target)).not.toContain('rc-0:trusted');
  });

  it('says why an archive failed and keeps the entry', async () => {
    const failure = { kind: 'read_only', message: 'the store is read-only', hint: 'Open the archive without --read-only.' };
    const { target } = await render('cairn://recall?tab=corpus', { failOnce: { recall_reject: failure } });
    click(one(target, '[data-testid="recall-entry"][data-entry-id="rc-2"] [data-testid="archive-entry"]'));
    await settle();
    expect(one(target, '[data-testid="corpus-error"]')?.textContent).toContain('the store is read-only');
    expect(one(target, '[data-testid="corpus-notice"]')).toBeNull();
    expect(shownIds(target)).toContain('rc-2:trusted');
  });
});

/** Run `body` with the window `height` pixels tall (happy-dom's is 768). */
async function tall<T>(height: number, body: () => Promise<T>): Promise<T> {
  const was = window.innerHeight;
  window.innerHeight = height;
  try {
    return await body();
  } finally {
    window.innerHeight = was;
  }
}

describe('Recall beside sessions and search', () => {
  it('lists the entries citing a session in its Recall panel', () => tall(1000, async () => {
    const { target } = await render(`cairn://session/${key(1)}`);
    const panel = one(target, '[data-testid="session-recall"]');
    expect(panel?.textContent).toContain('3 entries cite this session');
    expect(all(target, 'recall-entry').map((e) => e.dataset.entryId)).toEqual(['rc-1', 'rc-3', 'rc-4']);
  }));

  it('starts with the Recall panel folded to its line in a short window, the turns keeping the room', () => tall(600, async () => {
    const { target } = await render(`cairn://session/${key(1)}`);
    const toggle = one(target, '[data-testid="session-recall-toggle"]')!;
    expect(toggle.textContent).toContain('3 entries cite this session');
    expect(toggle.getAttribute('aria-expanded')).toBe('false');
    expect(all(target, 'recall-entry')).toHaveLength(0);
    expect(all(target, 'turn-row').length).toBeGreaterThan(0);
    click(toggle);
    flushSync();
    expect(toggle.getAttribute('aria-expanded')).toBe('true');
    expect(all(target, 'recall-entry').map((e) => e.dataset.entryId)).toEqual(['rc-1', 'rc-3', 'rc-4']);
  }));

  it('keeps only the entries in view in the DOM when many cite the session', () => tall(1000, async () => {
    const { target } = await render(`cairn://session/${key(1)}`, { moreEntries: 2000 });
    const panel = one(target, '[data-testid="session-recall"]')!;
    expect(panel.textContent).toContain('2003 entries cite this session');
    const shown = all(target, 'recall-entry');
    expect(shown.length).toBeGreaterThan(0);
    expect(shown.length).toBeLessThan(50);
    const list = panel.querySelector<HTMLElement>('[role="listbox"]')!;
    expect(list.getAttribute('aria-label')).toBe('Recall entries citing this session');
    // As tall as its rows, up to a third of the window.
    expect(list.style.maxHeight).toBe('30vh');
    expect(Number.parseFloat(list.style.height)).toBeGreaterThan(2000 * 50);
    // The evidence links inside keep their own Enter.
    const link = panel.querySelector<HTMLElement>('[data-testid="recall-evidence"]')!;
    const enter = new KeyboardEvent('keydown', { key: 'Enter', bubbles: true, cancelable: true });
    link.dispatchEvent(enter);
    expect(enter.defaultPrevented).toBe(false);
  }));

  it('says, before a forget, which entry stays replaced and which one is served again', async () => {
    const { target } = await render(`cairn://session/${key(1)}`);
    const toggle = one(target, '[data-testid="session-more-toggle"]')!;
    if (toggle.getAttribute('aria-expanded') !== 'true') click(toggle);
    flushSync();
    click(one(target, '[data-testid="forget-button"]'));
    await settle();
    const lines = [...one(target, '[data-testid="forget-plan"]')!.querySelectorAll('li')].map((li) => li.textContent?.replace(/\s+/g, ' ').trim());
    expect(lines).toContain('The old cookie name — replaced by e3: stays archived');
    expect(lines).toContain('The new cookie name — accepted before: back to the inbox, unreviewed; e2 is served again in its place');
    expect(lines).toContain('A fact — accepted before: back to the inbox, unreviewed');
  });

  it('searches Recall entries in Recall mode', async () => {
    const { target, stores } = await render('cairn://search');
    click(one(target, '[data-testid="search-mode-recall"]'));
    stores.search.text = 'cookie';
    await stores.search.run();
    await settle();
    expect(all(target, 'recall-entry').map((e) => e.dataset.entryId)).toEqual(['rc-1']);
  });
});

describe('generated insights', () => {
  it('opens a report by its link, rendered without scripts, raw HTML or javascript: links', async () => {
    const { target, stores } = await render('cairn://recall?tab=generated&insight=2');
    expect(one(target, '[data-testid="insight-view"]')?.dataset.insightId).toBe('2');
    const body = one(target, '[data-testid="insight-body"]');
    expect(body?.querySelector('h1')?.textContent).toBe('Week');
    expect(body?.querySelector('script, img, iframe, [onclick], [onerror]')).toBeNull();
    const hrefs = [...(body?.querySelectorAll('a') ?? [])].map((a) => a.getAttribute('href'));
    expect(hrefs).toEqual([`cairn://session/${key(1)}?record=3`, null, 'https://example.com/x']);
    expect((window as unknown as { pwned?: boolean }).pwned).toBeUndefined();

    // A session link in the report opens the session; the inert one goes nowhere.
    click([...(body?.querySelectorAll('a') ?? [])][1]);
    expect(stores.router.current).toEqual({ view: 'recall', tab: 'generated', insight: 2 });
    click(body?.querySelector('a'));
    await settle();
    expect(stores.router.current).toEqual({ view: 'session', key: key(1), record: 3, turn: null });
  });

  it('shows the slice the next report reads, generates, and exports with a toast naming the file', async () => {
    const { target, stores, calls } = await render('cairn://recall?tab=generated');
    expect(one(target, '[data-testid="insight-slice"]')?.textContent).toContain('last 7 days');
    expect(one(target, '[data-testid="insight-slice"]')?.textContent).toContain('3 sessions');
    stores.insights.project = 'shop';
    await stores.insights.loadPreview();
    await settle();
    expect(one(target, '[data-testid="insight-slice"]')?.textContent).toContain('project shop');

    click(one(target, '[data-testid="generate"]'));
    await settle();
    const generate = calls.find((c) => c.cmd === 'insight_generate');
    expect(generate?.args.request).toMatchObject({ slice: { project: 'shop', automation: 'exclude' }, template: 'weekly-summary', force: false });
    expect(one(target, '[data-testid="insight-view"]')?.dataset.insightId).toBe('3');
    expect(all(target, 'insight-row').map((r) => r.dataset.insightId)).toEqual(['3', '1', '2']);

    click(one(target, '[data-testid="export-html"]'));
    await settle();
    expect(calls.find((c) => c.cmd === 'insight_export')?.args).toEqual({ id: 3, format: 'html' });
    expect(one(target, '[data-testid="toast"]')?.textContent).toContain('insight-3-weekly-summary.html');
  });

  it('says where to name an agent program that is not on the PATH, and generates once it is named', async () => {
    const { target, stores } = await render('cairn://recall?tab=generated', { missingAgent: 'claude' });
    click(one(target, '[data-testid="generate"]'));
    await settle();
    const failed = one(target, '[data-testid="insight-form"] [role="alert"]') ?? one(target, '[role="alert"]');
    expect(failed?.textContent).toContain('claude: not found on the PATH this app sees');
    expect(failed?.textContent).toContain('Name the program in Settings › Agent programs');
    expect(failed?.textContent).not.toContain('config.toml');

    stores.router.go({ view: 'settings' });
    await settle();
    const claude = one(target, '[data-testid="program-claude"]')!;
    expect(claude.querySelector('[data-testid="program-state"]')!.textContent!.trim()).toBe('not found on the PATH');
    expect(one(target, '[data-testid="program-codex"] [data-testid="program-state"]')!.textContent!.replace(/\s+/g, ' ').trim()).toBe(
      'found on the PATH: /usr/local/bin/codex',
    );
    const field = claude.querySelector<HTMLInputElement>('[data-testid="program-path"]')!;
    const save = () => {
      field.dispatchEvent(new Event('input', { bubbles: true }));
      claude.querySelector('form')!.dispatchEvent(new Event('submit', { bubbles: true, cancelable: true }));
    };
    field.value = 'bin/claude';
    save();
    await settle();
    expect(claude.querySelector('[role="alert"]')!.textContent).toContain('bin/claude is no program Cairn can run');
    field.value = '/opt/claude/bin/claude';
    save();
    await settle();
    expect(claude.querySelector('[role="alert"]')).toBeNull();
    expect(claude.querySelector('[data-testid="program-state"]')!.textContent!.replace(/\s+/g, ' ').trim()).toBe('runs /opt/claude/bin/claude');

    stores.router.go({ view: 'recall', tab: 'generated', insight: null });
    await settle();
    click(one(target, '[data-testid="generate"]'));
    await settle();
    expect(one(target, '[data-testid="insight-view"]')?.dataset.insightId).toBe('3');
  });

  it('says why Generate waits when the slice holds no session, and how to widen it', async () => {
    const { target, stores } = await render('cairn://recall?tab=generated');
    expect(one(target, '[data-testid="insight-no-sessions"]')).toBeNull();
    stores.insights.project = 'nothing';
    await stores.insights.loadPreview();
    await settle();
    const generate = one(target, '[data-testid="generate"]') as HTMLButtonElement;
    expect(generate.disabled).toBe(true);
    const why = one(target, '[data-testid="insight-no-sessions"]')!;
    expect(why.textContent).toContain('No session falls in this slice');
    expect(why.textContent).toContain('set “Since” earlier to widen it, or clear Project.');
    expect(generate.getAttribute('aria-describedby')).toBe(why.id);
  });

  it('offers the sessions that only ran on a branch once one is asked for, says how many are left out, and sends include_weak', async () => {
    const { target, stores, calls } = await render('cairn://recall?tab=generated');
    const box = () => one(target, '[data-testid="insight-include-weak"]') as HTMLInputElement | null;
    const note = () => one(target, '[data-testid="insight-weak-note"]')?.textContent?.replace(/\s+/g, ' ').trim() ?? null;
    const lastPreview = () => calls.filter((c) => c.cmd === 'insight_preview').at(-1)?.args.request as { slice: Record<string, unknown> };
    // Without a branch there is nothing to include.
    expect(box()).toBeNull();
    expect(note()).toBeNull();

    const branch = [...target.querySelectorAll('[data-testid="insight-form"] label')].find((l) => l.textContent?.trim().startsWith('Branch'))!.querySelector('input')!;
    branch.value = 'feature/login';
    branch.dispatchEvent(new Event('input', { bubbles: true }));
    await stores.insights.loadPreview();
    await settle();
    expect(lastPreview().slice).toMatchObject({ branch: 'feature/login', include_weak: false });
    // A real checkbox, named by its label, in the tab order.
    const input = box()!;
    expect(input.type).toBe('checkbox');
    expect(input.checked).toBe(false);
    expect(input.tabIndex).toBe(0);
    expect(input.labels?.[0]?.textContent?.trim()).toBe('Include sessions that only ran on this branch');
    expect(one(target, '[data-testid="insight-slice"]')?.textContent).toContain('1 session');
    expect(note()).toBe('· 2 sessions that only ran on this branch are left out (tick “Include sessions that only ran on this branch” to include them)');

    click(input);
    await stores.insights.loadPreview();
    await settle();
    expect(lastPreview().slice).toMatchObject({ branch: 'feature/login', include_weak: true });
    expect(note()).toBe('· includes 2 sessions that only ran on this branch');
    expect(one(target, '[data-testid="insight-slice"]')?.textContent).toContain('3 sessions');

    click(one(target, '[data-testid="generate"]'));
    await settle();
    const generate = calls.find((c) => c.cmd === 'insight_generate');
    expect(generate?.args.request).toMatchObject({ slice: { branch: 'feature/login', include_weak: true } });

    // The branch cleared: the box goes, and the request asks for nothing weak.
    branch.value = '';
    branch.dispatchEvent(new Event('input', { bubbles: true }));
    await stores.insights.loadPreview();
    await settle();
    expect(box()).toBeNull();
    expect(note()).toBeNull();
    expect(lastPreview().slice).not.toHaveProperty('include_weak');
  });

  it('says, when a branch holds only sessions that ran on it, that ticking the box brings them in', async () => {
    const { target, stores } = await render('cairn://recall?tab=generated');
    stores.insights.branch = 'main';
    await stores.insights.loadPreview();
    await settle();
    expect((one(target, '[data-testid="generate"]') as HTMLButtonElement).disabled).toBe(true);
    expect(one(target, '[data-testid="insight-weak-note"]')?.textContent).toContain('1 session that only ran on this branch is left out');
    expect(one(target, '[data-testid="insight-weak-note"]')?.textContent).toContain('to include it)');
    expect(one(target, '[data-testid="insight-no-sessions"]')?.textContent).toContain(
      'or clear Branch, or tick “Include sessions that only ran on this branch” (1 session).',
    );
    stores.insights.includeWeak = true;
    await stores.insights.loadPreview();
    await settle();
    expect(one(target, '[data-testid="insight-no-sessions"]')).toBeNull();
    expect((one(target, '[data-testid="generate"]') as HTMLButtonElement).disabled).toBe(false);
  });

  it('lists many saved reports as a virtual list, the open one selected', async () => {
    const { target, stores } = await render('cairn://recall?tab=generated&insight=2', { moreReports: 5000 });
    const rows = all(target, 'insight-row');
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.length).toBeLessThan(60);
    expect(rows.slice(0, 3).map((r) => r.dataset.insightId)).toEqual(['1', '2', '3']);
    const list = one(target, '[role="listbox"][aria-label="Saved reports"]')!;
    expect(list.getAttribute('aria-activedescendant')).toBe('insight-1');
    expect(rows[1]!.classList.contains('open')).toBe(true);
    // The row's buttons keep their own Enter: it stars, it does not open the report.
    const star = rows[0]!.querySelector<HTMLElement>('.star')!;
    const enter = new KeyboardEvent('keydown', { key: 'Enter', bubbles: true, cancelable: true });
    star.dispatchEvent(enter);
    expect(enter.defaultPrevented).toBe(false);
    click(rows[2]!.querySelector('.link'));
    await settle();
    expect(stores.router.current).toEqual({ view: 'recall', tab: 'generated', insight: 3 });
  });

  it('stars, renames and deletes saved reports', async () => {
    const { target, stores } = await render('cairn://recall?tab=generated&insight=2');
    await stores.insights.star(2, true);
    await stores.insights.rename(2, 'Login, reviewed');
    await settle();
    stores.insights.starredOnly = true;
    await stores.insights.loadList();
    await settle();
    expect(all(target, 'insight-row').map((r) => r.textContent)).toEqual([
      expect.stringContaining('Last week'),
      expect.stringContaining('Login, reviewed'),
    ]);
    await stores.insights.remove(2);
    await settle();
    expect(one(target, '[data-testid="insight-view"]')).toBeNull();
    expect(all(target, 'insight-row').map((r) => r.dataset.insightId)).toEqual(['1']);
  });
});

describe('sanitize', () => {
  it('keeps allowlisted elements and safe links only', () => {
    const html = sanitize(HOSTILE_HTML);
    expect(html).not.toMatch(/script|onerror|onclick|iframe|javascript:|<img/i);
    expect(html).toContain('<a href="https://example.com/x">docs</a>');
    expect(html).toContain('<a>click</a>');
    expect(html).toContain('text ');
  });

  it.each([
    ['javascript:alert(1)', null],
    [' JAVASCRIPT:alert(1)', null],
    ['data:text/html,<script>', null],
    ['vbscript:x', null],
    ['cairn://session/x', 'cairn://session/x'],
    ['#top', '#top'],
    ['mailto:a@b.c', 'mailto:a@b.c'],
  ])('href %s → %s', (href, expected) => {
    expect(safeHref(href)).toBe(expected);
  });
});

describe('what agents used (the ledger)', () => {
  it('lists the entries agents were shown or rated, flags the mostly wrong ones and names a gone entry', async () => {
    const { target, calls } = await render('cairn://recall?tab=agents');
    expect(calls.some((c) => c.cmd === 'recall_agent_usage')).toBe(true);
    const rows = all(target, 'agent-usage-row');
    expect(rows.map((r) => r.dataset.verdict)).toEqual(['helpful', 'wrong', 'unrated']);
    expect(rows[2]?.textContent).toContain('rc-gone (no longer in Recall)');
    expect(one(target, '[data-testid="recall-agents-summary"]')?.textContent).toContain('1 entry mostly wrong');
  });

  it('says how to let agents reach Recall when none has yet', async () => {
    const { target } = await render('cairn://recall?tab=agents', { noAgentUsage: true });
    const empty = one(target, '[data-testid="recall-agents-empty"]');
    expect(empty?.textContent).toContain('cairn mcp install');
    expect(all(target, 'agent-usage-row')).toHaveLength(0);
  });
});
