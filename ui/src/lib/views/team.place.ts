// The Team place: the team archive, read-only (search, skim, a teammate's session, which has a
// link of its own: `cairn://team?session=<key>&publisher=<role>`). No list keys: the page scrolls;
// Esc goes back from an open session.
import type { Place } from '../place';

export const teamPlace: Place<'team'> = {
  load(route, s) {
    const status = s.team.load();
    if (route.session === null) {
      s.team.close();
      return status;
    }
    return Promise.all([status, s.team.show(route.session.key, route.session.publisher)]);
  },

  refresh: () => {},

  move: () => false,

  open: () => false,

  back(route, s) {
    // A session opened by its route: back through the history, to where it was opened from.
    if (route.session !== null || s.team.open.status === 'idle') return false;
    s.team.close();
    return true;
  },

  tab: (s) => ({ view: 'team', session: s.team.shown }),
};
