// The stores behind the views, over small fake backends.
import { describe, expect, it, vi } from 'vitest';
import type { ErrorReport, Outcome, SearchAnswer, SearchHit, SkimView } from '../api';
import { fakeBackend, fakeRecords, fakeSkim, fakeTimeline, key } from '../../testing/fake-backend';
import { Resource } from './resource.svelte';
import { SessionStore, setAsideNote, setAsidePlan, type SessionApi } from './session.svelte';
import { SkimStore, pulledText } from './skim.svelte';
import { SearchStore, SEARCH_DELAY_MS } from './search.svelte';
import { SyncStore } from './sync.svelte';
import { BranchesStore, groupProject } from './branches.svelte';
import { SettingsStore, parseDirs } from './settings.svelte';
import type { Api } from '../api';

const ok = <T>(data: T): Outcome<T> => ({ status: 'ok', data });
const fail = (message: string): Outcome<never> => ({ status: 'error', error: { kind: 'internal', message, hint: null } });

/** The fake backend's handler as the generated `commands` object (only what a store uses). */
function api(options = {}): Api {
  const { handler } = fakeBackend(options);
  const call = (cmd: string, args: Record<string, unknown>) =>
    handler(cmd, args).then(ok, (error: ErrorReport): Outcome<never> => ({ status: 'error', error }));
  return {
    listBranches: () => call('list_branches', {}),
    skimBranch: (targetKey: string, includeWeak: boolean, repoRoot: string | null, project: string | null) =>
      call('skim_branch', { targetKey, includeWeak, repoRoot, project }),
    sessionDetail: (sessionKey: string) => call('session_detail', { sessionKey }),
    sessionTimeline: (sessionKey: string) => call('session_timeline', { sessionKey }),
    turnRecords: (sessionKey: string, turnIndex: number) => call('turn_records', { sessionKey, turnIndex }),
    recordTurn: (sessionKey: string, ordinal: number) => call('record_turn', { sessionKey, ordinal }),
    sessionExport: (key: string, options: unknown) => call('session_export', { key, options }),
    forgetPreview: (request: unknown) => call('forget_preview', { request }),
    forgetSessions: (request: unknown, plan: unknown) => call('forget_sessions', { request, plan }),
    sessionResume: (sessionKey: string) => call('session_resume', { sessionKey }),
    sourceDirs: () => call('source_dirs', {}),
    setSourceDirs: (agent: string, dirs: string[]) => call('set_source_dirs', { agent, dirs }),
    hookOverview: () => call('hook_overview', {}),
    installHook: (agent: string, dryRun: boolean) => call('install_hook', { agent, dryRun }),
    uninstallHook: (agent: string, dryRun: boolean) => call('uninstall_hook', { agent, dryRun }),
    mcpOverview: () => call('mcp_overview', {}),
    installMcp: (agent: string, dryRun: boolean) => call('install_mcp', { agent, dryRun }),
    uninstallMcp: (agent: string, dryRun: boolean) => call('uninstall_mcp', { agent, dryRun }),
    doctor: () => call('doctor', {}),
    privacyPreview: (text: string) => call('privacy_preview', { text }),
    extractStatus: () => call('extract_status', {}),
    extractDoctor: () => call('extract_doctor', {}),
  } as unknown as Api;
}

describe('Resource', () => {
  it('goes idle → loading → ready, keeps data on a kept reload, and retries the last load', async () => {
    const r = new Resource<number>();
    expect(r.status).toBe('idle');
    let n = 0;
    const loading = r.load(async () => ok(++n));
    expect(r.status).toBe('loading');
    await loading;
    expect([r.status, r.data]).toEqual(['ready', 1]);
    const again = r.retry();
    expect(r.data).toBe(1);
    await again;
    expect(r.data).toBe(2);
  });

  it('keeps only the newest answer', async () => {
    const r = new Resource<string>();
    let release: (v: Outcome<string>) => void = () => {};
    const old = r.load(() => new Promise((resolve) => (release = resolve)));
    await r.load(async () => ok('new'));
    release(ok('old'));
    expect(await old).toBe(false);
    expect(r.data).toBe('new');
  });

  it('turns a rejection into an error', async () => {
    const r = new Resource<string>();
    await r.load(() => Promise.reject(new Error('IPC is down')));
    expect([r.status, r.error]).toEqual(['error', 'IPC is down']);
  });

  it('keeps a failure’s hint and kind beside its message, and forgets them on the next load', async () => {
    const r = new Resource<string>();
    await r.load(async () => ({ status: 'error', error: { kind: 'not_found', message: 'no session sha256-0', hint: 'Run cairn sync.' } }));
    expect(r.error).toBe('no session sha256-0');
    expect(r.problem).toEqual({ message: 'no session sha256-0', hint: 'Run cairn sync.', kind: 'not_found' });
    await r.load(async () => ok('found'));
    expect([r.status, r.problem, r.error]).toEqual(['ready', null, null]);
  });
});

