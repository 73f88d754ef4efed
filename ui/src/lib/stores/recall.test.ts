import { describe, expect, it } from 'vitest';
import type { Api, InsightProgress, Outcome } from '../api';
import { fakeBackend } from '../../testing/fake-backend';
import { InsightsStore } from './insights.svelte';
import { CORPUS_SHOW, RecallStore, canArchive, handedBack, scopeChoices, unacceptedNotice, usageSummary, usageVerdict, type CorpusShow } from './recall.svelte';
import { fakeEntry } from '../../testing/fake-backend';
import type { AgentUsage } from '../api';

const ok = <T>(data: T): Promise<Outcome<T>> => Promise.resolve({ status: 'ok', data });

describe('RecallStore', () => {
  it('maps what the Entries list shows onto the core’s filters (accepted means not archived)', () => {
    const store = new RecallStore({} as Api);
    expect(store.show).toBe('served');
    expect(store.filters).toEqual({ status: 'accepted', trusted_only: false, limit: 500 });
    store.show = 'archived';
    expect(store.filters).toMatchObject({ status: 'archived', trusted_only: false });
    // Trusted-only asks for accepted entries: the core refuses anything else.
    store.show = 'trusted';
    store.type = 'warning';
    expect(store.filters).toEqual({ status: 'accepted', trusted_only: true, type: 'warning', limit: 500 });
    expect(store.trustedOnly).toBe(true);
    store.show = 'unreviewed';
    expect(store.filters).toMatchObject({ status: 'accepted', trusted_only: false, review_state: 'unreviewed_auto' });
    expect(CORPUS_SHOW.map((c) => c.label)).toEqual(['All but archived', 'Trusted (reviewed by you)', 'Unreviewed', 'Archived']);
  });

  it('offers an entry its own branch and repository as scopes, and what it has when neither', () => {
    const shop = fakeEntry('rc-3', 'The hook calls tmux', false);
    const offered = (e: Parameters<typeof scopeChoices>[0]) => scopeChoices(e).map((c) => `${c.value}:${c.label}`);
    expect(offered(shop)).toEqual(['branch:Only on branch feature/login', 'project:All of this repository (shop)', 'global:Every repository']);
    // No branch known: none offered (the core refuses it); a scope extraction wrote is kept on offer.
    expect(offered({ ...shop, git_branch: '  ', scope: 'tool' })).toEqual(['project:All of this repository (shop)', 'global:Every repository', 'tool:As it is: tool']);
    const tool = scopeChoices({ ...shop, scope: 'tool' }).find((c) => c.value === 'tool');
    expect(tool?.means).toBe("Agents' briefs include it on every branch of this repository (shop).");
    // Global reaches every repository's briefs, not only this one's.
    const global = scopeChoices({ ...shop, scope: 'global' });
    expect(global.filter((c) => c.value === 'global')).toHaveLength(1);
    expect(global.find((c) => c.value === 'global')?.means).toContain('in every repository');
    expect(offered({ ...shop, project: '' })[1]).toBe('project:All of this repository');
  });

  it('sends only what the edit changed, type and scope included', async () => {
    const sent: unknown[] = [];
    const fake = fakeBackend();
    const store = new RecallStore({
      recallInbox: (limit: number) => fake.handler('recall_inbox', { limit }).then((data) => ({ status: 'ok', data })),
      recallProposal: () => Promise.resolve({ status: 'error', error: 'not laid out' }),
      recallAccept: (id: string, edit: unknown) => {
        sent.push(edit);
        return fake.handler('recall_accept', { id, edit }).then((data) => ({ status: 'ok', data }));
      },
    } as unknown as Api);
    await store.loadInbox();
    store.edit('rc-3');
    await store.accept('rc-3');
    store.edit('rc-4');
    store.draft!.scope = 'branch';
    await store.accept('rc-4');
    expect(sent).toEqual([null, { scope: 'branch' }]);
    expect(store.undo).toEqual({ action: 'unaccept', id: 'rc-4', previous: 'unreviewed_auto', edited: true });
  });

  it('lists trusted, unreviewed and archived entries apart', async () => {
    const fake = fakeBackend();
    const store = new RecallStore({
      recallList: (filters: unknown) => fake.handler('recall_list', { filters }).then((data) => ({ status: 'ok', data })),
    } as unknown as Api);
    const shown = async (show: CorpusShow) => {
      store.show = show;
      await store.loadCorpus();
      return store.entries.map((e) => `${e.id}:${e.trusted ? 'trusted' : e.review_state}`);
    };
    expect(await shown('trusted')).toEqual(['rc-1:trusted', 'rc-2:trusted']);
    expect(await shown('unreviewed')).toEqual(['rc-3:unreviewed_auto', 'rc-4:unreviewed_auto']);
    expect(await shown('served')).toHaveLength(4);
    expect(await shown('archived')).toEqual([]);
  });

  it('asks by meaning and words, says how many entries wait for vectors, and falls back to words only saying why', async () => {
    const modes: string[] = [];
    const fake = fakeBackend();
    let answer: 'partial' | 'unavailable' = 'partial';
    const store = new RecallStore({
      recallQuery: async (request: { mode: string }) => {
        modes.push(request.mode);
        if (request.mode === 'hybrid' && answer === 'unavailable') {
          return { status: 'error', error: { kind: 'unavailable', message: 'semantic search unavailable: no recall vectors have been built yet', hint: null } };
        }
        const data = (await fake.handler('recall_query', { request })) as Record<string, unknown>;
        return { status: 'ok', data: { ...data, vectors_pending: request.mode === 'hybrid' ? 3 : 0 } };
      },
    } as unknown as Api);
    store.text = 'hook';
    await store.loadCorpus();
    expect(modes).toEqual(['hybrid']);
    expect(store.vectorsPending).toBe(3);
    expect(store.wordsOnly).toBe('');

    answer = 'unavailable';
    await store.loadCorpus();
    expect(modes).toEqual(['hybrid', 'hybrid', 'lexical']);
    expect(store.corpus.status).toBe('ready');
    expect(store.vectorsPending).toBe(0);
    expect(store.wordsOnly).toMatch(/no recall vectors/);
  });

  it('sends only the fields the reviewer changed with an accept', async () => {
    const sent: unknown[] = [];
    const fake = fakeBackend();
    const call = (cmd: string, args: Record<string, unknown>) => fake.handler(cmd, args).then((data) => ({ status: 'ok', data }));
    const store = new RecallStore({
      recallInbox: (limit: number) => call('recall_inbox', { limit }),
      recallAccept: (id: string, edit: unknown) => {
        sent.push({ id, edit });
        return call('recall_accept', { id, edit });
      },
    } as unknown as Api);
    await store.loadInbox();
    store.edit();
    if (!store.draft) throw new Error('no draft');
    store.draft.body = '  The hook calls tmux-waiting.sh.  ';
    await store.accept();
    expect(sent).toEqual([{ id: 'rc-3', edit: { body: 'The hook calls tmux-waiting.sh.' } }]);
    expect(store.draft).toBeNull();
    // Accepting again without a draft sends no edit.
    await store.accept();
    expect(sent[1]).toEqual({ id: 'rc-4', edit: null });
  });

  it('says what a reject took out of the inbox, one entry by its title or a bulk by its count', async () => {
    const fake = fakeBackend();
    const call = (cmd: string, args: Record<string, unknown>) => fake.handler(cmd, args).then((data) => ({ status: 'ok', data }));
    const store = new RecallStore({
      recallInbox: (limit: number) => call('recall_inbox', { limit }),
      recallReject: (id: string) => call('recall_reject', { id }),
      recallRestore: (id: string) => call('recall_restore', { id }),
      recallProposal: (id: string) => call('recall_proposal', { id }),
    } as unknown as Api);
    await store.loadInbox();
    const before = store.items.map((i) => i.entry.id);
    expect(await store.reject()).toBe(true);
    expect(store.notice).toBe('Rejected “The hook calls tmux”');
    // Undo puts it back in the inbox, and says nothing more.
    expect(store.items.map((i) => i.entry.id)).not.toContain(before[0]);
    expect(store.undo).toEqual({ action: 'restore', id: before[0] });
    expect(await store.undoReview()).toBe(true);
    expect(store.items.map((i) => i.entry.id)).toEqual(before);
    // Taken back from further down, it comes first (the newest change): the cursor follows it.
    store.select(1);
    expect(await store.reject()).toBe(true);
    expect(await store.undoReview()).toBe(true);
    expect(store.items[0]?.entry.id).toBe(before[1]);
    expect(store.current?.entry.id).toBe(before[1]);
    expect(store.notice).toBeNull();
    expect(store.undo).toBeNull();
    expect(await store.reject()).toBe(true);
    store.pickAll(true);
    await store.bulk('reject');
    expect(store.notice).toBe('Rejected 1 entry');
    // Only a single reject is offered back.
    expect(store.undo).toBeNull();
    store.dismissNotice();
    expect(store.notice).toBeNull();
  });
});

