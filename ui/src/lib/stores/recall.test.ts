import { describe, expect, it } from 'vitest';
import type { Api, InsightProgress, Outcome } from '../api';
import { fakeBackend } from '../../testing/fake-backend';
import { InsightsStore } from './insights.svelte';
import { RecallStore, usageSummary, usageVerdict } from './recall.svelte';
import type { AgentUsage } from '../api';

const ok = <T>(data: T): Promise<Outcome<T>> => Promise.resolve({ status: 'ok', data });

describe('RecallStore', () => {
  it('asks for accepted entries whenever trusted-only is on (the core refuses anything else)', () => {
    const store = new RecallStore({} as Api);
    store.status = 'archived';
    expect(store.filters).toMatchObject({ status: 'archived', trusted_only: false });
    store.trustedOnly = true;
    store.type = 'warning';
    expect(store.filters).toMatchObject({ status: 'accepted', trusted_only: true, type: 'warning' });
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
    expect(await store.undoReject()).toBe(true);
    expect(store.items.map((i) => i.entry.id)).toEqual(before);
    // Taken back from further down, it comes first (the newest change): the cursor follows it.
    store.select(1);
    expect(await store.reject()).toBe(true);
    expect(await store.undoReject()).toBe(true);
    expect(store.items[0]?.entry.id).toBe(before[1]);
    expect(store.current?.entry.id).toBe(before[1]);
    expect(store.notice).toBeNull();
    expect(store.undoable).toBeNull();
    expect(await store.reject()).toBe(true);
    store.pickAll(true);
    await store.bulk('reject');
    expect(store.notice).toBe('Rejected 1 entry');
    // Only a single reject is offered back.
    expect(store.undoable).toBeNull();
    store.dismissNotice();
    expect(store.notice).toBeNull();
  });
});

describe('InsightsStore', () => {
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
