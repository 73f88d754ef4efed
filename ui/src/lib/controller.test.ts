// The window's controller over stand-in stores: keys reach the place on screen, Esc steps back
// inside a place before the history, tabs lead where each place says, and a refresh reloads the
// place on screen. The same paths over the real stores are App.test.ts' journeys.
import { describe, expect, it, vi } from 'vitest';
import { WindowController } from './controller.svelte';
import { fakeStores } from '../testing/fake-stores';

const KEY = `sha256-${'1'.padStart(32, '0')}`;
const BRANCH = 'ref:refs/heads/main';

function press(controller: WindowController, name: string, target?: HTMLElement): KeyboardEvent {
  const event = new KeyboardEvent('keydown', { key: name, bubbles: true, cancelable: true });
  if (target) {
    document.body.append(target);
    target.addEventListener('keydown', (e) => e.stopPropagation(), { once: true });
    target.dispatchEvent(event);
  }
  controller.onkeydown(event);
  return event;
}

describe('keys', () => {
  it('reach the list of the place on screen', () => {
    const { fake, stores } = fakeStores();
    const controller = new WindowController(stores);
    fake.router.go({ view: 'sessions' });
    expect(press(controller, 'j').defaultPrevented).toBe(true);
    expect(fake.sessions.move).toHaveBeenCalledWith(1);
    fake.sessions.selectedSession = { session_key: KEY };
    press(controller, 'Enter');
    expect(fake.router.current).toEqual({ view: 'session', key: KEY, record: null, turn: null });
    press(controller, 'End');
    expect(fake.session.move).toHaveBeenCalledWith(1e9);
  });

  it('open the row moved to when Enter comes on the control j/k were pressed from', () => {
    const { fake, stores } = fakeStores();
    const controller = new WindowController(stores);
    fake.router.go({ view: 'sessions' });
    fake.sessions.selectedSession = { session_key: KEY };
    const tab = document.createElement('button');
    document.body.append(tab);
    const on = (name: string) => {
      const event = new KeyboardEvent('keydown', { key: name, bubbles: true, cancelable: true });
      tab.dispatchEvent(event);
      controller.onkeydown(event);
      return event;
    };
    // Enter on a button is the button's own, until the list's keys were used from it.
    expect(on('Enter').defaultPrevented).toBe(false);
    expect(fake.router.current.view).toBe('sessions');
    on('j');
    expect(fake.sessions.move).toHaveBeenCalledWith(1);
    expect(on('Enter').defaultPrevented).toBe(true);
    expect(fake.router.current).toEqual({ view: 'session', key: KEY, record: null, turn: null });
    tab.remove();
  });

  it('keep their default where the place has no list', () => {
    const { fake, stores } = fakeStores();
    const controller = new WindowController(stores);
    fake.router.go({ view: 'settings' });
    expect(press(controller, 'ArrowDown').defaultPrevented).toBe(false);
    expect(press(controller, 'Enter').defaultPrevented).toBe(false);
    fake.router.go({ view: 'recall', tab: 'generated', insight: null });
    expect(press(controller, 'End').defaultPrevented).toBe(false);
  });

  it('move nothing on the welcome screen but leave it by a view key, and work on the other pages before the first import', () => {
    const { fake, stores } = fakeStores();
    const controller = new WindowController(stores);
    fake.app.empty = true;
    fake.router.go({ view: 'sessions' });
    fake.router.go({ view: 'branches', branch: null, repo: null });
    expect(controller.firstRun).toBe(true);
    expect(press(controller, 'j').defaultPrevented).toBe(false);
    expect(fake.branches.move).not.toHaveBeenCalled();
    press(controller, 'Escape');
    expect(fake.router.current.view).toBe('branches');
    // The view keys the status bar advertises leave the welcome, as everywhere else.
    expect(press(controller, '2').defaultPrevented).toBe(true);
    expect(fake.router.current.view).toBe('sessions');
    fake.router.go({ view: 'branches', branch: null, repo: null });
    expect(controller.firstRun).toBe(true);
    press(controller, '/');
    expect(fake.router.current.view).toBe('search');
    fake.router.go({ view: 'branches', branch: null, repo: null });
    // Another tab shows its own (empty) page, not the welcome under its tab.
    for (const view of ['sessions', 'search', 'recall', 'settings', 'team'] as const) {
      fake.router.go(view === 'search' ? { view, q: '' } : view === 'recall' ? { view, tab: 'inbox', insight: null } : view === 'team' ? { view, session: null } : { view });
      expect(controller.firstRun, view).toBe(false);
    }
    // Keys work there: Esc steps back from Team.
    press(controller, 'Escape');
    expect(fake.router.current.view).toBe('settings');
  });

  it('review in the inbox, and nowhere else or while typing', () => {
    const { fake, stores } = fakeStores();
    const controller = new WindowController(stores);
    fake.router.go({ view: 'recall', tab: 'corpus', insight: null });
    expect(press(controller, 'a').defaultPrevented).toBe(false);
    fake.router.go({ view: 'recall', tab: 'inbox', insight: null });
    expect(press(controller, 'a', document.createElement('input')).defaultPrevented).toBe(false);
    expect(fake.recall.accept).not.toHaveBeenCalled();
    expect(press(controller, 'a').defaultPrevented).toBe(true);
    expect(fake.recall.accept).toHaveBeenCalledOnce();
  });

  it('/ goes to Search with the last query and focuses its box', () => {
    const { fake, stores } = fakeStores();
    const controller = new WindowController(stores);
    fake.search.text = 'login';
    expect(press(controller, '/').defaultPrevented).toBe(true);
    expect(fake.router.current).toEqual({ view: 'search', q: 'login' });
    expect(fake.search.focus).toHaveBeenCalledOnce();
  });
});