describe('taking a review back', () => {
  function store() {
    const fake = fakeBackend();
    const sent: { cmd: string; args: Record<string, unknown> }[] = [];
    const call = (cmd: string, args: Record<string, unknown>) => {
      sent.push({ cmd, args });
      return fake.handler(cmd, args).then(
        (data) => ({ status: 'ok', data }),
        (error: unknown) => ({ status: 'error', error }),
      );
    };
    const recall = new RecallStore({
      recallList: (filters: unknown) => call('recall_list', { filters }),
      recallInbox: (limit: number) => call('recall_inbox', { limit }),
      recallAccept: (id: string, edit: unknown) => call('recall_accept', { id, edit }),
      recallUnaccept: (id: string, previous: string) => call('recall_unaccept', { id, previous }),
      recallReject: (id: string) => call('recall_reject', { id }),
      recallRestore: (id: string) => call('recall_restore', { id }),
      recallProposal: (id: string) => call('recall_proposal', { id }),
    } as unknown as Api);
    return { recall, sent };
  }

  it('says what an accept did and Undo puts the entry back in the inbox as it was', async () => {
    const { recall, sent } = store();
    await recall.loadInbox();
    expect(await recall.accept()).toBe(true);
    expect(recall.notice).toBe("Accepted “The hook calls tmux”: agents' briefs include it now");
    expect(recall.undo).toEqual({ action: 'unaccept', id: 'rc-3', previous: 'unreviewed_auto' });
    expect(recall.items.map((i) => i.entry.id)).toEqual(['rc-4']);
    expect(await recall.undoReview()).toBe(true);
    expect(sent.filter((c) => c.cmd === 'recall_unaccept').map((c) => c.args)).toEqual([{ id: 'rc-3', previous: 'unreviewed_auto' }]);
    // Back in the inbox, unreviewed, under the cursor; the notice is gone with it.
    expect(recall.items.map((i) => i.entry.id)).toContain('rc-3');
    expect(recall.current?.entry.id).toBe('rc-3');
    expect(recall.current?.entry.review_state).toBe('unreviewed_auto');
    expect(recall.notice).toBeNull();
    expect(recall.undo).toBeNull();
    // A second Undo has nothing to take back.
    expect(await recall.undoReview()).toBe(false);
  });

  it('says why an Undo of an accept was refused', async () => {
    const { recall } = store();
    await recall.loadInbox();
    await recall.accept();
    // Something else took the accept back meanwhile: the core refuses, the window says why.
    const undo = recall.undo;
    expect(undo?.action).toBe('unaccept');
    recall.undo = undo && undo.action === 'unaccept' ? { ...undo, previous: 'human_reviewed' } : null;
    expect(await recall.undoReview()).toBe(false);
    expect(recall.actionError).toContain('cannot be human_reviewed');
  });

  it('archives an entry a person accepted from the Entries list, and Undo serves it again', async () => {
    const { recall, sent } = store();
    await recall.loadCorpus();
    const rc1 = recall.entries.find((e) => e.id === 'rc-1')!;
    const rc3 = recall.entries.find((e) => e.id === 'rc-3')!;
    expect(canArchive(rc1)).toBe(true);
    expect(canArchive(rc3)).toBe(false);
    expect(await recall.archive('rc-1')).toBe(true);
    expect(sent.filter((c) => c.cmd === 'recall_reject').map((c) => c.args.id)).toEqual(['rc-1']);
    expect(recall.corpusNotice).toBe("Archived “Login needs the session cookie”: agents' briefs leave it out now");
    expect(recall.entries.map((e) => e.id)).not.toContain('rc-1');
    // The inbox's notice is its own.
    expect(recall.notice).toBeNull();
    expect(await recall.undoArchive()).toBe(true);
    expect(sent.filter((c) => c.cmd === 'recall_restore').map((c) => c.args.id)).toEqual(['rc-1']);
    expect(recall.entries.find((e) => e.id === 'rc-1')?.trusted).toBe(true);
    expect(recall.corpusNotice).toBeNull();
  });
});

