// How session fields read in the list. Pure functions of their inputs (the clock is passed in).
import type { Agent, Session } from './api';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

const dateFormat = new Intl.DateTimeFormat('en', { day: 'numeric', month: 'short', year: 'numeric' });

/** "just now", "5 min ago", "3 h ago", "yesterday", "4 d ago", then the date. */
export function relativeTime(iso: string | null, now: number): string {
  if (iso === null) return '';
  const then = Date.parse(iso);
  if (Number.isNaN(then)) return '';
  const ago = now - then;
  if (ago < MINUTE) return 'just now';
  if (ago < HOUR) return `${Math.floor(ago / MINUTE)} min ago`;
  if (ago < DAY) return `${Math.floor(ago / HOUR)} h ago`;
  if (ago < 2 * DAY) return 'yesterday';
  if (ago < 7 * DAY) return `${Math.floor(ago / DAY)} d ago`;
  return dateFormat.format(then);
}

/** The first non-blank line of `text`, or null. */
function firstLine(text: string | null): string | null {
  return (
    text
      ?.split('\n')
      .map((line) => line.trim())
      .find((line) => line.length > 0) ?? null
  );
}

/** A session with no title and no prompt, told apart by its id: a UUID's first block, another
 * id whole up to 24 characters ("Untitled session test-ratelimit-session"), else cut with "…". */
export function untitled(id: string | null | undefined): string {
  if (!id) return 'Untitled session';
  const short = /^[0-9a-f]{8}-/i.test(id) ? id.slice(0, 8) : id.length > 24 ? `${id.slice(0, 23)}…` : id;
  return `Untitled session ${short}`;
}

/** The title's first line, else the first prompt's, else a stand-in that still tells sessions apart. */
export function sessionTitle(session: Session): string {
  return firstLine(session.title) ?? firstLine(session.first_prompt) ?? untitled(session.session_id);
}

/** The project name, else the last part of the working directory. */
export function projectLabel(session: Session): string {
  if (session.project) return session.project;
  if (!session.cwd) return '';
  const parts = session.cwd.split(/[/\\]/).filter((p) => p.length > 0);
  return parts.at(-1) ?? session.cwd;
}

export const agentNames: Record<Agent, string> = { claude: 'Claude', codex: 'Codex', copilot: 'Copilot', qwen: 'Qwen Code', droid: 'Droid', kimi: 'Kimi', gemini: 'Gemini', cursor: 'Cursor', aider: 'Aider', crush: 'Crush', opencode: 'OpenCode', cline: 'Cline', roo: 'Roo Code', kilo: 'Kilo Code', kiro: 'Kiro', pi: 'Pi', openclaw: 'OpenClaw', grok: 'Grok', hermes: 'Hermes', antigravity: 'Antigravity', vibe: 'Vibe', iflow: 'iFlow', traex: 'TRAE CLI', gptme: 'gptme', posit: 'Posit Assistant', qwenpaw: 'QwenPaw', vscopilot: 'Visual Studio Copilot', atif: 'ATIF import' };

/** An agent as a filter offers it: `atif` gathers every session this build has no reader for
 * (imported and pulled trajectories, agents only a newer Cairn reads, each badged by its own
 * name), so its choice says so rather than naming one format. */
export function agentFilterName(agent: Agent): string {
  return agent === 'atif' ? 'Imported and other agents' : agentNames[agent];
}

/** An agent's display name from its id as any source gives it (a teammate's row may name one
 * this build does not know: shown as it came). */
export function agentLabel(agent: string): string {
  return Object.hasOwn(agentNames, agent) ? agentNames[agent as Agent] : agent;
}

/** Every agent Cairn reads, in the order the filters and Settings list them. */
export const agents = Object.keys(agentNames) as Agent[];

/** "1 turn", "12 turns", "2 entries" (a consonant and y take -ies). */
export function count(n: number, noun: string): string {
  const many = /[^aeiou]y$/.test(noun) ? `${noun.slice(0, -1)}ies` : `${noun}s`;
  return `${n.toLocaleString('en')} ${n === 1 ? noun : many}`;
}

/** A branch's sessions in words: those that landed work on it (strong links) and those that only
 * ran while it was checked out, so a branch where nothing landed never reads "0 sessions". */
export function branchSessions(landed: number, ranOnly: number): string {
  if (ranOnly === 0) return count(landed, 'session');
  if (landed === 0) return `${count(ranOnly, 'session')} ran here, none landed work`;
  return `${count(landed, 'session')} landed work, ${ranOnly} more ran here`;
}

/** {@link branchSessions} short enough for a row of the branch list, whose tooltip has the
 * whole phrase: "1 landed, 2 ran here", "2 ran here, none landed", "3 sessions". */
