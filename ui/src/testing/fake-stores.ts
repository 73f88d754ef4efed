// Stand-in stores for the places table and the window controller: every method a spy, every
// field plain. A real Router, so routes and the way back behave as in the window.
import { vi } from 'vitest';
import { Router } from '../lib/router.svelte';
import type { Stores } from '../lib/stores';

const done = () => vi.fn(() => Promise.resolve());

export function fakeStores() {
  const fake = {
    router: new Router(),
    app: { empty: false as boolean | null, checkArchive: done(), loadInfo: done() },
    live: { seenInbox: vi.fn(), last: null as { cause: string } | null },
    branches: { pane: 'list' as 'list' | 'timeline', selectedRow: null as unknown, load: done(), reload: done(), selectKey: vi.fn(), move: vi.fn() },
    skim: { target: null as string | null, repo: null as string | null, selectedRow: null as unknown, load: done(), refresh: done(), clear: vi.fn(), move: vi.fn(), toggleWeak: vi.fn() },
    sessions: { selectedSession: null as unknown, load: done(), move: vi.fn() },
    session: { key: null as string | null, open: done(), refresh: done(), move: vi.fn(), activate: vi.fn() },
    search: { text: '', selectedHit: null as unknown, run: done(), focus: vi.fn(), move: vi.fn() },
    recall: {
      tab: 'corpus' as 'corpus' | 'inbox' | 'generated',
      entries: [] as { id: string }[],
      detailId: null as string | null,
      current: null as unknown,
      loadCorpus: done(),
      loadInbox: done(),
      loadForSession: done(),
      showDetail: vi.fn(),
      move: vi.fn(),
      accept: done(),
      reject: done(),
      edit: vi.fn(),
      mergeIntoDuplicate: done(),
      togglePick: vi.fn(),
    },
    insights: { report: { data: null as { id: number } | null }, load: done(), open: done(), close: vi.fn(), loadPreview: done() },
    settings: { load: done(), loadDoctor: done(), loadExtract: done() },
    meaning: { load: done(), dispose: vi.fn() },
    team: { load: done(), show: done(), open: { status: 'idle' as string }, shown: null as { key: string; publisher: string } | null, close: vi.fn() },
  };
  return { fake, stores: fake as unknown as Stores };
}