describe('rejecting a replacement', () => {
  function store() {
    const fake = fakeBackend({ replacements: true });
    const call = (cmd: string, args: Record<string, unknown>) => fake.handler(cmd, args).then((data) => ({ status: 'ok', data }));
    return new RecallStore({
      recallInbox: (limit: number) => call('recall_inbox', { limit }),
      recallReject: (id: string) => call('recall_reject', { id }),
      recallRestore: (id: string) => call('recall_restore', { id }),
      recallProposal: (id: string) => call('recall_proposal', { id }),
    } as unknown as Api);
  }

  it('names the entry served again in its place, and Undo says the replacement replaces it again', async () => {
    const recall = store();
    await recall.loadInbox();
    expect(recall.items.map((i) => i.entry.id)).toEqual(['rc-3', 'rc-4']);
    expect(await recall.reject('rc-4')).toBe(true);
    expect(recall.notice).toBe('Rejected “The hook needs tmux installed”; “The hook wants tmux” is served again in its place');
    // Unreviewed before it was replaced, it waits in the inbox again.
    expect(recall.items.map((i) => i.entry.id)).toEqual(['rc-3', 'rc-5']);
    expect(await recall.undoReview()).toBe(true);
    expect(recall.notice).toBe('“The hook needs tmux installed” is served again and replaces “The hook wants tmux” again');
    expect(recall.items.map((i) => i.entry.id)).toEqual(['rc-4', 'rc-3']);
    expect(recall.current?.entry.id).toBe('rc-4');
    // A reject of an entry that replaced none says no more than that.
    expect(await recall.reject('rc-3')).toBe(true);
    expect(recall.notice).toBe('Rejected “The hook calls tmux”');
  });

  it('names what a bulk reject handed back', async () => {
    const recall = store();
    await recall.loadInbox();
    recall.pickAll(true);
    expect(await recall.bulk('reject')).toBe(true);
    expect(recall.notice).toBe('Rejected 2 entries; “The hook wants tmux” is served again in its place');
    expect(recall.items.map((i) => i.entry.id)).toEqual(['rc-5']);
  });

  it('names entries by title, else by id, one or several', () => {
    const a = fakeEntry('rc-a', 'Use the fake clock', true);
    const b = { ...fakeEntry('rc-b', '', true), title: '  ' };
    expect(handedBack([null])).toBe('');
    expect(handedBack([null, b])).toBe('; “rc-b” is served again in its place');
    expect(handedBack([a, null, b])).toBe('; “Use the fake clock”, “rc-b” are served again in their places');
  });
});

