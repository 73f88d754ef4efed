// The window's controller: it shows the place the router is at, refreshes it when the archive
// changes, moves between places, and answers the keys (`keys.ts`) by asking the place on screen
// (`places.ts`). App.svelte only lays the window out and calls into it.
import { onMount, tick, untrack } from 'svelte';
import { dispatchKey, keyAction, type KeyHandler } from './keys';
import { openSession, pickBranch, type TriageVerb } from './place';
import { places, placeOf } from './places';
import type { Route, View, WhyFrom } from './links';
import type { Stores } from './stores';
import { agentCounts } from './stores/agents.svelte';

/** The window's views, in the order of their tabs (keys 1–6 go to them). */
export const TABS: readonly { view: View; label: string }[] = [
  { view: 'branches', label: 'Branches' },
  { view: 'sessions', label: 'Sessions' },
  { view: 'search', label: 'Search' },
  { view: 'recall', label: 'Recall' },
  { view: 'team', label: 'Team' },
  { view: 'settings', label: 'Settings' },
];

export class WindowController implements KeyHandler {
  readonly #s: Stores;
  /** Resolves when the place first shown has its data (start-up waits for it). */
  #firstScreen: Promise<unknown> = Promise.resolve();

  constructor(stores: Stores) {
    this.#s = stores;
  }

  get route(): Route {
    return this.#s.router.current;
  }

  /** No sessions yet, at Branches (where the window opens): the welcome screen stands in for the
   * branch list, which has nothing to say until the first import. Every other tab shows its own
   * page and its own empty state, so the tab marked is always the page shown; the welcome is one
   * click away on Branches. */
  get firstRun(): boolean {
    return this.#s.app.empty === true && this.route.view === 'branches';
  }

