// How session fields read in the list. Pure functions of their inputs (the clock is passed in).
import type { Agent, Session } from './api';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

const dateFormat = new Intl.DateTimeFormat('en', { day: 'numeric', month: 'short', year: 'numeric' });

/**
 * A terminal's escape sequences in text, which a terminal acts on and never shows: colour and
 * cursor codes (CSI: `ESC [` or C1 U+009B, parameters, one final byte), control strings (OSC
 * window titles and links, DCS, SOS, PM, APC: up to BEL or the string terminator, or the end of
 * the line, within 512 characters) and two-character escapes (`ESC (`, `ESC 7`, a lone ESC). A
 * window is no terminal: a control string that never ends takes only its introducer with it, not
 * the rest of a record, and a C1 introducer or terminator alone (U+009D, U+009C: mostly the
 * debris of a mis-decoded quote) goes by itself. The search-match marks U+E000/U+E001 may sit inside a CSI (the index
 * matched the letters of `[31m`): they are allowed among its parameters so it is still seen.
 */
// Matching control characters is the point of this pattern.
// eslint-disable-next-line no-control-regex
const TERMINAL_ESCAPE = /\x1b[P\]X^_](?:[^\x07\x9c\x1b\n]|\x1b(?!\\)){0,512}(?:\x07|\x9c|\x1b\\|(?=\n)|$)|(?:\x1b\[|\x9b)[\x20-\x3f\u{E000}\u{E001}]*[\x40-\x7e]?|\x1b[\x20-\x2f]*[\x30-\x7e]?|[\x90\x98\x9c\x9d\x9e\x9f]/gu;
// eslint-disable-next-line no-control-regex
const MAY_ESCAPE = /[\x1b\x90\x98\x9b\x9c\x9d\x9e\x9f]/;

/*
 * Unicode's explicit direction controls, embeddings and overrides (U+202A–U+202E) and isolates
 * (U+2066–U+2069), are among what `HIDDEN` takes out: a right-to-left override makes
 * `invoice_\u202Egpj.exe` read `invoice_exe.jpg` and a command read as another; right-to-left
 * prose needs none of them (its letters carry their direction), so they go, as the CLI's
 * cleaning takes them out.
 */

/**
 * What else a window would draw as a box or as nothing, as the core's `printable` (the CLI's
 * `clean`) takes it out: control characters but tab and newline (C0, DEL, C1: a transcript's
 * BEL or NUL), direction controls (above), and the characters drawn as nothing that join nothing
 * (zero-width space, word joiner and invisible operators, a byte-order mark, the deprecated
 * format characters U+206A–U+206F, the interlinear annotation marks). A run of them goes as one
 * cut. The joiners that shape a script or an emoji (ZWJ, ZWNJ), the soft hyphen and the
 * direction marks stay. Tag characters (U+E0000…), which the core also cuts outside a flag, are
 * not matched here.
 */
// Matching control characters is the point of these patterns.
// eslint-disable-next-line no-control-regex
const HIDDEN = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b\u2060-\u2064\u206a-\u206f\ufeff\ufff9-\ufffb\u202a-\u202e\u2066-\u2069]/u;
// eslint-disable-next-line no-control-regex
const HIDDEN_RUNS = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b\u2060-\u2064\u206a-\u206f\ufeff\ufff9-\ufffb\u202a-\u202e\u2066-\u2069]+/gu;
/** The controls that end a line or a page on a terminal (CR, VT, FF, NEL): they part words. */
const LINE_BREAK_CONTROL = /[\r\v\f\x85]/;

/** A cut of `HIDDEN_RUNS` that held a line-breaking control becomes one space when neither side
 * has whitespace: cut to nothing, `50%\rdone` read `50%done`. A CR before its newline goes. */
function cutHidden(run: string, at: number, whole: string): string {
  if (!LINE_BREAK_CONTROL.test(run)) return '';
  const before = whole[at - 1];
  const after = whole[at + run.length];
  return before !== undefined && after !== undefined && !/\s/.test(before) && !/\s/.test(after) ? ' ' : '';
}