describe('taking back an accept that replaced an entry', () => {
  function store() {
    const fake = fakeBackend({ pendingReplacement: true });
    const call = (cmd: string, args: Record<string, unknown>) => fake.handler(cmd, args).then((data) => ({ status: 'ok', data }));
    return new RecallStore({
      recallList: (filters: unknown) => call('recall_list', { filters }),
      recallInbox: (limit: number) => call('recall_inbox', { limit }),
      recallAccept: (id: string, edit: unknown) => call('recall_accept', { id, edit }),
      recallUnaccept: (id: string, previous: string) => call('recall_unaccept', { id, previous }),
      recallProposal: (id: string) => call('recall_proposal', { id }),
    } as unknown as Api);
  }

  it('says the entry it had replaced is served again', async () => {
    const recall = store();
    await recall.loadInbox();
    await recall.loadCorpus();
    expect(recall.current?.entry.id).toBe('rc-3');
    expect(await recall.accept()).toBe(true);
    await recall.loadCorpus();
    expect(recall.entries.map((e) => e.id)).not.toContain('rc-2');
    expect(await recall.undoReview()).toBe(true);
    expect(recall.notice).toBe('“The hook calls tmux” is back in the inbox; “Tests need the fake clock” is served again in its place');
    expect(recall.current?.entry.id).toBe('rc-3');
    await recall.loadCorpus();
    expect(recall.entries.find((e) => e.id === 'rc-2')?.trusted).toBe(true);
  });

  it('says an edit kept and the entry served again in one notice, and nothing when neither', () => {
    const x = fakeEntry('rc-x', 'Use pnpm', false);
    const y = fakeEntry('rc-y', 'Use npm', true);
    expect(unacceptedNotice({ entry: x, reinstated: null }, false)).toBeNull();
    expect(unacceptedNotice({ entry: x, reinstated: null }, true)).toBe('“Use pnpm” is back in the inbox as you edited it: Edit (e) changes it again');
    expect(unacceptedNotice({ entry: x, reinstated: y }, true)).toBe(
      '“Use pnpm” is back in the inbox as you edited it: Edit (e) changes it again; “Use npm” is served again in its place',
    );
  });
});

