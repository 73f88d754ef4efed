// The places table: what each place loads, refreshes, moves, opens and goes back to, checked on
// stand-in stores (the window's journeys over them are in App.test.ts and Recall.test.ts).
import { describe, expect, it } from 'vitest';
import { places, placeOf } from './places';
import type { Route, View } from './links';
import { fakeStores } from '../testing/fake-stores';

const BRANCH = 'ref:refs/heads/feature/login';
const KEY = `sha256-${'1'.padStart(32, '0')}`;

describe('the table', () => {
  it('has a place for every view, whose tab leads back to that view', () => {
    const { fake, stores } = fakeStores();
    fake.session.key = KEY;
    const views: View[] = ['branches', 'sessions', 'session', 'search', 'recall', 'team', 'settings'];
    expect(Object.keys(places).sort()).toEqual([...views].sort());
    for (const view of views) expect(places[view].tab(stores)?.view).toBe(view);
  });

  it('finds the place of a route', () => {
    const route: Route = { view: 'settings' };
    expect(placeOf(route)).toBe(places.settings);
    expect(placeOf({ view: 'session', key: KEY, record: null, turn: null })).toBe(places.session);
  });
});

describe('branches', () => {
  const place = places.branches;

  it('loads the list alone, clearing the timeline, when no branch is picked', async () => {
    const { fake, stores } = fakeStores();
    fake.branches.pane = 'timeline';
    await place.load({ view: 'branches', branch: null, repo: null }, stores);
    expect(fake.branches.load).toHaveBeenCalledOnce();
    expect(fake.skim.clear).toHaveBeenCalledOnce();
    expect(fake.skim.load).not.toHaveBeenCalled();
    expect(fake.branches.pane).toBe('list');
  });

  it('loads a picked branch’s timeline beside the list and selects it there', async () => {
    const { fake, stores } = fakeStores();
    await place.load({ view: 'branches', branch: BRANCH, repo: '/src/app' }, stores);
    expect(fake.skim.load).toHaveBeenCalledWith(BRANCH, '/src/app', null);
    expect(fake.branches.selectKey).toHaveBeenCalledWith(BRANCH, '/src/app', null);
    expect(fake.branches.pane).toBe('timeline');
    await place.load({ view: 'branches', branch: BRANCH, repo: null, project: 'notes' }, stores);
    expect(fake.skim.load).toHaveBeenLastCalledWith(BRANCH, null, 'notes');
    expect(fake.branches.selectKey).toHaveBeenLastCalledWith(BRANCH, null, 'notes');
  });

  it('refreshes both panes', () => {
    const { fake, stores } = fakeStores();
    place.refresh({ view: 'branches', branch: null, repo: null }, stores);
    expect(fake.branches.reload).toHaveBeenCalledOnce();
    expect(fake.skim.refresh).toHaveBeenCalledOnce();
  });

  it('moves in the pane the keyboard is on', () => {
    const { fake, stores } = fakeStores();
    const route = { view: 'branches', branch: null, repo: null } as const;
    expect(place.move(1, route, stores)).toBe(true);
    expect(fake.branches.move).toHaveBeenLastCalledWith(1);
    // The timeline pane with no branch on screen falls back to the list.
    fake.branches.pane = 'timeline';
    place.move(-1, route, stores);
    expect(fake.branches.move).toHaveBeenLastCalledWith(-1);
    fake.skim.target = BRANCH;
    place.move(10, route, stores);
    expect(fake.skim.move).toHaveBeenCalledWith(10);
    expect(fake.branches.move).toHaveBeenCalledTimes(2);
  });

  it('opens the selected branch in place (no way back), then a session at a turn from its timeline', () => {
    const { fake, stores } = fakeStores();
    const route = { view: 'branches', branch: null, repo: null } as const;
    fake.branches.selectedRow = { branch: { key: BRANCH }, repo: { root: '/src/app' } };
    expect(place.open(route, stores)).toBe(true);
    expect(fake.router.current).toEqual({ view: 'branches', branch: BRANCH, repo: '/src/app' });
    expect(fake.router.canGoBack).toBe(false);
    expect(fake.branches.pane).toBe('timeline');
    // A group of sessions in no repository is named by its project.
    fake.branches.selectedRow = { branch: { key: BRANCH }, repo: { root: null, project: 'notes' } };
    place.open(route, stores);
    expect(fake.router.current).toEqual({ view: 'branches', branch: BRANCH, repo: null, project: 'notes' });
    fake.branches.selectedRow = { branch: { key: BRANCH }, repo: { root: '/src/app' } };

    fake.skim.target = BRANCH;
    fake.skim.selectedRow = { type: 'weak-group', count: 2, open: false };
    place.open(route, stores);
    expect(fake.skim.toggleWeak).toHaveBeenCalledOnce();

    fake.skim.selectedRow = { type: 'turn', session: { session_key: KEY }, turn: { turn_index: 4 } };
    place.open(route, stores);
    expect(fake.router.current).toEqual({ view: 'session', key: KEY, record: null, turn: 4 });
  });

  it('goes back from the timeline to the list, and from the list not at all', () => {
    const { fake, stores } = fakeStores();
    const route = { view: 'branches', branch: BRANCH, repo: null } as const;
    expect(place.back(route, stores)).toBe(false);
    fake.branches.pane = 'timeline';
    fake.skim.target = BRANCH;
    expect(place.back(route, stores)).toBe(true);
    expect(fake.branches.pane).toBe('list');
  });

  it('leads its tab to the branch last skimmed', () => {
    const { fake, stores } = fakeStores();
    fake.skim.target = BRANCH;
    fake.skim.repo = '/src/app';
    expect(place.tab(stores)).toEqual({ view: 'branches', branch: BRANCH, repo: '/src/app' });
  });
});

