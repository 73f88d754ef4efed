// The Session place: one session's timeline (at a record or a turn when a link names one), with
// the Recall entries that cite it. Enter expands or opens the selected row.
import type { Place } from '../place';

export const sessionPlace: Place<'session'> = {
  load(route, s) {
    void s.recall.loadForSession(route.key);
    return s.session.open(route.key, { record: route.record, turn: route.turn });
  },

  refresh(_route, s) {
    void s.session.refresh();
  },

  move(delta, _route, s) {
    s.session.move(delta);
    return true;
  },

  open(_route, s) {
    s.session.activate();
    return true;
  },

  back: () => false,

  // The tab returns to the session last open, at its top; no tab before one was opened.
  tab: (s) => (s.session.key ? { view: 'session', key: s.session.key, record: null, turn: null } : null),
};
