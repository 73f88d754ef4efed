// A made-up archive behind the real command names, for component tests (through mockIPC, so
// the generated bindings run for real) and for ui/mock.html. Shapes follow the bindings.
import type {
  Agent,
  RecordView,
  Repo,
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
import { fakeSessions } from './sessions';

export interface FakeOptions {
  /** Sessions in the archive (0: first run). */
  sessions?: number;
  /** Turns per session timeline. */
  turns?: number;
  /** Records per turn. */
  recordsPerTurn?: number;
  /** Commands that fail once, with this message. */
  failOnce?: Partial<Record<string, string>>;
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
    assistant_preview: index % 2 === 0 ? `Fixed bug ${index} and added a test.` : null,
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

export function fakeRepos(): Repo[] {
  return [
    {
      root: '/home/dev/shop',
      name: 'shop',
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
      session_count: 1,
      last_activity: at(5),
      branches: [{ name: 'drafts', key: 'ref:refs/heads/drafts', sessions: 1, weak_sessions: 0, turns: 2, last_activity: at(5) }],
    },
    // Sessions outside any repository come grouped by project, with no root: two such groups
    // can list the same branch.
    ...['scratch', 'notes'].map((name) => ({
      root: null,
      name,
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
      previews: [`user: Please fix bug number ${i}`, `assistant: Fixed bug ${i}.`],
    })),
  };
}

export function fakeSkim(target: string, turns = 3): SkimView {
  const sessions = target === 'ref:refs/heads/feature/login' ? [skimSession(1, false, turns), skimSession(2, false, turns), skimSession(3, true, 2)] : [];
  return {
    target_kind: 'branch',
    target_key: target,
    coverage: { showing_sessions: sessions.length, showing_turns: sessions.length * turns, related_turn_count: 2, weak_sessions_hidden: 0 },
    sessions,
  };
}

export function fakeDetail(sessionKey: string): SessionDetail {
  return {
    session_key: sessionKey,
    agent: 'claude',
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
    title: 'Session number 1',
    started_at: at(0),
    coverage: { showing_turns: turns, total_turns: turns, has_more_before: false },
    turns: Array.from({ length: turns }, (_, i) => fakeTurn(i, recordsPerTurn)),
  };
}

export function fakeHits(query: SearchQuery): SearchHit[] {
  if (query.text.includes('nothing')) return [];
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
  }));
}

const sources: SourceDirStatus[] = [
  { agent: 'claude', path: '/home/dev/.claude/projects', origin: 'default', exists: true },
  { agent: 'codex', path: '/home/dev/.codex/sessions', origin: 'default', exists: false },
];

/** The IPC handler: command name and arguments in, the command's answer out (or a thrown
 * string, which the bindings turn into `{status: 'error'}`). */
export function fakeBackend(options: FakeOptions = {}) {
  const turns = options.turns ?? 5;
  const perTurn = options.recordsPerTurn ?? 4;
  const failures = { ...options.failOnce };
  let sessions = options.sessions ?? 6;
  const calls: { cmd: string; args: Record<string, unknown> }[] = [];
  const handler = async (cmd: string, payload: unknown): Promise<unknown> => {
    const args = (payload ?? {}) as Record<string, unknown>;
    calls.push({ cmd, args });
    const failure = failures[cmd];
    if (failure !== undefined) {
      delete failures[cmd];
      throw failure;
    }
    switch (cmd) {
      case 'app_info':
        return { data_dir: '/tmp/cairn-test', version: '0.1.0', read_only: false, launch_link: null };
      case 'app_ready':
        return { watching: ['/home/dev/.claude/projects'], problem: null };
      case 'list_sessions': {
        const query = args.query as SessionQuery;
        const all = fakeSessions(sessions);
        const filtered = query.agent ? all.filter((s) => s.agent === query.agent) : all;
        return query.limit ? filtered.slice(0, query.limit) : filtered;
      }
      case 'list_branches':
        return sessions === 0 ? [] : fakeRepos();
      case 'skim_branch':
        return fakeSkim(args.targetKey as string);
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
      case 'search_archive':
        return fakeHits(args.query as SearchQuery);
      case 'sync_archive': {
        const report: SyncReport = { files_scanned: 8, sessions_added: sessions === 0 ? 6 : 0, sessions_updated: 0, records_added: sessions === 0 ? 90 : 0, bytes_read: 1_000_000, warnings: [] };
        if (sessions === 0) sessions = 6;
        return report;
      }
      case 'source_dirs':
        return sources;
      case 'set_source_dirs':
        return [{ agent: args.agent, path: (args.dirs as string[])[0] ?? '/default', origin: 'config', exists: true }, sources[1]];
      case 'hook_overview':
        return {
          hooks: [
            { agent: 'claude', path: '/home/dev/.claude/settings.json', installed: false },
            { agent: 'codex', path: '/home/dev/.codex/hooks.json', installed: true },
          ],
          cli: '/usr/local/bin/cairn',
          cli_problem: null,
        };
      case 'install_hook':
        return { agent: args.agent, changed: true, path: '/home/dev/.claude/settings.json', backup: args.dryRun ? null : '/home/dev/.claude/settings.json.bak', dry_run: args.dryRun, diff: '+ "hooks": {…}', notes: [] };
      case 'privacy_preview':
        return { text: String(args.text).replace(/ghp_\w+/g, '[REDACTED]'), removed: [{ rule: 'github-token', start: 0, end: 1 }] };
      case 'doctor':
        return { checks: [{ name: 'claude retention', status: 'warn', detail: 'Claude Code deletes transcripts after 30 days' }] };
      default:
        throw `unknown command ${cmd}`;
    }
  };
  return { handler, calls };
}