describe('sessions', () => {
  const place = places.sessions;
  const route = { view: 'sessions' } as const;

  it('loads and refreshes the list, moves in it and opens the selected session', async () => {
    const { fake, stores } = fakeStores();
    await place.load(route, stores);
    place.refresh(route, stores);
    expect(fake.sessions.load).toHaveBeenCalledTimes(2);
    expect(place.move(-10, route, stores)).toBe(true);
    expect(fake.sessions.move).toHaveBeenCalledWith(-10);
    expect(place.open(route, stores)).toBe(true);
    expect(fake.router.canGoBack).toBe(false); // nothing selected: nothing opened
    fake.sessions.selectedSession = { session_key: KEY };
    place.open(route, stores);
    expect(fake.router.current).toEqual({ view: 'session', key: KEY, record: null, turn: null });
    expect(place.back(route, stores)).toBe(false);
  });
});

describe('session', () => {
  const place = places.session;
  const route = { view: 'session', key: KEY, record: 7, turn: null } as const;

  it('opens the session at its record with the Recall entries citing it', async () => {
    const { fake, stores } = fakeStores();
    await place.load(route, stores);
    expect(fake.session.open).toHaveBeenCalledWith(KEY, { record: 7, turn: null });
    expect(fake.recall.loadForSession).toHaveBeenCalledWith(KEY);
  });

  it('refreshes, moves, activates the row and has no step back of its own', () => {
    const { fake, stores } = fakeStores();
    place.refresh(route, stores);
    expect(fake.session.refresh).toHaveBeenCalledOnce();
    expect(place.move(1, route, stores)).toBe(true);
    expect(fake.session.move).toHaveBeenCalledWith(1);
    expect(place.open(route, stores)).toBe(true);
    expect(fake.session.activate).toHaveBeenCalledOnce();
    expect(place.back(route, stores)).toBe(false);
  });

  it('has a tab only once a session was opened, leading to its top', () => {
    const { fake, stores } = fakeStores();
    expect(place.tab(stores)).toBeNull();
    fake.session.key = KEY;
    expect(place.tab(stores)).toEqual({ view: 'session', key: KEY, record: null, turn: null });
  });
});

