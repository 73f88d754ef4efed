// The Search place: the query box (focused on arrival while nothing is asked yet) and its hits;
// Enter opens the hit's record.
import { openSession, type Place } from '../place';

export const searchPlace: Place<'search'> = {
  load(route, s) {
    if (route.why) {
      const from = s.search.whyFrom;
      const same = s.search.mode === 'why' && route.q === s.search.text &&
        from.repo === route.why.repo && from.session === route.why.session;
      if (!same) s.search.ask(route.q, route.why);
    } else if (route.q && route.q !== s.search.text) {
      s.search.text = route.q;
      void s.search.run();
    }
    // Come back to with an answer on screen, the keys stay the list's: focused with its words
    // selected, the box took the next `j` over them. `/` focuses it whatever it holds.
    if (!s.search.text.trim()) s.search.focus();
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
    if (s.search.mode === 'why') {
      const why = s.search.selectedWhy;
      if (why) openSession(s, why.sessionKey, { record: why.ordinal });
      return true;
    }
    const hit = s.search.selectedHit;
    if (hit) openSession(s, hit.session_key, { record: hit.ordinal });
    return true;
  },

  back: () => false,

  tab: (s) =>
    s.search.mode === 'why'
      ? { view: 'search', q: s.search.text, why: { ...s.search.whyFrom } }
      : { view: 'search', q: s.search.text },
};
