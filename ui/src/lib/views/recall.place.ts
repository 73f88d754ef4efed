// The Recall place, one of four tabs: the trusted corpus (j/k walk the entries' detail), the
// review inbox (j/k move, a/r/e/m/x review), the entries agents used (the ledger's agent view) and
// generated reports (no list keys: the pages scroll).
import type { Place, TriageVerb } from '../place';
import type { Stores } from '../stores';

export const recallPlace: Place<'recall'> = {
  load(route, s) {
    s.recall.tab = route.tab;
    switch (route.tab) {
      case 'corpus':
        return s.recall.loadCorpus();
      case 'inbox':
        s.live.seenInbox();
        return s.recall.loadInbox();
      case 'agents':
        return s.recall.loadAgentUsage();
      case 'generated':
        return Promise.all([s.insights.load(), route.insight === null ? s.insights.close() : s.insights.open(route.insight)]);
    }
  },

  refresh(route, s) {
    if (route.tab === 'corpus') void s.recall.loadCorpus();
    else if (route.tab === 'inbox') {
      s.live.seenInbox();
      void s.recall.loadInbox();
    }
    else if (route.tab === 'agents') void s.recall.loadAgentUsage();
    else void s.insights.loadPreview();
  },

  move(delta, route, s) {
    if (route.tab === 'inbox') {
      s.recall.move(delta);
      return true;
    }
    const entries = s.recall.entries;
    if (route.tab !== 'corpus' || entries.length === 0) return false;
    const at = entries.findIndex((e) => e.id === s.recall.detailId);
    const next = Math.min(Math.max(at < 0 ? 0 : at + delta, 0), entries.length - 1);
    s.recall.showDetail(entries[next]?.id ?? null);
    return true;
  },

  open: () => false,

  back: () => false,

  // Entries have a search box of their own: `/` there searches Recall, not the archive.
  search(route) {
    const box = route.tab === 'corpus' ? document.getElementById('recall-search') : null;
    box?.focus();
    return box !== null;
  },

  tab: (s) => ({
    view: 'recall',
    tab: s.recall.tab,
    insight: s.recall.tab === 'generated' ? (s.insights.report.data?.id ?? null) : null,
  }),

  triage(verb, route, s) {
    if (route.tab !== 'inbox') return false;
    review(verb, s);
    return true;
  },
};

function review(verb: TriageVerb, s: Stores): void {
  // A read-only archive saves no review: a/r/m do nothing, as their buttons are off (the buttons'
  // tooltips and the notice at the top of the window say why).
  if (s.app.info?.read_only && (verb === 'accept' || verb === 'reject' || verb === 'merge')) return;
  switch (verb) {
    case 'accept':
      void s.recall.accept();
      return;
    case 'reject':
      void s.recall.reject();
      return;
    case 'edit':
      s.recall.edit();
      return;
    case 'merge':
      void s.recall.mergeIntoDuplicate();
      return;
    case 'tick': {
      const id = s.recall.current?.entry.id;
      if (id) s.recall.togglePick(id);
      return;
    }
  }
}