describe('search', () => {
  const place = places.search;

  it('runs a query the route brings, once, and focuses the box only while nothing is asked', async () => {
    const { fake, stores } = fakeStores();
    await place.load({ view: 'search', q: '' }, stores);
    expect(fake.search.focus).toHaveBeenCalledOnce();
    await place.load({ view: 'search', q: 'login' }, stores);
    expect(fake.search.text).toBe('login');
    expect(fake.search.run).toHaveBeenCalledOnce();
    await place.load({ view: 'search', q: 'login' }, stores);
    await place.load({ view: 'search', q: '' }, stores);
    expect(fake.search.run).toHaveBeenCalledOnce();
    // With words on screen the keys stay the hits' (a `j` would have replaced the words).
    expect(fake.search.focus).toHaveBeenCalledOnce();
  });

  it('refreshes only a query there is, and opens the selected hit at its record', () => {
    const { fake, stores } = fakeStores();
    const route = { view: 'search', q: '' } as const;
    fake.search.text = '  ';
    place.refresh(route, stores);
    expect(fake.search.run).not.toHaveBeenCalled();
    fake.search.text = 'login';
    place.refresh(route, stores);
    expect(fake.search.run).toHaveBeenCalledOnce();
    expect(place.move(1, route, stores)).toBe(true);
    expect(fake.search.move).toHaveBeenCalledWith(1);
    fake.search.selectedHit = { session_key: KEY, ordinal: 12 };
    expect(place.open(route, stores)).toBe(true);
    expect(fake.router.current).toEqual({ view: 'session', key: KEY, record: 12, turn: null });
    expect(place.back(route, stores)).toBe(false);
    expect(place.tab(stores)).toEqual({ view: 'search', q: 'login' });
  });
});

describe('recall', () => {
  const place = places.recall;
  const corpus = { view: 'recall', tab: 'corpus', insight: null } as const;
  const inbox = { view: 'recall', tab: 'inbox', insight: null } as const;
  const generated = { view: 'recall', tab: 'generated', insight: null } as const;

  it('loads the tab the route names', async () => {
    const { fake, stores } = fakeStores();
    await place.load(inbox, stores);
    expect(fake.recall.tab).toBe('inbox');
    expect(fake.recall.loadInbox).toHaveBeenCalledOnce();
    // The inbox on screen: extraction's new entries are seen (the tab's badge goes).
    expect(fake.live.seenInbox).toHaveBeenCalledOnce();
    await place.load(corpus, stores);
    expect(fake.recall.loadCorpus).toHaveBeenCalledOnce();
    await place.load({ ...generated, insight: 3 }, stores);
    expect(fake.recall.tab).toBe('generated');
    expect(fake.insights.load).toHaveBeenCalledOnce();
    expect(fake.insights.open).toHaveBeenCalledWith(3);
    await place.load(generated, stores);
    expect(fake.insights.close).toHaveBeenCalledOnce();
  });

  it('refreshes the tab on screen', () => {
    const { fake, stores } = fakeStores();
    place.refresh(corpus, stores);
    place.refresh(inbox, stores);
    place.refresh(generated, stores);
    expect(fake.recall.loadCorpus).toHaveBeenCalledOnce();
    expect(fake.recall.loadInbox).toHaveBeenCalledOnce();
    expect(fake.insights.loadPreview).toHaveBeenCalledOnce();
  });

  it('moves in the inbox, walks the corpus’ detail within its ends, and leaves reports to scroll', () => {
    const { fake, stores } = fakeStores();
    expect(place.move(1, inbox, stores)).toBe(true);
    expect(fake.recall.move).toHaveBeenCalledWith(1);

    expect(place.move(1, corpus, stores)).toBe(false);
    fake.recall.entries = [{ id: 'a' }, { id: 'b' }, { id: 'c' }];
    expect(place.move(1, corpus, stores)).toBe(true);
    expect(fake.recall.showDetail).toHaveBeenLastCalledWith('a');
    fake.recall.detailId = 'b';
    place.move(1, corpus, stores);
    expect(fake.recall.showDetail).toHaveBeenLastCalledWith('c');
    place.move(1e9, corpus, stores);
    expect(fake.recall.showDetail).toHaveBeenLastCalledWith('c');
    place.move(-1e9, corpus, stores);
    expect(fake.recall.showDetail).toHaveBeenLastCalledWith('a');

    expect(place.move(1, generated, stores)).toBe(false);
    expect(place.open(corpus, stores)).toBe(false);
    expect(place.back(inbox, stores)).toBe(false);
  });

  it('reviews with its letters in the inbox only', () => {
    const { fake, stores } = fakeStores();
    expect(place.triage?.('accept', corpus, stores)).toBe(false);
    expect(fake.recall.accept).not.toHaveBeenCalled();
    expect(place.triage?.('accept', inbox, stores)).toBe(true);
    expect(place.triage?.('reject', inbox, stores)).toBe(true);
    expect(place.triage?.('edit', inbox, stores)).toBe(true);
    expect(place.triage?.('merge', inbox, stores)).toBe(true);
    expect(fake.recall.mergeIntoDuplicate).toHaveBeenCalledOnce();
    expect(fake.recall.accept).toHaveBeenCalledOnce();
    expect(fake.recall.reject).toHaveBeenCalledOnce();
    expect(fake.recall.edit).toHaveBeenCalledOnce();
    // Nothing to tick without a current entry.
    expect(place.triage?.('tick', inbox, stores)).toBe(true);
    expect(fake.recall.togglePick).not.toHaveBeenCalled();
    fake.recall.current = { entry: { id: 'e1' } };
    place.triage?.('tick', inbox, stores);
    expect(fake.recall.togglePick).toHaveBeenCalledWith('e1');
  });

  it('leads its tab to the tab and report last open', () => {
    const { fake, stores } = fakeStores();
    fake.insights.report.data = { id: 5 };
    expect(place.tab(stores)).toEqual({ view: 'recall', tab: 'corpus', insight: null });
    fake.recall.tab = 'generated';
    expect(place.tab(stores)).toEqual({ view: 'recall', tab: 'generated', insight: 5 });
  });
});

