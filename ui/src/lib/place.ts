// What a place in the window is: how it loads, refreshes, moves, opens and goes back. Each view
// declares its place beside itself (`views/<view>.place.ts`), `places.ts` holds the table, and the
// window's controller (`controller.svelte.ts`) is the one caller.
import type { Route, View } from './links';
import type { Stores } from './stores';

/** The route of one view. */
export type RouteOf<V extends View> = Extract<Route, { view: V }>;

/** The Recall inbox's review verbs, one letter each (see `controller.svelte.ts`). */
export type TriageVerb = 'accept' | 'reject' | 'edit' | 'merge' | 'tick';

export interface Place<V extends View> {
  /** Load what the place shows; resolves when its first data is in. */
  load(route: RouteOf<V>, s: Stores): Promise<unknown>;
  /** Reload what is on screen after the archive changed, keeping it on screen meanwhile. */
  refresh(route: RouteOf<V>, s: Stores): void;
  /** Move the selection by `delta` rows (Home/End move by ±1e9); false when the place has no
   * list, so the key keeps its default (the page scrolls). */
  move(delta: number, route: RouteOf<V>, s: Stores): boolean;
  /** Enter: open what is selected; false when the place has nothing to open. */
  open(route: RouteOf<V>, s: Stores): boolean;
  /** Esc: a step back inside the place (a pane); false to go back through the history instead. */
  back(route: RouteOf<V>, s: Stores): boolean;
  /** Where the place's tab leads: what was open there last; null when there is nothing to show. */
  tab(s: Stores): RouteOf<V> | null;
  /** A review verb's letter; false when the place does not review (the key keeps its default). */
  triage?(verb: TriageVerb, route: RouteOf<V>, s: Stores): boolean;
  /** `/`: focus the place's own search box; false (or absent) to go to Search. */
  search?(route: RouteOf<V>, s: Stores): boolean;
}

/** Open session `key`, at a record (an evidence link) or a turn. */
export function openSession(s: Stores, key: string, target: { record?: number | null; turn?: number | null } = {}): void {
  s.router.go({ view: 'session', key, record: target.record ?? null, turn: target.turn ?? null });
}

/** Show branch `key` of repository `repo`, or of the sessions of `project` that ran in no
 * repository (picking a branch replaces the place: no way back). */
export function pickBranch(s: Stores, key: string, repo: string | null, project: string | null = null): void {
  s.router.replace(repo === null && project !== null ? { view: 'branches', branch: key, repo, project } : { view: 'branches', branch: key, repo });
}
