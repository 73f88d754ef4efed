// The Branches place: the branch list, and the picked branch's skim timeline beside it. The
// keyboard drives one pane at a time (`branches.pane`); Esc on the timeline goes back to the list.
import type { Stores } from '../stores';
import { openSession, pickBranch, type Place } from '../place';
import { groupProject } from '../stores/branches.svelte';

export const branchesPlace: Place<'branches'> = {
  load(route, s) {
    const list = s.branches.load().then(() => {
      if (route.branch !== null) s.branches.selectKey(route.branch, route.repo, route.project ?? null);
    });
    if (route.branch === null) {
      s.skim.clear();
      s.branches.pane = 'list';
      return list;
    }
    s.branches.pane = 'timeline';
    return Promise.all([list, s.skim.load(route.branch, route.repo, route.project ?? null)]);
  },

  refresh(_route, s) {
    void s.branches.reload();
    void s.skim.refresh();
  },

  move(delta, _route, s) {
    if (onTimeline(s)) s.skim.move(delta);
    else s.branches.move(delta);
    return true;
  },

  open(_route, s) {
    if (!onTimeline(s)) {
      const row = s.branches.selectedRow;
      if (row) {
        pickBranch(s, row.branch.key, row.repo.root, groupProject(row.repo));
        s.branches.pane = 'timeline';
      }
      return true;
    }
    const row = s.skim.selectedRow;
    if (row?.type === 'weak-group') s.skim.toggleWeak();
    else if (row) openSession(s, row.session.session_key, { turn: row.type === 'turn' ? row.turn.turn_index : null });
    return true;
  },

  back(_route, s) {
    if (!onTimeline(s)) return false;
    s.branches.pane = 'list';
    return true;
  },

  tab: (s) =>
    s.skim.repo === null && s.skim.project !== null
      ? { view: 'branches', branch: s.skim.target, repo: null, project: s.skim.project }
      : { view: 'branches', branch: s.skim.target, repo: s.skim.repo },
};

/** Is the keyboard on an open branch's timeline (rather than the branch list)? */
function onTimeline(s: Stores): boolean {
  return s.branches.pane === 'timeline' && s.skim.target !== null;
}