  /** Load what `route` shows. Resolves when its first data is in. */
  show(route: Route): Promise<unknown> {
    return placeOf(route).load(route, this.#s);
  }

  /** Reload what is on screen after the archive changed. */
  refresh(): void {
    void this.#s.app.checkArchive();
    // Read again: which parsers read the archive moved (the status bar's offer).
    if (this.#s.live.last?.cause === 'reindex') void this.#s.app.loadInfo();
    // A sync may have brought a new agent: the filter bars offer it.
    if (agentCounts.counts.status !== 'idle') void agentCounts.load();
    placeOf(this.route).refresh(this.route, this.#s);
  }

  /** The `index`th tab's view (the keys 1–6). */
  view(index: number): boolean {
    const tab = TABS[index];
    if (tab === undefined) return false;
    this.go(tab.view);
    return true;
  }

  /** Follow a view's tab to what was open there last. */
  go(view: View): void {
    const route = places[view].tab(this.#s);
    if (route !== null) this.#s.router.go(route);
  }

  openSession(key: string, target: { record?: number | null; turn?: number | null } = {}): void {
    openSession(this.#s, key, target);
  }

  /** Ask Search why `target` (a commit, a path, words) is there, traced where `from` says. */
  why(target: string, from: WhyFrom): void {
    this.#s.router.go({ view: 'search', q: target, why: from });
  }

  pickBranch(key: string, repo: string | null, project: string | null = null): void {
    pickBranch(this.#s, key, repo, project);
  }

  move(delta: number): boolean {
    return placeOf(this.route).move(delta, this.route, this.#s);
  }

  open(): boolean {
    return placeOf(this.route).open(this.route, this.#s);
  }

  /** A step back inside the place, else back through the history, else to Branches. */
  back(): void {
    const route = this.route;
    if (placeOf(route).back(route, this.#s)) return;
    if (!this.#s.router.back() && route.view !== 'branches') this.#s.router.go({ view: 'branches', branch: null, repo: null });
  }

  search(): void {
    if (placeOf(this.route).search?.(this.route, this.#s)) return;
    this.go('search');
    this.#s.search.focus();
  }

  triage(verb: TriageVerb): boolean {
    return placeOf(this.route).triage?.(verb, this.route, this.#s) ?? false;
  }

  /** The control (a tab just clicked, a button) the list's keys were last used from. The focus
   * stays on it while j/k move the list's selection, so its own Enter would activate it again;
   * pressed there, Enter opens the row the person moved to instead. */
  #movedFrom: EventTarget | null = null;

  /** The window's keydown listener. */
  onkeydown = (event: KeyboardEvent): void => {
    if (this.firstRun) {
      // The welcome has no list to move in or step back from, but the keys the status bar
      // advertises that leave it (1–6 to a view, / to Search) work as everywhere else.
      const action = keyAction(event);
      if (action?.type === 'view' || action?.type === 'search') dispatchKey(event, this);
      return;
    }
    const target = event.target;
    if (event.key === 'Enter' && target !== null && target === this.#movedFrom && !(event.ctrlKey || event.metaKey || event.altKey)) {
      this.#movedFrom = null;
      if (this.open()) event.preventDefault();
      return;
    }
    const action = keyAction(event);
    const used = dispatchKey(event, this);
    this.#movedFrom = used && (action?.type === 'move' || action?.type === 'edge') ? target : null;
  };

  /** Import what the sources hold; the first import that finds sessions shows them. */
  async runSync(): Promise<void> {
    const { sync, app, router } = this.#s;
    const report = await sync.run();
    if (report === null) return;
    const wasEmpty = app.empty === true;
    await app.checkArchive();
    const nowEmpty: boolean | null = app.empty;
    if (wasEmpty && nowEmpty === false) untrack(() => this.show(router.current));
  }

  /** Settings, at Read again, its first button focused (the status bar's offer to read what
   * an older Cairn read). */
  async openReadAgain(): Promise<void> {
    this.#s.router.go({ view: 'settings' });
    await tick();
    const section = document.querySelector<HTMLElement>('[data-testid="reindex"]');
    section?.scrollIntoView({ block: 'center' });
    section?.querySelector<HTMLButtonElement>('[data-testid="reindex-check"]')?.focus({ preventScroll: true });
  }

  /** A Retry of the archive is under way (the buttons that start one say so). */
  retrying = $state(false);

  /** Open the archive again after it failed (a corrected `config.toml` is read again, a data
   * dir made writable), or for writing after it opened read-only; then what the window was
   * showing, and catch up with the agents as at start-up. A sync that failed for the reason just
   * put right no longer says it failed. */
  async retryArchive(): Promise<void> {
    const { app, settings, router, sync } = this.#s;
    if (this.retrying) return;
    this.retrying = true;
    try {
      const opened = await app.reopen();
      if (opened) sync.forget();
      await this.show(router.current);
      if (!opened) return;
      if (app.empty) void settings.loadSources();
      this.#catchUp();
    } finally {
      this.retrying = false;
    }
  }

  /** Capture what agents wrote while the window could not: it was closed, or its archive shut. */
  #catchUp(): void {
    const { app, sync } = this.#s;
    if (app.empty === false && !app.info?.read_only) void sync.run();
  }

  async #start(): Promise<void> {
    const { app, router, branches, settings } = this.#s;
    app.mark('mounted');
    await app.loadInfo();
    const link = app.info?.launch_link;
    if (link) router.open(link);
    else if (app.launchRefused) router.linkError = app.launchRefused;
    await this.#firstScreen;
    // Branches listed means sessions exist; only an empty list needs the first-run check.
    if (router.current.view === 'branches' && branches.rows.length > 0) app.noteNotEmpty();
    else await app.checkArchive();
    if (app.empty) void settings.loadSources();
    app.mark('first data');
    await tick();
    // The first screen is on the glass: tell the shell (it starts watching the source dirs,
    // and prints the time for scripts/measure-startup.sh).
    requestAnimationFrame(() => {
      document.documentElement.dataset.ready = 'true';
      void app.ready().then(() => this.#catchUp());
    });
  }

  /** Wire the controller to the component being initialised: show each place the router goes
   * to, refresh on archive changes, start the clock, live updates and links from a second launch. */
  attach(): void {
    const { router, live, clock, app } = this.#s;
    $effect(() => {
      const place = router.current;
      untrack(() => {
        this.#firstScreen = this.show(place);
      });
    });
    $effect(() => {
      if (live.version === 0) return;
      untrack(() => this.refresh());
    });
    $effect(() => {
      if (this.#s.meaning.ended === 0) return;
      // A build of the turns' vectors ended: a search that found waiting turns by words alone
      // is asked again, by meaning now.
      untrack(() => {
        if (this.route.view === 'search' && this.#s.search.vectorsPending > 0) this.refresh();
      });
    });
    onMount(() => {
      const stopClock = clock.start();
      void live.start();
      // The end of a catch-up build reaches Search even when Settings was never opened.
      void this.#s.meaning.listen();
      // A second launch (`cairn-desktop 'cairn://…'` while this window is open) opens its link here, or
      // the window says why the shell refused it.
      const following = app.followLinks(
        (link) => router.open(link),
        (message) => (router.linkError = message),
      );
      void this.#start();
      return () => {
        stopClock();
        this.#s.meaning.dispose();
        // Unmounted after the event system went away (tests tear the IPC mock down): nothing to stop.
        void following.then((stop) => stop()).catch(() => {});
      };
    });
  }
}
