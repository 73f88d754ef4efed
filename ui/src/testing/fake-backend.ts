// A made-up archive behind the real command names, for component tests (through mockIPC, so
// the generated bindings run for real) and for ui/mock.html. Shapes follow the bindings.
import type {
  Agent,
  RecordView,
  Repo,
  SearchAnswer,
  SearchHit,
  SearchQuery,
  SessionDetail,
  SessionQuery,
  SessionTimeline,
  SkimSession,
  SkimView,
  SourceDirStatus,
  SyncReport,
  TimelineTurn,
  TurnRecords,
} from '../lib/api';
import type { Entry, ExtractStatus, Insight, InsightSummary, MeaningStatus, ProposedBy, RecallFilters } from '../lib/api';
import type { CommandError } from '../lib/errors';
import { emit } from '@tauri-apps/api/event';
import { fakeSessions } from './sessions';

export interface FakeOptions {
  /** Sessions in the archive (0: first run). */
  sessions?: number;
  /** Turns per session timeline. */
  turns?: number;
  /** Records per turn. */
  recordsPerTurn?: number;
  /** Recall extraction is off in config.toml. */
  extractDisabled?: boolean;
  /** When extraction passes run, as saved (default after each sync). */
  extractSchedule?: 'after_sync' | 'nightly' | 'manual';
  /** The agent's proposal in the inbox carries a link that is not a cairn:// one. */
  hostileProposal?: boolean;
  /** Commands that fail once, with this message (or error object, as commands with a kind and a
   * hint send it). */
  failOnce?: Partial<Record<string, CommandError>>;
  /** More saved reports, after the two made-up ones (long lists). */
  moreReports?: number;
  /** More unreviewed Recall entries citing session 1, after the made-up ones (long lists). */
  moreEntries?: number;
  /** Recall entries that replaced others: the trusted rc-1 replaced rc-0, the inbox's rc-4
   * replaced rc-5 (both archived, pointing at their replacement). */
  replacements?: boolean;
  /** The inbox's rc-3 was proposed to replace the trusted rc-2, which serves until a person
   * accepts rc-3 (an unreviewed entry does not replace a reviewed one). */
  pendingReplacement?: boolean;
  /** No agent has used Recall through MCP yet (the ledger's agent view is empty). */
  noAgentUsage?: boolean;
  /** The first sync finds Claude Code about to delete transcripts Cairn has not captured. */
  expiring?: boolean;
  /** Search by meaning: the built-in model is missing, so it cannot run (and a build is
   * refused). */
  meaningMissing?: boolean;
  /** Turns waiting for their vector (default 1,200). */
  meaningWaiting?: number;
  /** Milliseconds between a build's progress events (default 0: it runs through at once). */
  meaningStepMs?: number;
  /** The archive did not open (a data dir the user may not write, a database too damaged to
   * open): every command that needs it fails with this, as the desktop sends it, until `fix()`
   * and a Retry (`reopen_archive`). Doctor still runs, its archive check saying why, as the
   * desktop's `commands::unopened` words it. */
  unopened?: { kind: string; message: string; hint: string | null };
  /** The archive opened read-only, and why as `app_info` says it (null: the disk is full);
   * writes are refused with the desktop's read-only error until `fix()` and a Try again. */
  readOnly?: string | null;
  /** An agent CLI that is not on the PATH the app sees: a report it generates fails, as the
   * desktop says it (`report::report`), until Settings names its program. */
  missingAgent?: 'claude' | 'codex' | 'gemini' | 'copilot';
  /** The folder the sessions ran in is gone: resume shows its command with that problem. */
  resumeFolderGone?: boolean;
  /** Sessions an older Cairn read (Read again is offered until a reindex runs). */
  readBefore?: number;
  /** Why the shell refused the link the app was started with (`launch_refused`). */
  launchRefused?: string;
  /** Codex's folder is there but not the user's to read (left owned by root), as
   * `source_dirs` says it, instead of not found. */
  unreadableSource?: boolean;
}

/** Where the fake looked for the embedding model, as the backend's refusal and status say it. */
export const MEANING_MISSING =
  'the embedding model (all-MiniLM-L6-v2) is not installed; looked in: /home/dev/.local/share/cairn/models/all-MiniLM-L6-v2. ' +
  'Fetch it with `scripts/fetch-model.sh` (or `make app`) in a source checkout, or point CAIRN_MODEL_DIR at a folder ' +
  'holding config.json, tokenizer.json and model.safetensors. Lexical search (--mode lexical) works without it';

/** Extraction on, with qwen3:8b half-way through the archive and one retired generation. */
export function fakeExtractStatus(): ExtractStatus {
  const gen = (fingerprint: string, model: string, state: 'active' | 'retired', configured: boolean) => ({
    fingerprint,
    state,
    model,
    deployment: '',
    segmenter: 'turns-v1',
    params_json: '{}',
    created_at: at(0),
    updated_at: at(5),
    activated_at: at(5),
    retired_at: state === 'retired' ? at(6) : null,
    configured,
    sessions_done: configured ? 3 : 2,
    sessions_partial: 0,
    sessions_failed: 0,
    sessions_pending: 0,
    units_done: 9,
    units_total: 12,
    entries: configured ? 7 : 4,
    entries_staged: 0,
    entries_published: configured ? 7 : 0,
  });
  return {
    enabled: true,
    model: 'qwen3:8b',
    deployment: '',
    profile: 'local',
    server: 'local',
    endpoint: 'http://127.0.0.1:11434/v1',
    segmenter: 'turns-v1',
    max_window_chars: 24000,
    concurrency: 2,
    fingerprint: 'fp-qwen',
    state: 'active',
    sessions_done: 3,
    sessions_partial: 1,
    sessions_failed: 0,
    not_started: 2,
    sessions_empty: 0,
    units_done: 9,
    units_total: 12,
    entries: 7,
    entries_published: 7,
    entries_trusted: 0,
    entries_reviewed_untrusted: 0,
    entries_unreviewed: 7,
    entries_staged: 0,
    entries_rejected: 0,
    entries_archived: 0,
    entries_stale: 0,
    generations: [gen('fp-qwen', 'qwen3:8b', 'active', true), gen('fp-llama', 'llama3.1:8b', 'retired', false)],
    last_run: {
      fingerprint: 'fp-qwen',
      started_at: at(10),
      finished_at: at(12),
      sessions: 2,
      failed: 0,
      units: 4,
      entries: 3,
      activated: false,
      aborted: null,
    },
    failures: [],
    coverage: [],
  };
}

export const key = (n: number) => `sha256-${n.toString(16).padStart(32, '0')}`;
const at = (minute: number) => new Date(Date.UTC(2026, 10, 30, 9, 0) + minute * 60_000).toISOString();

export function fakeTurn(index: number, recordsPerTurn = 4): TimelineTurn {
  return {
    turn_index: index,
    turn_key: `sha256-turn-${index}`,
    started_at: at(index),
    ended_at: at(index + 1),
    record_count: recordsPerTurn,
    first_ordinal: index * recordsPerTurn,
    last_ordinal: index * recordsPerTurn + recordsPerTurn - 1,
    user_preview: `Please fix bug number ${index}`,
    assistant_preview: index % 2 === 0 ? `Fixed **bug ${index}** and added a test in \`tests/*.rs\`.` : null,
    tool_call_count: 2,
    edit_count: 1,
    exec_count: 1,
    failure_count: index % 7 === 3 ? 1 : 0,
    tool_names: ['Edit', 'Bash'],
    related_targets: index % 3 === 0 ? ['ref:refs/heads/feature/login'] : [],
  };
}

