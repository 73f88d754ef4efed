// The table of places: for each view, how it loads, refreshes, moves, opens and goes back. The
// places themselves live beside their views (`views/<view>.place.ts`).
import type { Route, View } from './links';
import type { Place } from './place';
import { branchesPlace } from './views/branches.place';
import { recallPlace } from './views/recall.place';
import { searchPlace } from './views/search.place';
import { sessionPlace } from './views/session.place';
import { sessionsPlace } from './views/sessions.place';
import { settingsPlace } from './views/settings.place';
import { teamPlace } from './views/team.place';

export const places: { readonly [V in View]: Place<V> } = {
  branches: branchesPlace,
  sessions: sessionsPlace,
  session: sessionPlace,
  search: searchPlace,
  recall: recallPlace,
  team: teamPlace,
  settings: settingsPlace,
};

/** The place `route` is in, typed to take that route. */
export function placeOf(route: Route): Place<View> {
  // Each entry takes its own view's route; `route.view` picks the entry that matches.
  return places[route.view] as Place<View>;
}