export function branchSessionsBrief(landed: number, ranOnly: number): string {
  if (ranOnly === 0) return count(landed, 'session');
  if (landed === 0) return `${ranOnly.toLocaleString('en')} ran here, none landed`;
  return `${landed.toLocaleString('en')} landed, ${ranOnly.toLocaleString('en')} ran here`;
}

const timeFormat = new Intl.DateTimeFormat('en', { hour: '2-digit', minute: '2-digit', hour12: false });
const dateTimeFormat = new Intl.DateTimeFormat('en', {
  day: 'numeric',
  month: 'short',
  year: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  hour12: false,
});

/** "14:03", or '' when unknown. */
export function clockTime(iso: string | null): string {
  const t = iso === null ? NaN : Date.parse(iso);
  return Number.isNaN(t) ? '' : timeFormat.format(t);
}

/** "30 Nov 2026, 14:03", or '' when unknown. */
export function dateTime(iso: string | null): string {
  const t = iso === null ? NaN : Date.parse(iso);
  return Number.isNaN(t) ? '' : dateTimeFormat.format(t);
}

/** `dateTime`, or the text as it came when it is no time ('' for none): for times a reader
 * must see even when another writer's (a teammate's) format is not one we parse. */
export function timeOrText(iso: string | null): string {
  return dateTime(iso) || (iso ?? '');
}

/** 950 → "950", 12_345 → "12.3k", 4_500_000 → "4.5M". */
export function compactNumber(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 100_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/** 3_300_000 → "3.3 MB". */
export function byteSize(n: number | null): string {
  if (n === null) return '';
  if (n < 1000) return `${n} B`;
  if (n < 1_000_000) return `${(n / 1000).toFixed(0)} kB`;
  if (n < 1_000_000_000) return `${(n / 1_000_000).toFixed(1)} MB`;
  return `${(n / 1_000_000_000).toFixed(2)} GB`;
}

/** `ref:refs/heads/feature/x` → `feature/x`. */
export function branchName(key: string): string {
  return key.replace(/^ref:refs\/heads\//, '').replace(/^ref:/, '');
}

/** A skim preview (`user: …`, `assistant: …`) split into who said it and what. */
export function splitPreview(preview: string): { who: 'user' | 'assistant' | null; text: string } {
  const match = /^(user|assistant): /.exec(preview);
  return match ? { who: match[1] as 'user' | 'assistant', text: preview.slice(match[0].length) } : { who: null, text: preview };
}

/** `text` to open a sentence with: its first letter a capital ("the Secret Service" → "The …"). */
export function sentenceStart(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** A list in words: `a`, `a and b`, `a, b and c`. */
export function inWords(items: readonly string[]): string {
  return items.length > 1 ? `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}` : (items[0] ?? '');
}

/** The last part of a path. */
export function baseName(path: string): string {
  return path.split(/[/\\]/).filter((p) => p.length > 0).at(-1) ?? path;
}

/** A short, readable name for a kind of evidence. */
export const evidenceNames: Record<string, string> = {
  commit_by_session: 'committed',
  pr_created: 'opened the PR',
  environment_promotion: 'changes committed',
  pushed: 'pushed',
  edit_committed: 'edits committed',
  change_committed: 'change committed',
  direct_transition: 'switched to branch',
  branch_recorded: 'ran on branch',
  ran_on_branch: 'ran on branch',
  person: 'linked by a person',
};

/** The instant a picked day (`YYYY-MM-DD`) starts on this machine's clock, the one times are
 * shown on, as an RFC 3339 UTC time (`end`: the next day's start, for a bound that includes the
 * day); the text as given when it is no day, for the backend to refuse. */
export function dayStart(day: string, end = false): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  if (!m) return day;
  const date = new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]) + (end ? 1 : 0));
  return Number.isNaN(date.getTime()) ? day : date.toISOString();
}

/** A piece of a backend message: plain text, or a command or name it quotes in backticks. */
export interface TextPiece {
  text: string;
  code: boolean;
}

/**
 * A message from the backend in pieces, so the commands it quotes (`cairn sync`) show as code,
 * not between backticks. A backtick left without its pair stays as it is, in the text.
 */
export function codePieces(message: string): TextPiece[] {
  const pieces: TextPiece[] = [];
  const push = (text: string, code: boolean) => {
    if (text.length === 0) return;
    const last = pieces.at(-1);
    if (last && !last.code && !code) last.text += text;
    else pieces.push({ text, code });
  };
  let rest = message;
  for (;;) {
    const open = rest.indexOf('`');
    const close = open < 0 ? -1 : rest.indexOf('`', open + 1);
    if (close < 0) break;
    push(rest.slice(0, open), false);
    const quoted = rest.slice(open + 1, close);
    // An empty pair is no quotation: its two backticks stay text.
    push(quoted.length > 0 ? quoted : '``', quoted.length > 0);
    rest = rest.slice(close + 1);
  }
  push(rest, false);
  return pieces;
}