/**
 * Text as a terminal would show it: its escape sequences taken out, so a coloured tool output or
 * a title that caught a colour code reads as the words alone (`␛[32mok` is `ok`), then what
 * `HIDDEN` names (above), as the CLI's `clean` does: a BEL or NUL from a transcript is not drawn
 * as a box, and a carriage return, vertical tab, form feed or NEL between two words leaves a
 * space. Tab and newline stay. Every text the backend sends goes through here (`inert`, on each
 * answer whole). A search-match mark inside a sequence is kept, so the highlights still open and
 * close in pairs.
 */
export function displayText(text: string): string {
  const shown = MAY_ESCAPE.test(text)
    ? text.replace(TERMINAL_ESCAPE, (sequence) => sequence.replace(/[^\u{E000}\u{E001}]/gu, ''))
    : text;
  return HIDDEN.test(shown) ? shown.replace(HIDDEN_RUNS, cutHidden) : shown;
}

/**
 * Fields whose value the window sends back to the backend as it came, to name a thing: a key, a
 * repository's root, a folder. Cleaned, `/src/a\u202Eb` would name `/src/ab`, another folder
 * (a pull into another repository, a source folder saved as another). `inert` leaves them as
 * they are; a component showing one shows it through `displayText`.
 */
const IDENTIFIERS: ReadonlySet<string> = new Set(['session_key', 'target_key', 'turn_key', 'key', 'id', 'entry_id', 'root', 'path']);

/**
 * `value` with every string in it (values, not keys) as `displayText` shows it, but those of
 * `IDENTIFIERS`. The backend's answers carry transcript and teammates' text into fields no
 * component cleans (a branch, a project, a tool name, an error's message): cleaned once at the
 * door, whichever component shows them. An answer is a fresh object: it is cleaned in place.
 */
export function inert<T>(value: T): T {
  if (typeof value === 'string') return displayText(value) as T;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = inert(value[i]);
  } else if (value !== null && typeof value === 'object') {
    const fields = value as Record<string, unknown>;
    for (const key of Object.keys(fields)) {
      if (!(IDENTIFIERS.has(key) && typeof fields[key] === 'string')) fields[key] = inert(fields[key]);
    }
  }
  return value;
}

/** A code span: a run of backticks, then anything up to a run of the same length (Markdown's
 * rule, so a fenced block squeezed onto one line, ``` ls -la ```, is one span too). */