describe('settings', () => {
  const place = places.settings;
  const route = { view: 'settings' } as const;

  it('loads everything, refreshes the health, meaning and extraction panels, and leaves the keys to the page', async () => {
    const { fake, stores } = fakeStores();
    await place.load(route, stores);
    expect(fake.settings.load).toHaveBeenCalledOnce();
    expect(fake.team.load).toHaveBeenCalledOnce();
    expect(fake.meaning.load).toHaveBeenCalledOnce();
    place.refresh(route, stores);
    expect(fake.settings.loadDoctor).toHaveBeenCalledOnce();
    expect(fake.settings.loadExtract).toHaveBeenCalledOnce();
    // A sync may have brought turns without vectors, or started their build.
    expect(fake.meaning.load).toHaveBeenCalledTimes(2);
    expect(place.move(1, route, stores)).toBe(false);
    expect(place.open(route, stores)).toBe(false);
    expect(place.back(route, stores)).toBe(false);
  });
});

describe('team', () => {
  const place = places.team;
  const route = { view: 'team', session: null } as const;
  const KEY_T = 'sha256-0123456789abcdef0123456789abcdef';

  it('loads the setup, leaves the keys to the page, and Esc closes a teammate’s session first', async () => {
    const { fake, stores } = fakeStores();
    await place.load(route, stores);
    expect(fake.team.load).toHaveBeenCalledOnce();
    expect(place.move(1, route, stores)).toBe(false);
    expect(place.back(route, stores)).toBe(false);
    fake.team.open.status = 'ready';
    expect(place.back(route, stores)).toBe(true);
    expect(fake.team.close).toHaveBeenCalled();
  });

  it('opens a teammate’s session its route names, and its tab leads back to it', async () => {
    const { fake, stores } = fakeStores();
    const open = { view: 'team', session: { key: KEY_T, publisher: 'alice' } } as const;
    await place.load(open, stores);
    expect(fake.team.show).toHaveBeenCalledWith(KEY_T, 'alice');
    // Esc goes back through the history (to where the session was opened from).
    fake.team.open.status = 'ready';
    expect(place.back(open, stores)).toBe(false);
    fake.team.shown = { key: KEY_T, publisher: 'alice' };
    expect(place.tab(stores)).toEqual(open);
    // The place without a session closes the one open.
    await place.load(route, stores);
    expect(fake.team.close).toHaveBeenCalled();
  });
});