describe('InsightsStore', () => {
  it('sends include_weak with a branch only', () => {
    const store = new InsightsStore({} as Api, () => Promise.resolve(() => {}));
    store.includeWeak = true;
    expect(store.request.slice).not.toHaveProperty('include_weak');
    store.branch = ' feature/login ';
    expect(store.request.slice).toMatchObject({ branch: 'feature/login', include_weak: true });
    store.includeWeak = false;
    expect(store.request.slice).toMatchObject({ branch: 'feature/login', include_weak: false });
  });

  it('leaves blank form fields out of the request', () => {
    const store = new InsightsStore({} as Api, () => Promise.resolve(() => {}));
    store.project = '  ';
    store.since = '2026-11-01';
    store.agent = 'codex';
    store.focus = 'flaky tests';
    expect(store.request).toEqual({
      slice: { automation: 'exclude', teammates: false, since: '2026-11-01', agent: 'codex' },
      template: 'weekly-summary',
      force: false,
      focus: 'flaky tests',
    });
  });

  it('follows the phases of its own run only, and stops listening when done', async () => {
    let listener: ((p: InsightProgress) => void) | null = null;
    let stopped = false;
    const seen: (string | null)[] = [];
    const fake = fakeBackend();
    const call = (cmd: string, args: Record<string, unknown>) => fake.handler(cmd, args).then((data) => ({ status: 'ok' as const, data }));
    const store = new InsightsStore(
      {
        insightGenerate: async (run: number, request: unknown) => {
          listener?.({ run: run + 1, phase: 'saving' }); // another window's run
          seen.push(store.phase);
          listener?.({ run, phase: 'generating' });
          seen.push(store.phase);
          return call('insight_generate', { run, request });
        },
        insightList: () => call('insight_list', { search: null, starred: false }),
        insightPreview: (request: unknown) => call('insight_preview', { request }),
        insightGet: (id: number) => call('insight_get', { id }),
        insightHtml: () => ok('<p>report</p>'),
      } as unknown as Api,
      (handler) => {
        listener = handler;
        return Promise.resolve(() => {
          stopped = true;
        });
      },
    );
    const made = await store.generate();
    expect(seen).toEqual([null, 'generating']);
    expect(stopped).toBe(true);
    expect(store.phase).toBeNull();
    expect(made?.id).toBe(3);
    expect(store.report.data?.id).toBe(3);
    expect(store.toast?.text).toBe('Report #3 saved');
  });
});

describe('the ledger of what agents used', () => {
  const row = (helpful: number, wrong: number, shown = 1, packed = 0): AgentUsage => ({
    entry_id: `rc-${helpful}-${wrong}`,
    title: 't',
    shown,
    packed,
    helpful,
    wrong,
    last_used_at: null,
  });

  it('calls an entry mostly wrong only when agents said wrong more often than helpful', () => {
    expect(usageVerdict(row(0, 0))).toBe('unrated');
    expect(usageVerdict(row(1, 3))).toBe('wrong');
    expect(usageVerdict(row(3, 1))).toBe('helpful');
    expect(usageVerdict(row(2, 2))).toBe('mixed');
  });

  it('sums the rows into one line and says what to do about wrong entries', () => {
    expect(usageSummary([row(1, 0, 1, 1)])).toBe('1 entry used · shown 1 time · 1 in briefs · 1 helpful, 0 wrong');
    expect(usageSummary([row(2, 0, 7, 3), row(0, 3, 2, 0)])).toBe(
      '2 entries used · shown 9 times · 3 in briefs · 2 helpful, 3 wrong · 1 entry mostly wrong: review again',
    );
  });

  it('loads at most 200 rows from the backend and keeps them across a failed reload', async () => {
    const asked: number[] = [];
    let fail = false;
    const store = new RecallStore({
      recallAgentUsage: (limit: number) => {
        asked.push(limit);
        return fail
          ? Promise.resolve({ status: 'error', error: 'database is locked' })
          : ok([row(1, 0)]);
      },
    } as unknown as Api);
    await store.loadAgentUsage();
    fail = true;
    await store.loadAgentUsage();
    expect(asked).toEqual([200, 200]);
    expect(store.agentUsage.data?.length).toBe(1);
    expect(store.agentUsage.status).toBe('error');
  });
});