export function fakeRecords(turn: number, count = 4): RecordView[] {
  const base = {
    timestamp: at(turn),
    source_event_kind: 'claude:assistant:tool_use',
    role: 'assistant',
    text: null,
    prompt_source: null,
    tool_name: null,
    tool_kind: null,
    tool_input: null,
    call_id: null,
    exit_code: null,
    outcome: null,
    file_paths: [],
    is_sidechain: false,
    is_compaction: false,
  };
  const kinds: RecordView[] = [
    { ...base, ordinal: 0, turn_record_index: 0, kind: 'message', role: 'user', prompt_source: 'human', text: `Please fix bug number ${turn}\n<b>not bold</b>` },
    {
      ...base,
      ordinal: 0,
      turn_record_index: 0,
      kind: 'tool_call',
      tool_name: 'Edit',
      tool_kind: 'file_edit',
      tool_input: JSON.stringify({ file_path: '/repo/src/login.ts', old_string: 'return false;', new_string: 'return user !== null;' }),
      file_paths: ['/repo/src/login.ts'],
    },
    {
      ...base,
      ordinal: 0,
      turn_record_index: 0,
      kind: 'tool_call',
      tool_name: 'Bash',
      tool_kind: 'exec',
      tool_input: JSON.stringify({ command: 'npm test -- login', description: 'Run the login tests' }),
    },
    {
      ...base,
      ordinal: 0,
      turn_record_index: 0,
      kind: 'tool_result',
      tool_name: 'Bash',
      tool_kind: 'exec',
      text: Array.from({ length: 20 }, (_, i) => `test ${i} ... ok`).join('\n'),
      exit_code: turn % 7 === 3 ? 1 : 0,
    },
  ];
  return Array.from({ length: count }, (_, i) => ({
    ...kinds[i % kinds.length]!,
    ordinal: turn * count + i,
    turn_record_index: i,
  }));
}

/** Which agents worked on each fake branch (by repository name and branch name), for the
 * branch list's agent filter. */
const branchAgents: Record<string, Agent[]> = {
  'shop feature/login': ['claude', 'codex'],
  'shop main': ['claude'],
  'blog drafts': ['claude'],
  'scratch main': ['claude'],
  'notes main': ['claude'],
};

/** The repositories and branches, only those `agent` worked on when one is given. */
export function fakeRepos(agent: Agent | null = null): Repo[] {
  if (agent !== null) {
    return fakeRepos()
      .map((repo) => ({ ...repo, branches: repo.branches.filter((b) => branchAgents[`${repo.name} ${b.name}`]?.includes(agent)) }))
      .filter((repo) => repo.branches.length > 0);
  }
  return [
    {
      root: '/home/dev/shop',
      name: 'shop',
      project: null,
      session_count: 3,
      last_activity: at(90),
      branches: [
        { name: 'feature/login', key: 'ref:refs/heads/feature/login', sessions: 2, weak_sessions: 1, turns: 9, last_activity: at(90) },
        { name: 'main', key: 'ref:refs/heads/main', sessions: 0, weak_sessions: 1, turns: 3, last_activity: at(10) },
      ],
    },
    {
      root: '/home/dev/blog',
      name: 'blog',
      project: null,
      session_count: 1,
      last_activity: at(5),
      branches: [{ name: 'drafts', key: 'ref:refs/heads/drafts', sessions: 1, weak_sessions: 0, turns: 2, last_activity: at(5) }],
    },
    // Sessions outside any repository come grouped by project, with no root: two such groups
    // can list the same branch.
    ...['scratch', 'notes'].map((name) => ({
      root: null,
      name,
      project: name,
      session_count: 1,
      last_activity: at(1),
      branches: [{ name: 'main', key: 'ref:refs/heads/main', sessions: 0, weak_sessions: 1, turns: 1, last_activity: at(1) }],
    })),
  ];
}

function skimSession(n: number, weak: boolean, turns: number): SkimSession {
  return {
    session_key: key(n),
    status: 'local-only',
    untrusted: false,
    pulled_from: null,
    published_by: null,
    published_at: null,
    archive_key: null,
    ran_by: null,
    agent: (n % 2 === 0 ? 'codex' : 'claude') as Agent,
    title: `Session number ${n}`,
    project: 'shop',
    started_at: at(n * 10),
    updated_at: at(n * 10 + turns),
    turn_count: turns,
    record_count: turns * 4,
    related_turn_count: weak ? 0 : 1,
    weak,
    why_related: weak
      ? [{ evidence: 'branch_recorded', confidence: 0.5, target_key: 'ref:refs/heads/feature/login', turn_key: null, turn_index: null, ordinal: null, commit: null, reason: 'the agent recorded the branch' }]
      : [{ evidence: 'commit_by_session', confidence: 1, target_key: 'ref:refs/heads/feature/login', turn_key: 'sha256-turn-1', turn_index: 1, ordinal: 7, commit: 'abc1234', reason: 'committed abc1234 (turn #1)' }],
    previews: [`user: Please fix bug number ${n}`],
    turns: Array.from({ length: turns }, (_, i) => ({
      turn_key: `sha256-turn-${i}`,
      turn_index: i,
      started_at: at(n * 10 + i),
      related: !weak && i === 1,
      record_count: 4,
      tool_call_count: 2,
      tool_names: ['Edit', 'Bash'],
      labels: i === 1 ? ['implemented', 'committed'] : [],
      previews: [`user: Please fix bug number ${i}`, `assistant: Fixed **bug ${i}**.`],
    })),
  };
}

export function fakeSkim(target: string, turns = 3): SkimView {
  const sessions = target === 'ref:refs/heads/feature/login' ? [skimSession(1, false, turns), skimSession(2, false, turns), skimSession(3, true, 2)] : [];
  return {
    target_kind: 'branch',
    target_key: target,
    coverage: { showing_sessions: sessions.length, showing_turns: sessions.length * turns, related_turn_count: 2, weak_sessions_hidden: 0, other_repo_sessions_hidden: 0 },
    sessions,
  };
}

export function fakeDetail(sessionKey: string): SessionDetail {
  return {
    session_key: sessionKey,
    agent: 'claude',
    ran_by: null,
    session_id: 'session-1',
    relation: null,
    parent_key: null,
    title: 'Session number 1',
    project: 'shop',
    cwd: '/home/dev/shop',
    git_branch: 'feature/login',
    git_commit: null,
    model: 'claude-opus-4',
    provider: 'anthropic',
    tool_version: '2.1.39',
    thread_source: 'cli',
    started_at: at(0),
    updated_at: at(30),
    turn_count: 5,
    record_count: 20,
    kinds: { message: 5, tool_call: 10, tool_result: 5 },
    tools: { Edit: 5, Bash: 5 },
    edited_paths: ['/home/dev/shop/src/login.ts'],
    tokens: { input: 12_345, output: 6_789, cache_creation: 1_000, cache_read: 250_000, reasoning: 0 },
    unknown_types: {},
    secrets_redacted: 0,
    warnings: [],
    subagents: [{ session_key: key(900), relation: 'subagent', agent_id: 'a1', record_count: 12, first_prompt: 'Review the login change' }],
  };
}

