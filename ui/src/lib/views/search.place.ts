// The Search place: the query box (focused on arrival) and its hits; Enter opens the hit's record.
import { openSession, type Place } from '../place';

export const searchPlace: Place<'search'> = {
  load(route, s) {
    if (route.q && route.q !== s.search.text) {
      s.search.text = route.q;
      void s.search.run();
    }
    s.search.focus();
    return Promise.resolve();
  },

  refresh(_route, s) {
    if (s.search.text.trim()) void s.search.run();
  },

  move(delta, _route, s) {
    s.search.move(delta);
    return true;
  },

  open(_route, s) {
    const hit = s.search.selectedHit;
    if (hit) openSession(s, hit.session_key, { record: hit.ordinal });
    return true;
  },

  back: () => false,

  tab: (s) => ({ view: 'search', q: s.search.text }),
};
