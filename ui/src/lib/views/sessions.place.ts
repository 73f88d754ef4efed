// The Sessions place: every session, newest first; Enter opens the selected one.
import { openSession, type Place } from '../place';

export const sessionsPlace: Place<'sessions'> = {
  load: (_route, s) => s.sessions.load(),

  refresh(_route, s) {
    void s.sessions.load();
  },

  move(delta, _route, s) {
    s.sessions.move(delta);
    return true;
  },

  open(_route, s) {
    const session = s.sessions.selectedSession;
    if (session) openSession(s, session.session_key);
    return true;
  },

  back: () => false,

  tab: () => ({ view: 'sessions' }),
};