describe('back', () => {
  it('steps from a branch’s timeline to the list before leaving the place', () => {
    const { fake, stores } = fakeStores();
    const controller = new WindowController(stores);
    fake.router.go({ view: 'sessions' });
    fake.router.go({ view: 'branches', branch: BRANCH, repo: null });
    fake.branches.pane = 'timeline';
    fake.skim.target = BRANCH;
    press(controller, 'Escape');
    expect(fake.branches.pane).toBe('list');
    expect(fake.router.current.view).toBe('branches');
    press(controller, 'Escape');
    expect(fake.router.current.view).toBe('sessions');
  });

  it('goes back through the history, and with none left, home to Branches', () => {
    const { fake, stores } = fakeStores();
    const controller = new WindowController(stores);
    fake.router.go({ view: 'search', q: '' });
    fake.router.replace({ view: 'session', key: KEY, record: null, turn: null });
    controller.back();
    expect(fake.router.current).toEqual({ view: 'branches', branch: null, repo: null });
    // Nowhere left to go back to: Branches is home, and Esc there stays.
    expect(fake.router.canGoBack).toBe(false);
    controller.back();
    expect(fake.router.current).toEqual({ view: 'branches', branch: null, repo: null });
    fake.router.replace({ view: 'settings' });
    controller.back();
    expect(fake.router.current).toEqual({ view: 'branches', branch: null, repo: null });
  });
});

describe('tabs and refresh', () => {
  it('follow each place’s tab, and the Session tab only once a session was opened', () => {
    const { fake, stores } = fakeStores();
    const controller = new WindowController(stores);
    controller.go('session');
    expect(fake.router.current.view).toBe('branches');
    fake.session.key = KEY;
    controller.go('session');
    expect(fake.router.current).toEqual({ view: 'session', key: KEY, record: null, turn: null });
    fake.recall.tab = 'inbox';
    controller.go('recall');
    expect(fake.router.current).toEqual({ view: 'recall', tab: 'inbox', insight: null });
  });

  it('reloads the archive state and the place on screen', () => {
    const { fake, stores } = fakeStores();
    const controller = new WindowController(stores);
    fake.router.go({ view: 'recall', tab: 'inbox', insight: null });
    controller.refresh();
    expect(fake.app.checkArchive).toHaveBeenCalledOnce();
    expect(fake.recall.loadInbox).toHaveBeenCalledOnce();
    expect(fake.sessions.load).not.toHaveBeenCalled();
  });

  it('asks again which parsers read the archive after a reindex, and only then', () => {
    const { fake, stores } = fakeStores();
    const controller = new WindowController(stores);
    fake.live.last = { cause: 'sync' };
    controller.refresh();
    expect(fake.app.loadInfo).not.toHaveBeenCalled();
    fake.live.last = { cause: 'reindex' };
    controller.refresh();
    expect(fake.app.loadInfo).toHaveBeenCalledOnce();
  });

  it('opens Read again in Settings with its first button focused', async () => {
    const { fake, stores } = fakeStores();
    const controller = new WindowController(stores);
    document.body.innerHTML =
      '<section data-testid="reindex"><button type="button" data-testid="reindex-check">Check what would change</button></section>';
    const section = document.querySelector<HTMLElement>('[data-testid="reindex"]')!;
    section.scrollIntoView = vi.fn();
    await controller.openReadAgain();
    expect(fake.router.current).toEqual({ view: 'settings' });
    expect(section.scrollIntoView).toHaveBeenCalled();
    expect(document.activeElement?.getAttribute('data-testid')).toBe('reindex-check');
    document.body.innerHTML = '';
  });

  it('shows a route by loading its place', async () => {
    const { fake, stores } = fakeStores();
    const controller = new WindowController(stores);
    await controller.show({ view: 'session', key: KEY, record: 3, turn: null });
    expect(fake.session.open).toHaveBeenCalledWith(KEY, { record: 3, turn: null });
  });
});
