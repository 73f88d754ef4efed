// The Team place: the team archive, read-only (search, skim, a teammate's session). No list keys:
// the page scrolls; Esc closes an open session.
import type { Place } from '../place';

export const teamPlace: Place<'team'> = {
  load: (_route, s) => s.team.load(),

  refresh: () => {},

  move: () => false,

  open: () => false,

  back(_route, s) {
    if (s.team.open.status === 'idle') return false;
    s.team.close();
    return true;
  },

  tab: () => ({ view: 'team' }),
};