const CODE_SPAN = /(?<!`)(`+)(?!`)([^`]|[^`][\s\S]*?[^`])\1(?!`)/g;

/** Emphasis the Markdown way with asterisks, `**bold**` and `*it*`, the markers hugging the
 * words inside and standing apart from those outside. So a glob (`*.rs or *.ts`), a product
 * (`2 * 3`) and a path (`src/*`) keep their characters. Underscores are left alone: in a
 * transcript they are code's (`__main__`, `_private_`, `__init__.py`) far more often than
 * emphasis, and a preview read twice (a title, then its row) must not lose them. */
const STAR_EMPHASIS = /(?<![\w*/\\])(\*{1,2})([^\s*](?:[^*\n]*[^\s*])?)\1(?![\w*/\\]|\.\w)/gu;

/** A heading's `#` marks or a list item's bullet, at the start of a line. */
const LINE_MARK = /^([ \t]*)(?:#{1,6}|[-*])[ \t]+/gm;

/** Markdown's markers taken out of prose (not code): line marks only where the piece starts a
 * line (`atLineStart`) or after a line break inside it. */
function plainProse(text: string, atLineStart: boolean): string {
  const head = atLineStart ? '' : '\u0000';
  return (head + text)
    .replace(LINE_MARK, '$1')
    .replace(STAR_EMPHASIS, '$2')
    .slice(head.length);
}

/**
 * A one-line preview (a turn's prompt and answer, a skim row, a session or hit title) as a person
 * reads the Markdown it was written in: `displayText`, then emphasis markers, backticks around
 * code, heading marks and list bullets taken out, since a preview has no room to render them and
 * `**3,124 files**` reads as noise. Text inside code keeps its characters; the search-match marks
 * (U+E000/U+E001) are never touched, so highlights still open and close in pairs.
 */
export function plainPreview(text: string): string {
  const shown = displayText(text);
  if (!/[*_`#-]/.test(shown)) return shown;
  let out = '';
  let last = 0;
  for (const m of shown.matchAll(CODE_SPAN)) {
    out += plainProse(shown.slice(last, m.index), last === 0 || shown[last - 1] === '\n');
    // A fence's content has the spaces that stood between it and its backticks; one is enough.
    out += m[1]!.length >= 3 ? m[2]!.trim() : m[2]!;
    last = m.index + m[0].length;
  }
  return out + plainProse(shown.slice(last), last === 0 || shown[last - 1] === '\n');
}

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

/** The first non-blank line of `text` as a preview reads it (`plainPreview`), or null. */
function firstLine(text: string | null): string | null {
  return (
    (text === null ? null : plainPreview(text))
      ?.split('\n')
      .map((line) => line.trim())
      .find((line) => line.length > 0) ?? null
  );
}

/** What heads a session with neither a title nor a prompt, as the core's views and the CLI head
 * it: a session is named by its title, else its first prompt (`SessionHit::title`, the
 * search hits' and forget plans' titles), else "(no prompt)" (`cairn sessions`), which is the
 * truth about it: an automated run, a rate-limit notice, a session whose prompt was lost. */
export const NO_PROMPT = '(no prompt)';

/** The title's first line, else the first prompt's, else {@link NO_PROMPT}. */
export function sessionTitle(session: Session): string {
  return firstLine(session.title) ?? firstLine(session.first_prompt) ?? NO_PROMPT;
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
  return displayText(key.replace(/^ref:refs\/heads\//, '').replace(/^ref:/, ''));
}

/** A skim preview (`user: …`, `assistant: …`) split into who said it and what. */
export function splitPreview(preview: string): { who: 'user' | 'assistant' | null; text: string } {
  const match = /^(user|assistant): /.exec(preview);
  const text = plainPreview(match ? preview.slice(match[0].length) : preview);
  return { who: match ? (match[1] as 'user' | 'assistant') : null, text };
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

/** What each leg of a session-level search that found a session means (`SessionHit`'s
 * `match_reasons`, which a Why answer for a description cites as "found by turns, paths"). */
const SEARCH_REASONS: Record<string, string> = {
  turns: 'its turns, by their words or meaning',
  paths: 'a file it edited, by name',
  links: 'a branch, review or commit it is linked to, by name',
};

/** A line of a Why answer's evidence as the window reads it: the kind as a label, then what it
 * found. A description is searched, not traced: its evidence (kind `search`, "found by turns")
 * is said as what the search matched; any other kind as it is named, underscores as spaces. */
export function whyEvidence(kind: string, detail: string): { label: string; detail: string } {
  if (kind !== 'search') return { label: kind.replaceAll('_', ' '), detail };
  const found = /^found by (.+)$/.exec(detail);
  if (found) {
    const reasons = found[1]!.split(',').map((r) => r.trim());
    return { label: 'matched', detail: reasons.map((r) => SEARCH_REASONS[r] ?? r).join('; ') };
  }
  const edited = /^edited (.+)$/.exec(detail);
  if (edited) return { label: 'matched', detail: `files it edited, by name: ${edited[1]}` };
  return { label: 'matched', detail };
}

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

/** A piece of a backend message as shown: code, emphasised, or plain. */
export interface MessagePiece extends TextPiece {
  em: boolean;
}

/** `*word*` or `**words**` as Markdown writes emphasis: the asterisks hug the words inside and
 * stand apart from the words outside, so a glob (`*.rs or *.ts`) or a product (`2 * 3`) is not. */
const EMPHASIS = /(?<![\w*])\*{1,2}([^\s*](?:[^*\n]*[^\s*])?)\*{1,2}(?![\w*])/gu;

/**
 * A backend message in pieces for display: its terminal escapes taken out, the commands it quotes
 * in backticks as code (`codePieces`), and the words it emphasises the Markdown way (`*name*`,
 * `**not**`) as emphasis rather than between asterisks. Code keeps its asterisks.
 */
export function messagePieces(message: string): MessagePiece[] {
  const out: MessagePiece[] = [];
  for (const piece of codePieces(displayText(message))) {
    if (piece.code) {
      out.push({ ...piece, em: false });
      continue;
    }
    let last = 0;
    for (const m of piece.text.matchAll(EMPHASIS)) {
      if (m.index > last) out.push({ text: piece.text.slice(last, m.index), code: false, em: false });
      out.push({ text: m[1]!, code: false, em: true });
      last = m.index + m[0].length;
    }
    if (last < piece.text.length) out.push({ text: piece.text.slice(last), code: false, em: false });
  }
  return out;
}