describe('SessionStore', () => {
  it('loads the command that resumes the session with it, and forgets it for another session', async () => {
    const store = new SessionStore(api());
    await store.open(key(1));
    await vi.waitFor(() => expect(store.resume.data?.shell).toBe('cd /home/dev/shop && claude --resume fake-id'));
    expect(store.resume.data?.problem).toBeNull();
    const other = store.open(key(2));
    expect(store.resume.data).toBeNull();
    await other;
  });

  it('lists turns, expands one into its records and collapses it', async () => {
    const store = new SessionStore(api({ turns: 3 }) as SessionApi);
    await store.open(key(1));
    expect(store.rows.map((r) => r.type)).toEqual(['turn', 'turn', 'turn']);
    expect(store.selected).toBe(0);
    const expanding = store.toggle(1);
    expect(store.rows.map((r) => r.type)).toEqual(['turn', 'turn', 'records-state', 'turn']);
    await expanding;
    expect(store.rows.map((r) => (r.type === 'record' ? r.record.ordinal : r.type))).toEqual(['turn', 'turn', 4, 5, 6, 7, 'turn']);
    await store.toggle(1);
    expect(store.rows).toHaveLength(3);
    expect(store.selected).toBe(1);
  });

  it('follows a record anchor: expands its turn, selects, highlights and scrolls to it', async () => {
    const store = new SessionStore(api({ turns: 100_000 }) as SessionApi);
    await store.open(key(1), { record: 200_001 });
    expect([...store.expanded.keys()]).toEqual([50_000]);
    const row = store.rows[store.selected];
    expect(row?.type === 'record' && row.record.ordinal).toBe(200_001);
    expect(store.highlight).toBe(200_001);
    expect(store.scrollRequest?.index).toBe(store.selected);
    expect(store.rows).toHaveLength(100_004);
  });

  it('forgets a scroll request once another session (or the same one again) is opened', async () => {
    const store = new SessionStore(api({ turns: 10 }) as SessionApi);
    await store.open(key(1), { record: 5 });
    expect(store.scrollRequest).not.toBeNull();
    // The request must not be replayed when the next timeline list mounts.
    const opening = store.open(key(2));
    expect(store.scrollRequest).toBeNull();
    await opening;
    expect(store.scrollRequest).toBeNull();
  });

  it('explains an anchor past the end, and a failed turn load with a retry', async () => {
    const backend = api({ turns: 2, failOnce: { turn_records: 'database locked' } }) as SessionApi;
    const store = new SessionStore(backend);
    await store.open(key(1), { record: 99 });
    expect(store.anchorError).toContain('no record #99');
    await store.expand(0);
    const state = store.rows[1];
    expect(state?.type === 'records-state' && state.records.error).toBe('database locked');
    store.activate(1);
    await vi.waitFor(() => expect(store.rows[1]?.type).toBe('record'));
  });

  it('exports the open session and says where it went and what it left out', async () => {
    const store = new SessionStore(api() as SessionApi);
    await store.open(key(1));
    await store.exportAs('atif');
    expect(store.exported?.error).toBe(false);
    expect(store.exported?.text).toMatch(/^Saved session-claude-.*\.atif\.json \(\/home\/dev\/Downloads\/.*Redacted: github-pat ×1/);
  });

  it('shows what forgetting would remove before it forgets, and nothing goes on cancel', async () => {
    const calls: string[] = [];
    const sent: unknown[][] = [];
    const base = api() as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
    const spy = new Proxy(base, {
      get: (target, name: string) => (...a: unknown[]) => {
        calls.push(name);
        if (name === 'forgetSessions') sent.push(a);
        return target[name]!(...a);
      },
    }) as unknown as SessionApi;
    const store = new SessionStore(spy);
    await store.open(key(1));
    await store.askForget();
    expect(store.forgetPlan?.records).toBe(23);
    expect(store.forgetPlan?.recall_entries[0]?.back_to_inbox).toBe(true);
    store.cancelForget();
    expect(store.forgetPlan).toBeNull();
    expect(calls).not.toContain('forgetSessions');
    await store.confirmForget();
    expect(calls).not.toContain('forgetSessions');
    await store.askForget();
    await store.confirmForget();
    expect(calls.filter((c) => c === 'forgetSessions')).toHaveLength(1);
    // The forget acts on the plan the window showed, sent back with the request.
    expect((sent[0]?.[1] as { records: number } | undefined)?.records).toBe(23);
    expect(store.forgotten).toEqual({ text: 'Forgot 1 session and 23 records.', error: false });
    expect(store.timeline.data).toBeNull();
    // The store knows the session is gone: the page says so, and nothing loads it again.
    expect(store.missing?.kind).toBe('not_found');
    await store.refresh();
    expect(store.timeline.status).toBe('idle');
    await store.askForget();
    expect(store.forgetPlan).toBeNull();
    // Another session opens as usual.
    await store.open(key(2));
    expect(store.missing).toBeNull();
  });

  it('says what a forget did in the databases a rebuild set aside', () => {
    expect(setAsideNote([])).toBe('');
    expect(setAsideNote([{ path: '/d/cairn.db.damaged-1', fate: 'removed' }])).toBe('Also removed from a database a rebuild set aside.');
    const held = setAsideNote([
      { path: '/d/cairn.db.damaged-1', fate: 'removed' },
      { path: '/d/cairn.db.damaged-\u202E2', fate: 'holds', why: 'it fails quick_check' },
      { path: '/d/cairn.db.damaged-3', fate: 'may_hold', why: null },
    ]);
    expect(held).toContain('Also removed from a database');
    expect(held).toContain('/d/cairn.db.damaged-2, set aside by a rebuild, still holds them (it fails quick_check): delete it');
    expect(held).toContain('/d/cairn.db.damaged-3, set aside by a rebuild, may still hold them: delete it');
  });

  it('says what a forget did with the half-made database a rebuild that did not finish left', () => {
    expect(setAsideNote([{ path: '/d/cairn.db.rebuilding', fate: 'deleted' }])).toBe('Deleted /d/cairn.db.rebuilding, left by a rebuild that did not finish.');
  });

  it('lists before a forget what it will do in each database set aside, the rm where it cannot clean one', () => {
    expect(setAsidePlan([])).toEqual([]);
    const lines = setAsidePlan([
      { path: '/d/cairn.db.damaged-1', fate: 'removed', sessions: 1 },
      { path: '/d/cairn.db.damaged-2', fate: 'removed', sessions: 1 },
      {
        path: '/d/cairn.db.damaged-\u202E3',
        rm: "rm -f $'/d/cairn.db.damaged-\\xe2\\x80\\xae3' $'/d/cairn.db.damaged-\\xe2\\x80\\xae3-wal' $'/d/cairn.db.damaged-\\xe2\\x80\\xae3-shm'",
        fate: 'may_hold',
        sessions: 0,
        why: 'it could not be read: file is not a database',
      },
    ]);
    expect(lines).toEqual([
      { text: 'Also removed from 2 databases a rebuild set aside: /d/cairn.db.damaged-1, /d/cairn.db.damaged-2.', rm: null },
      {
        text: '/d/cairn.db.damaged-3, set aside by a rebuild, cannot be cleaned: it may hold this session (it could not be read: file is not a database). Delete it once the rebuilt archive is checked:',
        // The core's command, naming the file itself: the shown name would name another.
        rm: "rm -f $'/d/cairn.db.damaged-\\xe2\\x80\\xae3' $'/d/cairn.db.damaged-\\xe2\\x80\\xae3-wal' $'/d/cairn.db.damaged-\\xe2\\x80\\xae3-shm'",
      },
    ]);
  });

  it('folds and unfolds a record by Enter', async () => {
    const store = new SessionStore(api() as SessionApi);
    await store.open(key(1), { turn: 0 });
    const index = store.rows.findIndex((r) => r.type === 'record' && r.record.kind === 'tool_result');
    store.activate(index);
    expect(store.unfolded.has(3)).toBe(true);
    store.activate(index);
    expect(store.unfolded.has(3)).toBe(false);
  });
});

describe('SkimStore', () => {
  it('puts weak sessions in a collapsed group at the end', async () => {
    const store = new SkimStore(api());
    await store.load('ref:refs/heads/feature/login');
    const kinds = store.rows.map((r) => (r.type === 'session' ? `s${r.session.weak ? '-weak' : ''}` : r.type));
    expect(kinds).toEqual(['s', 'turn', 'turn', 'turn', 's', 'turn', 'turn', 'turn', 'weak-group']);
    store.toggleWeak();
    expect(store.rows.slice(-3).map((r) => r.type)).toEqual(['session', 'turn', 'turn']);
    expect(store.strongCount).toBe(2);
  });

  it('keeps what is on screen while a refresh runs and starts over for another branch', async () => {
    let answer: SkimView = fakeSkim('ref:refs/heads/feature/login');
    const store = new SkimStore({ skimBranch: async () => ok(answer) } as unknown as Api);
    await store.load('ref:refs/heads/feature/login');
    store.select(4);
    const refreshing = store.refresh();
    expect(store.rows.length).toBeGreaterThan(0);
    await refreshing;
    expect(store.selected).toBe(4);
    answer = fakeSkim('ref:refs/heads/other');
    await store.load('ref:refs/heads/other');
    expect(store.rows).toEqual([]);
    expect(store.selected).toBe(-1);
  });

  it('says "belongs here" and "not related" for the branch on screen, then reloads the timeline', async () => {
    const sent: unknown[][] = [];
    let loads = 0;
    let refuse = false;
    const store = new SkimStore({
      skimBranch: async () => {
        loads++;
        return ok(fakeSkim('ref:refs/heads/feature/login'));
      },
      correctLink: async (...args: unknown[]) => {
        sent.push(args);
        return refuse ? fail('branch target is not a branch name git accepts') : ok({ action: args[2] });
      },
    } as unknown as Api);
    await store.load('ref:refs/heads/feature/login', '/home/dev/shop');
    await store.correct('sha256-a', 'link');
    expect(sent[0]).toEqual(['sha256-a', { kind: 'branch', key: 'ref:refs/heads/feature/login', pr_number: null }, 'link', null]);
    expect(store.corrected).toEqual({ text: 'Linked to this branch by you; syncs keep it.', error: false });
    expect(loads).toBe(2);
    await store.correct('sha256-b', 'unlink');
    expect(sent[1]?.[2]).toBe('unlink');
    expect(store.corrected?.text).toMatch(/not link it here again/);
    refuse = true;
    await store.correct('sha256-b', 'unlink');
    expect(store.corrected).toEqual({ text: 'branch target is not a branch name git accepts', error: true });
    // Another branch starts without the last branch's message.
    await store.load('ref:refs/heads/other');
    expect(store.corrected).toBeNull();
  });

  it("asks for one repository's branch, and the same branch in another repository is another timeline", async () => {
    const asked: (string | null)[] = [];
    const store = new SkimStore({
      skimBranch: async (_target: string, _weak: boolean, repo: string | null) => {
        asked.push(repo);
        return ok(fakeSkim('ref:refs/heads/feature/login'));
      },
    } as unknown as Api);
    await store.load('ref:refs/heads/main', '/home/dev/shop');
    store.select(2);
    await store.refresh();
    expect(store.selected).toBe(2);
    await store.load('ref:refs/heads/main', '/home/dev/blog');
    expect(store.selected).toBe(0);
    expect(asked).toEqual(['/home/dev/shop', '/home/dev/shop', '/home/dev/blog']);
  });

  it('asks for the sessions of one project that ran in no repository, not every repository\'s branch', async () => {
    const asked: [string | null, string | null][] = [];
    const store = new SkimStore({
      skimBranch: async (_target: string, _weak: boolean, repo: string | null, project: string | null) => {
        asked.push([repo, project]);
        return ok(fakeSkim('ref:refs/heads/feature/login'));
      },
    } as unknown as Api);
    await store.load('ref:refs/heads/main', null, 'notes');
    store.select(2);
    await store.refresh();
    expect(store.selected).toBe(2);
    // Another project's `main` is another timeline; a repository's root wins over a project.
    await store.load('ref:refs/heads/main', null, 'scratch');
    expect(store.selected).toBe(0);
    await store.load('ref:refs/heads/main', '/home/dev/shop', 'scratch');
    expect(store.project).toBeNull();
    store.clear();
    expect(store.project).toBeNull();
    expect(asked).toEqual([
      [null, 'notes'],
      [null, 'notes'],
      [null, 'scratch'],
      ['/home/dev/shop', null],
    ]);
  });
});

describe('SkimStore pull', () => {
  const report = { remote: 'origin', sessions_imported: 2, unchanged: 1, transcripts_imported: 1, skipped: [], skipped_more: 0, forgotten: 0, withdrawn: 0 };

  it("pulls teammates' sessions in the repository on screen, says what came, and reloads", async () => {
    const asked: unknown[][] = [];
    let loads = 0;
    let refuse = false;
    const store = new SkimStore({
      skimBranch: async () => {
        loads++;
        return ok(fakeSkim('ref:refs/heads/feature/login'));
      },
      pullTeammates: async (...args: unknown[]) => {
        asked.push(args);
        return refuse ? fail('cannot pull from "origin": its URL uses the transport `ext::`') : ok(report);
      },
    } as unknown as Api);
    // Across repositories there is no one place to pull from.
    await store.load('ref:refs/heads/feature/login');
    await store.pull();
    expect(asked).toEqual([]);
    await store.load('ref:refs/heads/feature/login', '/home/dev/shop');
    await store.pull();
    expect(asked).toEqual([['/home/dev/shop', null]]);
    expect(store.pulled).toEqual({ text: 'Pulled 2 published sessions from origin (1 in full) · 1 unchanged.', error: false });
    expect(loads).toBe(3);
    refuse = true;
    await store.pull();
    expect(store.pulled).toEqual({ text: 'cannot pull from "origin": its URL uses the transport `ext::`', error: true });
    expect(store.pulling).toBe(false);
    await store.load('ref:refs/heads/other', '/home/dev/shop');
    expect(store.pulled).toBeNull();
  });

  it('names what was refused and says when nothing is new', () => {
    expect(
      pulledText({ ...report, sessions_imported: 0, transcripts_imported: 0, skipped: [{ ref: 'refs/cairn/sessions/x', reason: 'not a session key' }], skipped_more: 2 }),
    ).toBe('Nothing new from origin · 1 unchanged · 3 refs refused: not a session key.');
    expect(pulledText({ ...report, sessions_imported: 0, transcripts_imported: 0, forgotten: 2 })).toBe(
      'Nothing new from origin · 1 unchanged · 2 sessions you forgot here left out.',
    );
    expect(pulledText({ ...report, sessions_imported: 0, transcripts_imported: 0, withdrawn: 1 })).toBe(
      'Nothing new from origin · 1 unchanged · 1 session their publishers withdrew dropped.',
    );
  });
});

describe('BranchesStore', () => {
  it('skips repository headings when moving and keeps the selection across a reload', async () => {
    const store = new BranchesStore(api());
    await store.load();
    store.move(1);
    expect(store.selectedRow?.branch.name).toBe('feature/login');
    store.move(1);
    store.move(1);
    expect(store.selectedRow?.branch.name).toBe('drafts');
    await store.load();
    expect(store.selectedRow?.branch.name).toBe('drafts');
    store.selectKey('ref:refs/heads/main');
    expect(store.selectedRow?.repo.name).toBe('shop');
  });

  it('tells apart the groups of sessions in no repository by their project', async () => {
    const store = new BranchesStore(api());
    await store.load();
    store.selectKey('ref:refs/heads/main', null, 'notes');
    expect(store.selectedRow?.repo.name).toBe('notes');
    // Kept across a reload: `scratch` lists the same branch with no root either.
    await store.load();
    expect(store.selectedRow?.repo.name).toBe('notes');
    store.selectKey('ref:refs/heads/main', null, 'scratch');
    expect(store.selectedRow?.repo.name).toBe('scratch');
    // Under an agent filter, a group the list does not show hides the branch.
    expect(store.hides('ref:refs/heads/main', null, 'elsewhere')).toBe(false);
    await store.setAgent('codex');
    expect(store.hides('ref:refs/heads/main', null, 'notes')).toBe(false);
    expect(store.hides('ref:refs/heads/main', null, 'elsewhere')).toBe(true);
  });

  it('skims the group of sessions in no repository and no project with an empty project, never with none', () => {
    const repo = { name: 'x', branches: [], session_count: 1, last_activity: null };
    expect(groupProject({ ...repo, root: '/src/shop', project: null })).toBeNull();
    expect(groupProject({ ...repo, root: null, project: 'notes' })).toBe('notes');
    // Neither a root nor a project would read every repository's branch of that name.
    expect(groupProject({ ...repo, root: null, project: null })).toBe('');
  });
});

describe('BranchesStore loading', () => {
  it('joins a load in flight (the start-up prefetch) but reloads when the archive changed', async () => {
    const listBranches = vi.fn(async () => ok([]));
    const store = new BranchesStore({ listBranches } as unknown as Api);
    await Promise.all([store.load(), store.load()]);
    expect(listBranches).toHaveBeenCalledTimes(1);
    const first = store.load();
    await Promise.all([first, store.reload()]);
    expect(listBranches).toHaveBeenCalledTimes(3);
  });
});

describe('SearchStore', () => {
  it('sends only the filters that are set; "to" includes the whole day', () => {
    const store = new SearchStore({ searchArchive: vi.fn() } as unknown as Api);
    store.text = '  flaky test ';
    expect(store.query).toEqual({ text: 'flaky test', limit: 200 });
    store.agent = 'codex';
    store.project = 'shop';
    store.branch = 'main';
    store.since = '2026-11-01';
    store.until = '2026-11-30';
    expect(store.query).toEqual({
      text: 'flaky test',
      agent: 'codex',
      project: 'shop',
      branch: 'main',
      // The days' starts on this machine's clock: midnight of 1 November, and of 1 December.
      since: new Date(2026, 10, 1).toISOString(),
      until: new Date(2026, 11, 1).toISOString(),
      limit: 200,
    });
    // A day written wrong goes as written, for the backend to refuse by name.
    store.since = '1 Nov';
    expect(store.query.since).toBe('1 Nov');
  });

  it('searches once the typing pauses, and a blank query clears', async () => {
    vi.useFakeTimers();
    try {
      const searchArchive = vi.fn(async () => ok({ hits: [], mode: 'lexical', vectors_pending: 0 }));
      const store = new SearchStore({ searchArchive } as unknown as Api);
      store.text = 'a';
      store.schedule();
      store.text = 'ab';
      store.schedule();
      await vi.advanceTimersByTimeAsync(SEARCH_DELAY_MS + 10);
      expect(searchArchive).toHaveBeenCalledTimes(1);
      expect(searchArchive).toHaveBeenCalledWith({ text: 'ab', limit: 200 });
      store.text = ' ';
      await store.run();
      expect(store.results.status).toBe('idle');
    } finally {
      vi.useRealTimers();
    }
  });

  it('marks the last answer out of date while a newer question is asked, and keeps the words it answered', async () => {
    const hit = { session_key: 'k', ordinal: 1 } as unknown as SearchHit;
    let answer: (o: Outcome<SearchAnswer>) => void = () => {};
    const searchArchive = vi
      .fn()
      .mockResolvedValueOnce(ok({ hits: [hit], mode: 'lexical', vectors_pending: 0 }))
      .mockImplementationOnce(() => new Promise((resolve) => (answer = resolve)))
      .mockResolvedValueOnce(ok({ hits: [], mode: 'lexical', vectors_pending: 0 }));
    const store = new SearchStore({ searchArchive } as unknown as Api);
    store.text = 'flaky';
    await store.run();
    expect(store.stale).toBe(false);
    expect(store.answered).toBe('flaky');

    store.text = 'flaky test';
    const asked = store.run();
    expect(store.stale).toBe(true);
    expect(store.hits).toEqual([hit]);
    expect(store.answered).toBe('flaky');
    answer(ok({ hits: [], mode: 'lexical', vectors_pending: 0 }));
    await asked;
    expect(store.stale).toBe(false);
    expect(store.answered).toBe('flaky test');

    // An empty answer on screen is not "out of date": the view says it is searching instead.
    store.text = 'flaky tests';
    const again = store.run();
    expect(store.stale).toBe(false);
    await again;
  });
});

describe('SyncStore', () => {
  it('follows progress events and reports the result', async () => {
    let emit: (p: { phase: 'start' | 'advance' | 'finish'; files: number; bytes_total: number; bytes_done: number }) => void =
      () => {};
    let finish: (o: Outcome<never>) => void = () => {};
    const store = new SyncStore(
      { syncArchive: () => new Promise((resolve) => (finish = resolve)) } as unknown as Api,
      async (handler) => {
        emit = handler;
        return () => {};
      },
    );
    const running = store.run();
    await vi.waitFor(() => expect(store.status).toBe('running'));
    expect(store.fraction).toBeNull();
    emit({ phase: 'advance', files: 4, bytes_total: 200, bytes_done: 50 });
    expect(store.fraction).toBe(0.25);
    expect(await store.run()).toBeNull();
    finish(fail('cannot read /x'));
    await running;
    expect([store.status, store.error]).toEqual(['error', 'cannot read /x']);
  });
});

describe('SettingsStore', () => {
  it('edits folders one per line and saves them', async () => {
    const store = new SettingsStore(api());
    await store.load();
    expect(store.drafts.claude).toBe('/home/dev/.claude/projects');
    expect(store.edited('claude')).toBe(false);
    store.drafts.claude = '  /data/claude \n\n';
    expect(store.edited('claude')).toBe(true);
    await store.saveDirs('claude');
    expect(store.dirsOf('claude').map((d) => [d.path, d.origin])).toEqual([['/data/claude', 'config']]);
    expect(parseDirs(' a \n\n b')).toEqual(['a', 'b']);
  });

  it('loads extraction status with the rest and probes the endpoint on demand', async () => {
    const store = new SettingsStore(api());
    await store.load();
    expect(store.extract.data?.enabled).toBe(true);
    expect(store.extractDoctor.status).toBe('idle');
    await store.checkEndpoint();
    expect(store.extractDoctor.data?.checks.map((c) => c.ok)).toEqual([true, false]);
  });

  it('previews a hook install before installing it', async () => {
    const store = new SettingsStore(api());
    await store.load();
    await store.previewHook('claude');
    expect(store.hookPreview.claude.data?.dry_run).toBe(true);
    await store.installHook('claude');
    expect(store.hookInstall.claude.data?.backup).toContain('.bak');
    expect(store.hookPreview.claude.status).toBe('idle');
  });

  it('takes the hooks out the same way: the preview first, then the removal it showed', async () => {
    const store = new SettingsStore(api());
    await store.load();
    await store.previewHook('codex', true);
    expect([store.hookPreview.codex.data?.dry_run, store.hookPreview.codex.data?.capture]).toEqual([true, 'removed']);
    expect(store.hookInstall.codex.status).toBe('idle');
    await store.installHook('codex');
    expect([store.hookInstall.codex.data?.dry_run, store.hookInstall.codex.data?.capture]).toEqual([false, 'removed']);
    // An install previewed afterwards installs, not removes.
    await store.previewHook('codex');
    expect(store.hookPreview.codex.data?.capture).toBe('added');
  });

  it('shows the MCP config change before making it, and removes the same way', async () => {
    const store = new SettingsStore(api());
    await store.load();
    expect(store.mcp.data?.map((m) => m.installed)).toEqual([false, true, true]);
    await store.previewMcp('claude', false);
    expect([store.mcpPreview.claude.data?.dry_run, store.mcpPreview.claude.data?.removed]).toEqual([true, false]);
    expect(store.mcpChange.claude.status).toBe('idle');
    await store.applyMcp('claude');
    expect(store.mcpChange.claude.data?.dry_run).toBe(false);
    expect(store.mcpPreview.claude.status).toBe('idle');
    await store.previewMcp('codex', true);
    await store.applyMcp('codex');
    expect(store.mcpChange.codex.data?.removed).toBe(true);
  });
});

it('fake records number their ordinals by turn', () => {
  expect(fakeRecords(2).map((r) => r.ordinal)).toEqual([8, 9, 10, 11]);
  expect(fakeTimeline(key(1), 2, 4).turns[1]!.first_ordinal).toBe(4);
});