export function fakeTimeline(sessionKey: string, turns: number, recordsPerTurn: number): SessionTimeline {
  return {
    session_key: sessionKey,
    status: 'local-only',
    agent: 'claude',
    ran_by: null,
    title: 'Session number 1',
    started_at: at(0),
    model: null,
    tokens: { input: 0, output: 0, cache_creation: 0, cache_read: 0, reasoning: 0 },
    coverage: { showing_turns: turns, total_turns: turns, has_more_before: false },
    turns: Array.from({ length: turns }, (_, i) => fakeTurn(i, recordsPerTurn)),
    links: [],
    corrections: [],
    published_by: null,
  };
}

/** The answer to a search: three hits by words; none for a query with `nothing`; by meaning
 * and words for one with `meaning`, where `waiting` also leaves 4 turns without a vector. */
export function fakeSearch(query: SearchQuery): SearchAnswer {
  const meaning = query.text.includes('meaning');
  const hits = query.text.includes('nothing') ? [] : fakeHits(query, meaning);
  return { hits, mode: meaning ? 'hybrid' : 'lexical', vectors_pending: meaning && query.text.includes('waiting') ? 4 : 0 };
}

function fakeHits(query: SearchQuery, meaning: boolean): SearchHit[] {
  return Array.from({ length: 3 }, (_, i) => ({
    session_key: key(1),
    turn_key: `sha256-turn-${i}`,
    ordinal: i * 4 + 1,
    kind: 'tool_call',
    role: 'assistant',
    tool_name: 'Bash',
    timestamp: at(i),
    agent: (query.agent ?? 'claude') as Agent,
    title: 'Session number 1',
    project: query.project ?? 'shop',
    git_branch: query.branch ?? 'feature/login',
    snippet: `ran \u{E000}${query.text}\u{E001} [not a match] <script>alert(1)</script> again`,
    match_reasons: meaning ? ['semantic'] : [],
    published_by: null,
  }));
}

const sources: SourceDirStatus[] = [
  { agent: 'claude', path: '/home/dev/.claude/projects', origin: 'default', exists: true, unreadable: null },
  { agent: 'codex', path: '/home/dev/.codex/sessions', origin: 'default', exists: false, unreadable: null },
];

/** Codex's folder as `source_dirs` says it when root owns it (the core's `Unreadable::message`). */
export const UNREADABLE_CODEX: SourceDirStatus = {
  ...sources[1]!,
  unreadable: {
    denied: true,
    message:
      "cannot read /home/dev/.codex/sessions (blocked at /home/dev/.codex): permission denied, so the codex transcripts there are not captured; if an agent run with sudo left it owned by root, give it back to your user: `sudo chown -R $USER '/home/dev/.codex'`",
  },
};

/** The IPC handler: command name and arguments in, the command's answer out (or a thrown
 * string, which the bindings turn into `{status: 'error'}`). */
/** A Recall entry citing records `ordinal`–`ordinal + 1` of session `key(session)`. */
export function fakeEntry(id: string, title: string, reviewed: boolean, session = 1, ordinal = 2): Entry {
  return {
    id,
    type: 'warning',
    scope: 'project',
    status: 'accepted',
    review_state: reviewed ? 'human_reviewed' : 'unreviewed_auto',
    title,
    body: `${title}: the body, with <b>markup</b> shown as text.`,
    trigger: 'when touching login',
    confidence: null,
    uncertainty: '',
    project: 'shop',
    cwd: '/home/dev/shop',
    git_branch: 'feature/login',
    agent: 'claude',
    source_session_key: key(session),
    source_episode_id: '',
    source_run_id: '',
    extractor_method: reviewed ? '' : 'llm',
    model: '',
    transferable: reviewed,
    provenance_ok: true,
    trusted: reviewed,
    provenance_note: null,
    stale: false,
    stale_note: null,
    supersedes_entry_id: '',
    superseded_by_entry_id: '',
    created_at: at(0),
    updated_at: at(1),
    reviewed_at: reviewed ? at(1) : null,
    evidence: [
      { session_key: key(session), agent: 'claude', ordinal_start: ordinal, ordinal_end: ordinal + 1, start_record: '', end_record: '', content_digest: '', tool_use_id: null, snippet: 'npm test', files: [] },
    ],
  };
}

/** A report whose Markdown tries every unsafe thing the renderer must neutralise. */
export const HOSTILE_HTML =
  '<h1>Week</h1><p>See <a href="cairn://session/' +
  key(1) +
  '?record=3">the turn</a>, <a href="javascript:alert(1)">click</a> and <a href="https://example.com/x">docs</a>.</p>' +
  '<script>window.pwned = true</script><img src="x" onerror="window.pwned = true"><p onclick="window.pwned = true">text <iframe src="https://evil.invalid"></iframe></p>';

function fakeInsight(id: number, title: string, starred = false): Insight {
  return {
    id,
    status: 'stored',
    title,
    template_id: 'weekly-summary',
    template_title: 'Weekly summary',
    template_version: '1',
    slice: { since: '2026-11-23T00:00:00.000Z', until: '2026-11-30T00:00:00.000Z', project: null, agent: null, branch: null, automation: 'exclude' },
    focus: null,
    generator: 'claude',
    model: null,
    endpoint_hash: null,
    cache_key: `k${id}`,
    material_hash: 'm',
    sessions_total: 3,
    sessions_included: 3,
    prompt_chars: 1200,
    content: '# Week',
    starred,
    created_at: at(id),
    elapsed_ms: 900,
    session_keys: [key(1)],
    link: `cairn://recall?tab=generated&insight=${id}`,
  };
}

const summary = (i: Insight): InsightSummary => ({
  id: i.id,
  title: i.title,
  template_id: i.template_id,
  generator: i.generator,
  model: i.model,
  slice_label: 'Nov 23 – Nov 30',
  starred: i.starred,
  created_at: i.created_at,
  sessions_total: i.sessions_total,
  link: i.link,
});

export function fakeBackend(options: FakeOptions = {}) {
  let extractSetup = {
    enabled: !options.extractDisabled,
    generator: 'endpoint',
    endpoint: options.extractDisabled ? '' : 'http://127.0.0.1:11434/v1',
    model: options.extractDisabled ? '' : 'qwen3:8b',
    api_key_env: '',
    schedule: options.extractSchedule ?? ('after_sync' as 'after_sync' | 'nightly' | 'manual'),
    input_price_per_mtok: null as number | null,
    output_price_per_mtok: null as number | null,
  };
  // Recall: two trusted entries, two in the inbox.
  let entries: Entry[] = [
    fakeEntry('rc-1', 'Login needs the session cookie', true, 1, 2),
    fakeEntry('rc-2', 'Tests need the fake clock', true, 2, 0),
    fakeEntry('rc-3', 'The hook calls tmux', false, 1, 5),
    fakeEntry('rc-4', 'The hook needs tmux installed', false, 1, 6),
  ];
  for (let i = 0; i < (options.moreEntries ?? 0); i++) entries.push(fakeEntry(`rc-more-${i}`, `Entry ${i}`, false, 1, i));
  if (options.replacements) {
    const replaced = (old: Entry, by: string): Entry => ({ ...old, status: 'archived', trusted: false, superseded_by_entry_id: by });
    entries = entries.map((e) => (e.id === 'rc-1' ? { ...e, supersedes_entry_id: 'rc-0' } : e.id === 'rc-4' ? { ...e, supersedes_entry_id: 'rc-5' } : e));
    entries.push(replaced(fakeEntry('rc-0', 'Login needs the old cookie name', true, 1, 1), 'rc-1'));
    entries.push(replaced(fakeEntry('rc-5', 'The hook wants tmux', false, 1, 4), 'rc-4'));
  }
  if (options.pendingReplacement) entries = entries.map((e) => (e.id === 'rc-3' ? { ...e, supersedes_entry_id: 'rc-2' } : e));
  /** Entries a person rejected (the core's `rejected_at`): a rejected replacement hands its
   * place back to the entry it replaced unless that one was rejected too. */
  const rejected = new Set<string>();
  let reports: Insight[] = [fakeInsight(1, 'Last week', true), fakeInsight(2, 'Login work')];
  for (let i = 0; i < (options.moreReports ?? 0); i++) reports.push(fakeInsight(3 + i, `Report ${3 + i}`));
  const entry = (id: string) => {
    const found = entries.find((e) => e.id === id);
    if (!found) throw `recall entry ${id} not found`;
    return found;
  };
  // Entries an agent proposed through `cairn mcp`, with where they came from.
  const proposals: Record<string, ProposedBy> = {
    'rc-4': {
      agent: 'codex',
      session_key: key(1),
      turn: '2',
      link: options.hostileProposal ? 'javascript:alert(1)' : `cairn://session/${key(1)}?record=6`,
      client: 'codex-mcp-client 0.1',
      proposed_at: at(8),
    },
  };
  // The core's trust predicate, as the fake stands in for it.
  const trusted = (e: Entry) => e.status === 'accepted' && e.review_state === 'human_reviewed' && e.provenance_ok && !e.stale;
  const update = (id: string, change: Partial<Entry>) => {
    const merged = { ...entry(id), ...change };
    const next = { ...merged, trusted: trusted(merged) };
    entries = entries.map((e) => (e.id === id ? next : e));
    return next;
  };
  const filtered = (f: RecallFilters) => {
    if (f.trusted_only && (f.status ?? 'accepted') !== 'accepted') throw '--trusted-only serves accepted entries only';
    return entries.filter(
      (e) =>
        e.status === (f.status ?? 'accepted') &&
        (!f.trusted_only || trusted(e)) &&
        (!f.review_state || e.review_state === f.review_state) &&
        (!f.type || e.type === f.type) &&
        (!f.scope || e.scope === f.scope),
    );
  };
  const report = (id: number) => {
    const found = reports.find((r) => r.id === id);
    if (!found) throw `insight ${id} not found`;
    return found;
  };

  const turns = options.turns ?? 5;
  const perTurn = options.recordsPerTurn ?? 4;
  const failures = { ...options.failOnce };
  let sessions = options.sessions ?? 6;
  let expiring = options.expiring ?? false;
  let readBefore = options.readBefore ?? 0;
  // Search by meaning: nothing built yet; a build embeds the waiting turns a chunk at a time,
  // telling the window as the desktop does (`meaning-progress`, then `meaning-finished`).
  let meaning: MeaningStatus = {
    problem: options.meaningMissing ? MEANING_MISSING : null,
    vectors: 0,
    waiting: options.meaningMissing ? null : (options.meaningWaiting ?? 1200),
    ready: false,
    after_sync: false,
    building: false,
    last_error: null,
  };
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const buildMeaning = async () => {
    const total = meaning.waiting ?? 0;
    const step = options.meaningStepMs ?? 0;
    const chunk = Math.max(1, Math.ceil(total / 4));
    // Torn down mid-build (a test ended): nothing is listening any more.
    const send = (event: string, payload: unknown) => emit(event, payload).catch(() => {});
    const before = meaning.vectors;
    let done = 0;
    while (done < total) {
      await pause(step);
      done = Math.min(done + chunk, total);
      meaning = { ...meaning, vectors: before + done, waiting: total - done };
      await send('meaning-progress', { done, total });
    }
    await pause(step);
    meaning = { ...meaning, waiting: 0, ready: true, after_sync: true, building: false };
    await send('meaning-finished', { embedded: total, error: null });
  };
  const calls: { cmd: string; args: Record<string, unknown> }[] = [];
  // The archive's state as the shell holds it: unopened (why), read-only (why), or open; `fix()`
  // puts the folder right, and the next Retry opens it as the shell's reopen does.
  let unopened = options.unopened ?? null;
  let readOnly = options.readOnly;
  let fixed = false;
  const fix = () => {
    fixed = true;
  };
  /** The commands the shell answers without an open archive. */
  const withoutArchive = new Set(['app_info', 'doctor', 'reopen_archive']);
  /** The commands that write, refused on a read-only archive (`report::report` of `ReadOnly`). */
  const writes = new Set(['sync_archive', 'recall_reject', 'recall_accept', 'recall_restore', 'forget_sessions']);
  const readOnlyError = () => ({
    kind: 'read_only',
    message: '/tmp/cairn-test is read-only: Cairn can show what the archive holds but cannot change it',
    hint: "Make the folder and its files writable for your user (`chmod -R u+w '/tmp/cairn-test'`), then press Try again in the read-only notice at the top of the window.",
  });
  // The agent CLIs a generator runs, found on this app's PATH (but `missingAgent`), or named.
  const onPath: Record<string, string | null> = { claude: '/usr/bin/claude', codex: '/usr/local/bin/codex', gemini: null, copilot: null };
  if (options.missingAgent) onPath[options.missingAgent] = null;
  const configured: Record<string, string | null> = { claude: null, codex: null, gemini: null, copilot: null };
  const programs = () =>
    Object.keys(onPath).map((agent) => ({ agent, configured: configured[agent] ?? null, runs: configured[agent] ?? onPath[agent] ?? null }));
  const handler = async (cmd: string, payload: unknown): Promise<unknown> => {
    const args = (payload ?? {}) as Record<string, unknown>;
    calls.push({ cmd, args });
    const failure = failures[cmd];
    if (failure !== undefined) {
      delete failures[cmd];
      throw failure;
    }
    if (unopened !== null && !withoutArchive.has(cmd)) throw unopened;
    if (readOnly !== undefined && writes.has(cmd)) throw readOnlyError();
    switch (cmd) {
      case 'app_info':
        return {
          data_dir: '/tmp/cairn-test',
          version: '0.1.0',
          read_only: readOnly !== undefined,
          read_only_why: readOnly ?? null,
          launch_link: null,
          launch_refused: options.launchRefused ?? null,
          sessions_read_before: readBefore,
        };
      case 'reindex_archive': {
        const dry = (args.request as { dry_run: boolean }).dry_run;
        const changed = Math.min(readBefore, 2);
        const report = {
          sessions,
          sessions_changed: changed,
          records_before: sessions * 20,
          records_after: sessions * 20 + changed,
          records_changed: changed * 3,
          turns_before: sessions * turns,
          turns_after: sessions * turns,
          evidence_revoked: 0,
          copy_lines_redacted: 0,
          recall_entries_redacted: 0,
          reports_redacted: 0,
          pulled_files_redacted: 0,
          changed: fakeSessions(sessions)
            .slice(0, changed)
            .map((s) => ({
              session_key: s.session_key,
              handle: s.session_id ?? s.session_key,
              title: s.title,
              records_changed: 3,
              evidence_revoked: 0,
              copy_lines_redacted: 0,
            })),
          skipped: [],
          dry_run: dry,
        };
        if (!dry) {
          readBefore = 0;
          if (changed > 0) await emit('archive-changed', { cause: 'reindex', sessions_added: 0, sessions_updated: changed, records_added: 0 });
        }
        return report;
      }
      case 'reopen_archive':
        if (unopened !== null && !fixed) throw unopened;
        unopened = null;
        if (fixed) readOnly = undefined;
        return readOnly !== undefined
          ? { watching: [], problem: 'the archive is read-only, so new transcripts cannot be captured' }
          : { watching: ['/home/dev/.claude/projects'], problem: null };
      case 'app_ready':
        return readOnly !== undefined
          ? { watching: [], problem: 'the archive is read-only, so new transcripts cannot be captured' }
          : { watching: ['/home/dev/.claude/projects'], problem: null };
      case 'list_sessions': {
        const query = args.query as SessionQuery;
        const all = fakeSessions(sessions);
        const filtered = query.agent ? all.filter((s) => s.agent === query.agent) : all;
        return query.limit ? filtered.slice(0, query.limit) : filtered;
      }
      case 'agent_counts': {
        const counted = new Map<Agent, number>();
        for (const s of fakeSessions(sessions)) counted.set(s.agent, (counted.get(s.agent) ?? 0) + 1);
        return [...counted].map(([agent, n]) => ({ agent, sessions: n })).sort((a, b) => b.sessions - a.sessions);
      }
      case 'list_branches':
        return sessions === 0 ? [] : fakeRepos((args.agent as Agent | null | undefined) ?? null);
      case 'skim_branch': {
        const view = fakeSkim(args.targetKey as string);
        const agent = (args.agent as Agent | null | undefined) ?? null;
        return agent === null ? view : { ...view, sessions: view.sessions.filter((s) => s.agent === agent) };
      }
      case 'pull_teammates':
        return { remote: 'origin', sessions_imported: 0, unchanged: 0, transcripts_imported: 0, skipped: [], skipped_more: 0, forgotten: 0, withdrawn: 0 };
      case 'session_detail':
        return fakeDetail(args.sessionKey as string);
      case 'session_timeline':
        return fakeTimeline(args.sessionKey as string, turns, perTurn);
      case 'turn_records': {
        const index = args.turnIndex as number;
        const records: TurnRecords = {
          session_key: args.sessionKey as string,
          status: 'local-only',
          turn_key: `sha256-turn-${index}`,
          turn_index: index,
          coverage: { showing_records: perTurn, total_records: perTurn, has_more_before: false },
          records: fakeRecords(index, perTurn),
        };
        return records;
      }
      case 'record_turn': {
        const ordinal = args.ordinal as number;
        return ordinal < turns * perTurn ? Math.floor(ordinal / perTurn) : null;
      }
      case 'why': {
        // A commit or a path needs a place to be traced; words are searched.
        const target = String(args.target);
        const place = args.place as { type: string };
        const traced = place.type !== 'nowhere';
        return {
          kind: traced ? (target.includes('/') ? 'lines' : 'commit') : 'description',
          query: target,
          path: traced && target.includes('/') ? target : null,
          lines: null,
          commits: traced && !target.includes('/') ? [{ id: `${target}0000000`, subject: 'Fix the login bug', time: at(12), lines: [] }] : [],
          sessions: [
            {
              session_key: key(1),
              agent: 'claude',
              title: 'Session number 1',
              project: 'shop',
              started_at: at(10),
              confidence: traced ? 0.97 : 0.5,
              evidence: [
                traced
                  ? { kind: 'commit_by_session', commit: target, detail: 'committed it in turn #1', confidence: 1 }
                  : { kind: 'search', commit: null, detail: 'found by turns', confidence: 0.5 },
              ],
              turns: [{ turn_key: 'sha256-turn-1', turn_index: 1, ordinal: 7, evidence: 'wrote_lines', detail: 'wrote 3 of 3 added lines', confidence: 0.95, lines: [] }],
            },
          ],
          // A description searched while a capture's turns wait for their vectors.
          vectors_pending: !traced && target.includes('waiting') ? 1 : 0,
        };
      }
      case 'search_archive':
        return fakeSearch(args.query as SearchQuery);
      case 'sync_archive': {
        const retention = [
          {
            agent: 'claude' as const,
            settings: '/home/dev/.claude/settings.json',
            rule: '10 days after the last write (cleanupPeriodDays)',
            problem: null,
            expiring: expiring ? 2 : 0,
            soonest: expiring ? '2026-08-05T10:00:00Z' : null,
            command: 'cairn sync --agent claude',
          },
        ];
        const retention_warning = expiring
          ? '2 transcript files Cairn has not captured will be deleted by Claude Code within 7 days (the first on 2026-08-05); capture them now: cairn sync --agent claude'
          : null;
        // The sync captured them: the next one finds nothing at risk.
        expiring = false;
        const report: SyncReport = { files_scanned: 8, forgotten_skipped: 0, sessions_added: sessions === 0 ? 6 : 0, subagents_added: 0, sessions_updated: 0, records_added: sessions === 0 ? 90 : 0, records_updated: 0, bytes_read: 1_000_000, warnings: [], retention, retention_warning, nothing_to_read: [], agents: [] };
        if (sessions === 0) sessions = 6;
        return report;
      }
      case 'source_dirs':
        return options.unreadableSource ? [sources[0], UNREADABLE_CODEX] : sources;
      case 'set_source_dirs':
        return [{ agent: args.agent, path: (args.dirs as string[])[0] ?? '/default', origin: 'config', exists: true, unreadable: null }, sources[1]];
      case 'hook_overview':
        return {
          hooks: [
            { agent: 'claude', path: '/home/dev/.claude/settings.json', installed: false, memory: false, other_archive: false, problem: null, not_running: null },
            { agent: 'codex', path: '/home/dev/.codex/hooks.json', installed: true, memory: true, other_archive: false, problem: null, not_running: null },
          ],
          cli: '/usr/local/bin/cairn',
          cli_origin: 'on PATH in /usr/local/bin',
          cli_problem: null,
        };
      case 'install_hook':
        return { agent: args.agent, changed: true, path: '/home/dev/.claude/settings.json', backup: args.dryRun ? null : '/home/dev/.claude/settings.json.bak', dry_run: args.dryRun, diff: '+ "hooks": {…}', capture: 'added', memory: 'added', notes: [], not_running: null };
      case 'uninstall_hook':
        return { agent: args.agent, changed: true, path: '/home/dev/.codex/hooks.json', backup: args.dryRun ? null : '/home/dev/.codex/hooks.json.bak', dry_run: args.dryRun, diff: '- "Stop": […]', capture: 'removed', memory: 'removed', notes: [], not_running: null };
      case 'mcp_overview':
        return [
          { agent: 'claude', path: '/home/dev/.claude.json', installed: false, command: null, data_dir: null, other_archive: false, problem: null },
          { agent: 'codex', path: '/home/dev/.codex/config.toml', installed: true, command: '/usr/local/bin/cairn', data_dir: null, other_archive: false, problem: null },
          { agent: 'gemini', path: '/home/dev/.gemini/settings.json', installed: true, command: '/usr/local/bin/cairn', data_dir: '/mnt/old-archive', other_archive: true, problem: null },
        ];
      case 'install_mcp':
      case 'uninstall_mcp': {
        const removed = cmd === 'uninstall_mcp';
        const path = args.agent === 'claude' ? '/home/dev/.claude.json' : '/home/dev/.codex/config.toml';
        return { agent: args.agent, removed, changed: true, replaced: false, path, backup: args.dryRun ? null : `${path}.bak`, dry_run: args.dryRun, diff: removed ? '- [mcp_servers.cairn]' : '+ "cairn": {…}', notes: [] };
      }
      case 'privacy_preview':
        return { text: String(args.text).replace(/ghp_\w+/g, '[REDACTED]'), removed: [{ rule: 'github-token', start: 0, end: 1 }] };
      case 'recall_list':
        return filtered(args.filters as RecallFilters);
      case 'recall_query': {
        const request = args.request as { text: string; mode: string; filters: RecallFilters };
        const words = request.text.toLowerCase().split(/\s+/).filter(Boolean);
        const matches = (e: Entry) => words.every((w) => `${e.title} ${e.body}`.toLowerCase().includes(w));
        const results = filtered(request.filters).filter(matches);
        const untrusted = request.filters.trusted_only ? entries.filter((e) => !trusted(e) && e.status === 'accepted' && matches(e)).length : 0;
        return {
          query_id: 'q1',
          mode: request.mode,
          trusted_only: request.filters.trusted_only,
          results: results.map((e) => ({ entry: e, score: 1, breakdown: {} })),
          context: null,
          miss_reason: results.length === 0 ? 'no_results' : '',
          untrusted_matches: untrusted,
          vectors_pending: 0,
        };
      }
      case 'recall_inbox':
        return entries
          .filter((e) => e.status === 'accepted' && !trusted(e))
          .map((e) => ({ reason: 'unreviewed', entry: e, proposed_by: proposals[e.id] ?? null }));
      case 'recall_accept': {
        const edit = (args.edit ?? {}) as Partial<Entry>;
        const change: Partial<Entry> = { review_state: 'human_reviewed', reviewed_at: at(9) };
        if (edit.title) change.title = edit.title;
        if (edit.body) change.body = edit.body;
        if (edit.trigger) change.trigger = edit.trigger;
        if (edit.type) change.type = edit.type;
        if (edit.scope) {
          // As the core does: a branch scope is the entry's own branch, refused without one.
          const e = entry(args.id as string);
          if (edit.scope === 'branch' && !e.git_branch.trim()) {
            throw { kind: 'invalid', message: `recall entry ${e.id}: no branch is known for it (its session ran on none), so a branch scope would apply nowhere; keep scope project`, hint: null };
          }
          change.scope = edit.scope;
        }
        const accepted = update(args.id as string, change);
        // As the core does: an accepted entry replaces the served one it was proposed to replace.
        const old = entries.find((e) => e.id === accepted.supersedes_entry_id);
        if (old && old.status === 'accepted' && !old.superseded_by_entry_id) update(old.id, { status: 'archived', superseded_by_entry_id: accepted.id });
        return accepted;
      }
      case 'recall_unaccept': {
        // As the core does: only an entry a person accepted, back to the state it had before.
        const e = entry(args.id as string);
        if (args.previous === 'human_reviewed') throw { kind: 'invalid', message: `recall entry ${e.id}: the state before an accept cannot be human_reviewed`, hint: null };
        if (e.status !== 'accepted' || e.review_state !== 'human_reviewed') {
          throw { kind: 'conflict', message: `recall entry ${e.id} is not reviewed by a person: no accept to take back`, hint: null };
        }
        const back = update(e.id, { review_state: args.previous as Entry['review_state'], transferable: false });
        // A reviewed entry it replaced is replaced only by a reviewed one: it serves again.
        const old = entries.find((x) => x.id === e.supersedes_entry_id && x.superseded_by_entry_id === e.id);
        const reinstated = old && old.review_state === 'human_reviewed' ? update(old.id, { status: 'accepted', superseded_by_entry_id: '' }) : null;
        return { entry: back, reinstated };
      }
      case 'recall_reject': {
        // As the core does: the served replacement hands its place back to the entry it
        // replaced; one itself replaced (a chain's middle) is spliced out, the newer replacing
        // the older.
        const id = args.id as string;
        const before = entry(id);
        rejected.add(id);
        const done = update(id, { status: 'archived' });
        const old = entries.find((e) => e.id === before.supersedes_entry_id && e.superseded_by_entry_id === id);
        let reinstated: Entry | null = null;
        if (before.superseded_by_entry_id) {
          const newer = before.superseded_by_entry_id;
          if (old) update(old.id, { superseded_by_entry_id: newer });
          update(newer, { supersedes_entry_id: old ? old.id : '' });
        } else if (old) {
          const serves = old.status === 'archived' && !rejected.has(old.id);
          const back = update(old.id, { superseded_by_entry_id: '', status: serves ? 'accepted' : old.status });
          if (serves) reinstated = back;
        }
        return { entry: done, reinstated };
      }
      case 'recall_restore': {
        // As the core lists them, newest change first: the entry taken back comes first.
        const id = args.id as string;
        rejected.delete(id);
        let back = update(id, { status: 'accepted' });
        // A replacement served again replaces again the entry it had replaced, when that one
        // is served and replaced by none; else it no longer claims to replace it.
        const old = entries.find((e) => e.id === back.supersedes_entry_id);
        let replaces: Entry | null = null;
        if (back.supersedes_entry_id && old?.superseded_by_entry_id !== id) {
          if (old && old.status === 'accepted' && !old.superseded_by_entry_id) replaces = update(old.id, { status: 'archived', superseded_by_entry_id: id });
          else back = update(id, { supersedes_entry_id: '' });
        }
        entries = [back, ...entries.filter((e) => e.id !== back.id)];
        return { entry: back, replaces };
      }
      case 'recall_supersede':
        update(args.oldId as string, { status: 'archived', superseded_by_entry_id: args.newId as string });
        update(args.newId as string, { supersedes_entry_id: args.oldId as string });
        return null;
      case 'recall_merge': {
        // As the core does: the duplicate's evidence joins the kept entry, whose trust is unchanged.
        const dup = entry(args.duplicate as string);
        const kept = entry(args.keep as string);
        update(dup.id, { status: 'archived', superseded_by_entry_id: kept.id });
        return update(kept.id, { evidence: [...kept.evidence, ...dup.evidence] });
      }
      case 'recall_proposal': {
        const e = entry(args.id as string);
        // rc-3 and rc-4 both say the hook needs tmux: each is the other's near-duplicate, and rc-4
        // has a trusted one too.
        const near: Record<string, string[]> = { 'rc-3': ['rc-4'], 'rc-4': ['rc-3', 'rc-1'] };
        const duplicates = (near[e.id] ?? [])
          .map((id) => entries.find((x) => x.id === id && x.status === 'accepted'))
          .filter((x): x is Entry => x !== undefined)
          .map((x, i) => ({
            id: x.id,
            title: x.title,
            type: x.type,
            review_state: x.review_state,
            trusted: trusted(x),
            lexical: 0.8 - i * 0.2,
            semantic: null,
          }));
        return {
          reason: e.status === 'accepted' && !trusted(e) ? 'unreviewed' : null,
          entry: e,
          proposed_by: proposals[e.id] ?? null,
          why: ['New: nobody has reviewed it, so briefs and trusted-only searches leave it out.', 'Extracted by qwen3:8b (turns-v1 segmenter) from “Login work”, the model’s confidence 0.70.'],
          evidence: e.evidence.map((ev) => ({
            session_key: ev.session_key,
            session_title: 'Login work',
            ordinal_start: ev.ordinal_start,
            ordinal_end: ev.ordinal_end,
            records: [{ ordinal: ev.ordinal_start, who: 'user', text: `<script>alert(1)</script> make the hook call tmux (${e.id})`, truncated: false }],
            more_records: 0,
            changed: null,
          })),
          duplicates,
          duplicate_basis: 'by their words only (similarity ≥ 0.5): meaning needs vectors, not built for this entry',
        };
      }
      case 'recall_agent_usage':
        if (options.noAgentUsage) return [];
        return [
          { entry_id: 'rc-1', title: entries[0]?.title ?? '', shown: 7, packed: 3, helpful: 2, wrong: 0, last_used_at: at(8) },
          { entry_id: 'rc-2', title: entries[1]?.title ?? '', shown: 2, packed: 0, helpful: 0, wrong: 3, last_used_at: at(7) },
          { entry_id: 'rc-gone', title: '', shown: 1, packed: 1, helpful: 0, wrong: 0, last_used_at: null },
        ].slice(0, Number(args.limit));
      case 'recall_for_session':
        return entries.filter((e) => e.evidence.some((ev) => ev.session_key === args.sessionKey));
      case 'insight_templates':
        return [
          { id: 'weekly-summary', version: '1', title: 'Weekly summary', description: '', material: [], instructions: '', source: 'builtin' },
          { id: 'friction', version: '1', title: 'Friction', description: '', material: [], instructions: '', source: 'builtin' },
        ];
      case 'insight_preview': {
        const request = args.request as {
          slice: { since?: string; until?: string; project?: string; branch?: string; include_weak?: boolean; teammates?: boolean };
        };
        // A branch's slice holds the sessions linked to it by their work (one; none on `main`);
        // those that only ran on it (two; one on `main`) only when it asks for them.
        const branch = request.slice.branch ?? null;
        const includeWeak = branch !== null && (request.slice.include_weak ?? false);
        const weak = branch === null ? 0 : branch === 'main' ? 1 : 2;
        const sessions = request.slice.project === 'nothing' ? 0 : branch === null ? 3 : (branch === 'main' ? 0 : 1) + (includeWeak ? weak : 0);
        const label = [request.slice.project ? `project ${request.slice.project}` : 'last 7 days'];
        if (branch !== null) label.push(`branch ${branch}${includeWeak ? ' with the sessions that only ran on it' : ''}`);
        return {
          slice: {
            since: request.slice.since ?? '2026-11-23T00:00:00.000Z',
            until: request.slice.until ?? '2026-11-30T10:00:00.000Z',
            project: request.slice.project ?? null,
            agent: null,
            branch: branch === null ? null : `ref:refs/heads/${branch}`,
            automation: 'exclude',
            teammates: request.slice.teammates ?? false,
            include_weak: includeWeak,
          },
          slice_label: label.join(' · '),
          template_id: 'weekly-summary',
          generator: { backend: 'claude', model: null, endpoint_hash: null },
          sessions_total: sessions,
          sessions_included: sessions,
          prompt_chars: 1234,
          redactions: 2,
          teammates_sessions: 1,
          weak_sessions: weak,
          cached_id: null,
          prompt: '…',
        };
      }
      case 'insight_generate': {
        const generator = (args.request as { generator?: string | null }).generator ?? 'claude';
        if (generator in onPath && (configured[generator] ?? onPath[generator]) === null) {
          throw {
            kind: 'external',
            message: `${generator}: not found on the PATH this app sees (an app started from the desktop may not see your shell's)`,
            hint: 'Name the program in Settings › Agent programs, or pick another generator.',
          };
        }
        const id = Math.max(0, ...reports.map((r) => r.id)) + 1;
        const made = fakeInsight(id, (args.request as { title?: string }).title ?? 'Weekly summary');
        reports = [made, ...reports];
        return { insight: made, cached: false };
      }
      case 'insight_list': {
        const search = ((args.search as string | null) ?? '').toLowerCase();
        return reports.filter((r) => (!args.starred || r.starred) && r.title.toLowerCase().includes(search)).map(summary);
      }
      case 'insight_get':
        return report(args.id as number);
      case 'insight_html':
        report(args.id as number);
        return HOSTILE_HTML;
      case 'insight_star':
        reports = reports.map((r) => (r.id === args.id ? { ...r, starred: args.starred as boolean } : r));
        return null;
      case 'insight_rename':
        reports = reports.map((r) => (r.id === args.id ? { ...r, title: args.title as string } : r));
        return null;
      case 'insight_delete':
        report(args.id as number);
        reports = reports.filter((r) => r.id !== args.id);
        return null;
      case 'session_resume':
        return {
          session_key: args.sessionKey,
          agent: 'claude',
          argv: ['claude', '--resume', 'fake-id'],
          cwd: '/home/dev/shop',
          cwd_exists: !options.resumeFolderGone,
          shell: 'cd /home/dev/shop && claude --resume fake-id',
          problem: options.resumeFolderGone ? 'the folder it ran in, /home/dev/shop, is gone from this machine: make it again at that path (a clone of the project), then resume (agents find a session by the folder it ran in)' : null,
        };
      case 'correct_link': {
        const target = args.target as { kind: string; key: string; pr_number: number | null };
        return {
          session_key: args.sessionKey,
          action: args.action,
          target_kind: target.kind,
          target_key: target.key,
          pr_number: target.pr_number,
          made_by: 'you',
          made_at: '2026-02-10T21:11:52Z',
          reason: args.reason ?? null,
          links_removed: args.action === 'unlink' ? 1 : 0,
        };
      }
      case 'forget_preview':
      case 'forget_sessions': {
        const plan = {
          sessions: [{ session_key: 'sha256-fake', agent: 'claude', title: 'A session to forget', started_at: '2026-02-10T21:11:52Z' }],
          turns: 3,
          records: 23,
          retained_copies: 1,
          vectors: 0,
          links: 1,
          recall_evidence: 3,
          recall_entries: [
            { id: 'e1', title: 'A fact', back_to_inbox: true, deleted: false, stays_archived: false },
            // A replaced entry stays archived; a replacement going back to the inbox hands its
            // place back to the entry it replaced.
            { id: 'e2', title: 'The old cookie name', back_to_inbox: false, deleted: false, stays_archived: false, superseded_by: 'e3' },
            { id: 'e3', title: 'The new cookie name', back_to_inbox: true, deleted: false, stays_archived: false, hands_back_to: 'e2' },
          ],
          insight_reports: [],
          same_id_kept: [],
          published: 1,
          pulled: 0,
          team_pushed: 0,
          allow_reimport: false,
        };
        return cmd === 'forget_preview'
          ? plan
          : { removed: plan, retained_files_deleted: 1, db_bytes_before: 4096, db_bytes_after: 2048 };
      }
      case 'session_export': {
        const options = args.options as { format: string };
        const ext = options.format === 'atif' ? 'atif.json' : options.format;
        const name = `session-claude-${String(args.key).slice(0, 8)}-20260210.${ext}`;
        return {
          path: `/home/dev/Downloads/${name}`,
          file_name: name,
          bytes: 2048,
          left_out: {
            redactions: { 'github-pat': 1 },
            outputs_cut: 0,
            output_bytes_cut: 0,
            max_output_bytes: 4096,
            turns_not_exported: 0,
            home_written_as_tilde: true,
          },
          left_out_text: 'Redacted: github-pat ×1. The home directory is written as `~`.',
        };
      }
      case 'insight_export': {
        const name = `insight-${args.id as number}-weekly-summary.${args.format as string}`;
        return { path: `/home/dev/Downloads/${name}`, file_name: name, bytes: 120 };
      }
      case 'extract_status':
        return options.extractDisabled ? { ...fakeExtractStatus(), enabled: false, last_run: null } : fakeExtractStatus();
      case 'extract_doctor':
        return {
          model: 'qwen3:8b',
          deployment: '',
          server: 'local',
          endpoint: 'http://127.0.0.1:11434/v1',
          profile: 'local',
          segmenter: 'turns-v1',
          max_window_chars: 24000,
          fingerprint: 'fp-qwen',
          checks: [
            { name: 'models', ok: true, detail: 'the server serves qwen3:8b' },
            { name: 'probe', ok: false, detail: 'the reply was not valid JSON' },
          ],
          probe_entries: null,
          probe_request: 'USER MESSAGE (ordinal 0):\nRun the dev server on port 4173 from now on.',
          probe_answer: 'not json',
          probe_ms: 900,
          usage: { prompt_tokens: 120, completion_tokens: 30 },
        };
      case 'extract_detect':
        return [
          { kind: 'agent', name: 'claude', label: 'claude 2.1.3 (Claude Code)', path: '/usr/bin/claude', version: '2.1.3 (Claude Code)', endpoint: null, models: [], api_key_env: null, paid: false, problem: null, setup: { generator: 'claude', endpoint: '', model: '', api_key_env: '', allow_http: false } },
          { kind: 'server', name: 'ollama', label: 'Ollama on port 11434', path: null, version: null, endpoint: 'http://127.0.0.1:11434/v1', models: ['qwen3:8b', 'llama3.2'], api_key_env: null, paid: false, problem: null, setup: { generator: 'endpoint', endpoint: 'http://127.0.0.1:11434/v1', model: 'qwen3:8b', api_key_env: '', allow_http: false } },
          { kind: 'key', name: 'OPENAI_API_KEY', label: 'OpenAI (key in OPENAI_API_KEY)', path: null, version: null, endpoint: 'https://api.openai.com/v1', models: [], api_key_env: 'OPENAI_API_KEY', paid: true, problem: null, setup: { generator: 'endpoint', endpoint: 'https://api.openai.com/v1', model: '', api_key_env: 'OPENAI_API_KEY', allow_http: false } },
        ];
      case 'extract_setup':
        return extractSetup;
      case 'extract_test': {
        const setup = args.setup as typeof extractSetup;
        return {
          model: setup.model || setup.generator,
          deployment: '',
          server: '',
          endpoint: setup.endpoint || setup.generator,
          profile: 'base',
          segmenter: 'turns-v1',
          max_window_chars: 50000,
          fingerprint: 'fp-new',
          checks: [{ name: 'probe', ok: true, detail: 'a strict-schema extraction worked: 1 entry' }],
          probe_entries: 1,
          probe_request: 'USER MESSAGE (ordinal 0):\nRun the dev server on port 4173 from now on.',
          probe_answer: '{"entries":[{"type":"fact","title":"Dev server on 4173"}]}',
          probe_ms: 1200,
          usage: { prompt_tokens: 0, completion_tokens: 0 },
        };
      }
      case 'extract_preview':
        return {
          fingerprint: null,
          model: extractSetup.model,
          max_window_chars: 50000,
          sessions: 6,
          units: 20,
          chars: 80000,
          estimated_input_tokens: 24000,
          max_output_tokens: 81920,
          max_cost: extractSetup.input_price_per_mtok === null ? null : 1.3,
          estimated_seconds: null,
          concurrency: 2,
          sessions_list: [],
        };
      case 'extract_save': {
        const setup = args.setup as typeof extractSetup;
        // A key pasted where its variable's name goes (`sk-…`, or `sk_…`, which is a name too).
        if (/^sk[-_]/.test(setup.api_key_env)) {
          throw { kind: 'invalid', message: 'the API key variable must be the *name* of an environment variable', hint: null };
        }
        extractSetup = setup;
        return setup;
      }
      case 'extract_start':
      case 'extract_stop':
        return null;
      case 'meaning_status':
        return meaning;
      case 'meaning_build':
        if (meaning.problem) throw { kind: 'unavailable', message: meaning.problem, hint: 'set CAIRN_MODEL_DIR to the folder holding the model' };
        if (!meaning.building) {
          meaning = { ...meaning, building: true, last_error: null };
          void buildMeaning();
        }
        return meaning;
      case 'agent_programs':
        return programs();
      case 'set_agent_program': {
        // As the core checks it: an absolute path (the fake takes any such as executable).
        const agent = String(args.agent);
        const binary = String(args.binary).trim();
        if (binary !== '' && !binary.startsWith('/')) {
          throw {
            kind: 'invalid',
            message: `${binary} is no program Cairn can run: give the full path of the ${agent} executable (\`which ${agent}\` in a terminal prints it)`,
            hint: null,
          };
        }
        configured[agent] = binary === '' ? null : binary;
        return programs();
      }
      case 'doctor': {
        const checks = [{ name: 'claude retention', status: 'warn', detail: 'Claude Code deletes transcripts after 30 days' }];
        if (unopened === null) return { checks };
        const why = unopened.hint ? `did not open: ${unopened.message}. ${unopened.hint}` : `did not open: ${unopened.message}`;
        return { checks: [{ name: 'archive', status: 'fail', detail: why }, ...checks] };
      }
      default:
        throw `unknown command ${cmd}`;
    }
  };
  return { handler, calls, fix };
}
