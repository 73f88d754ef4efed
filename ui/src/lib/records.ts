// How a record reads in the session timeline: its heading, and a tool call's input shown the
// way a person thinks of it (a diff for an edit, a command line for exec, JSON otherwise).
// Pure functions over the record; nothing here is rendered as HTML.
import type { RecordView } from './api';
import { displayText } from './format';

export type DiffLine = { sign: '+' | '-' | ' ' | '@'; text: string };

export type ToolInput =
  | { type: 'none' }
  | { type: 'command'; command: string; description: string | null }
  | { type: 'diff'; path: string | null; lines: DiffLine[] }
  | { type: 'json'; text: string };

/** "You", "Assistant", "Bash", "Result of Bash", "Reasoning", … */
export function recordHeading(record: RecordView): string {
  switch (record.kind) {
    case 'message':
      if (record.role === 'user') {
        if (record.prompt_source === 'system_injected') return 'Injected prompt';
        if (record.prompt_source === 'spawned_agent') return 'Prompt from parent agent';
        return 'User';
      }
      return record.role === 'assistant' ? 'Assistant' : (record.role ?? 'Message');
    case 'tool_call':
      return record.tool_name ?? 'Tool call';
    case 'tool_result':
      return record.tool_name ? `Result of ${record.tool_name}` : 'Tool result';
    case 'reasoning':
      return 'Reasoning';
    case 'event':
      return record.is_compaction ? 'Compaction summary' : 'Event';
    default:
      return record.kind;
  }
}

/** Long bodies are folded to this many lines until unfolded. */
export const FOLD_LINES = 6;
/** Never put more than this many characters of one record in the DOM. */
export const MAX_CHARS = 50_000;

/** Should this record's body start folded? Tool output and reasoning always; long text too. */
export function foldsByDefault(record: RecordView): boolean {
  return record.kind === 'tool_result' || record.kind === 'reasoning' || record.is_compaction;
}

export function lineCount(text: string): number {
  let n = 1;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/** The first `lines` lines of `text`, and whether anything was cut. */
export function firstLines(text: string, lines: number): { text: string; cut: boolean } {
  let end = -1;
  for (let i = 0; i < lines; i++) {
    end = text.indexOf('\n', end + 1);
    if (end < 0) return clip(text);
  }
  return { text: text.slice(0, Math.min(end, MAX_CHARS)), cut: true };
}

export function clip(text: string): { text: string; cut: boolean } {
  return text.length > MAX_CHARS ? { text: text.slice(0, MAX_CHARS), cut: true } : { text, cut: false };
}

/**
 * A tool input's JSON, every string in it cleaned for display. The answer's own cleaning saw the
 * JSON text, where a control character or a direction override is still an escape (`\u001b`,
 * `\u202e`); parsing is what turns it back into the character, so the parsed strings are
 * cleaned again.
 */
function parse(json: string | null): unknown {
  if (json === null) return null;
  try {
    return shown(JSON.parse(json));
  } catch {
    return displayText(json);
  }
}

function shown(value: unknown): unknown {
  if (typeof value === 'string') return displayText(value);
  if (Array.isArray(value)) return value.map(shown);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, field]) => [visibleKey(key), shown(field)]));
  }
  return value;
}

/**
 * A key with its controls written out (`comm[U+202E]and`), never taken out: cleaned, it would
 * become `command` and stand for (or replace) the call's real command. JSON's own escaping
 * already writes out ESC and the other C0 controls when the input is shown as JSON.
 */
function visibleKey(key: string): string {
  return key.replace(/[\u202A-\u202E\u2066-\u2069]/g, (c) => `[U+${c.charCodeAt(0).toString(16).toUpperCase()}]`);
}

const str = (value: unknown): string | null => (typeof value === 'string' ? value : null);

function lines(text: string, sign: '+' | '-'): DiffLine[] {
  if (text === '') return [];
  return text.replace(/\n$/, '').split('\n').map((line) => ({ sign, text: line }));
}

/** A patch text (`apply_patch`, unified diff) as signed lines. */
function patchLines(patch: string): DiffLine[] {
  return patch.split('\n').map((line): DiffLine => {
    const first = line[0];
    if (first === '+' && !line.startsWith('+++')) return { sign: '+', text: line.slice(1) };
    if (first === '-' && !line.startsWith('---')) return { sign: '-', text: line.slice(1) };
    if (first === '@' || line.startsWith('***')) return { sign: '@', text: line };
    return { sign: ' ', text: first === ' ' ? line.slice(1) : line };
  });
}

const looksLikePatch = (text: string) => /^(\*\*\* Begin Patch|--- |diff --git|@@)/m.test(text);

/** What [`toolInput`] reads of a record: its input, and where the archive has them (a
 * teammate's published record does not), the files it names and its kind. */
export type ToolCall = Pick<RecordView, 'tool_input'> & Partial<Pick<RecordView, 'file_paths' | 'tool_kind'>>;

/** A tool call's input, for display. */
export function toolInput(record: ToolCall): ToolInput {
  const input = parse(record.tool_input);
  if (input === null || input === undefined) return { type: 'none' };
  if (typeof input === 'string') {
    return looksLikePatch(input) ? { type: 'diff', path: null, lines: patchLines(input) } : { type: 'json', text: input };
  }
  const fields = (typeof input === 'object' ? input : {}) as Record<string, unknown>;
  const path = str(fields.file_path) ?? str(fields.path) ?? record.file_paths?.[0] ?? null;

  // Edits: Claude's Edit / MultiEdit / Write, Codex's apply_patch (in its several shapes).
  if (str(fields.old_string) !== null || str(fields.new_string) !== null) {
    return {
      type: 'diff',
      path,
      lines: [...lines(str(fields.old_string) ?? '', '-'), ...lines(str(fields.new_string) ?? '', '+')],
    };
  }
  if (Array.isArray(fields.edits)) {
    const out: DiffLine[] = [];
    for (const edit of fields.edits as Record<string, unknown>[]) {
      out.push({ sign: '@', text: '…' });
      out.push(...lines(str(edit.old_string) ?? '', '-'), ...lines(str(edit.new_string) ?? '', '+'));
    }
    return { type: 'diff', path, lines: out };
  }
  if (record.tool_kind === 'file_edit' && str(fields.content) !== null) {
    return { type: 'diff', path, lines: lines(str(fields.content)!, '+') };
  }
  for (const field of ['patch', 'input']) {
    const text = str(fields[field]);
    if (text !== null && looksLikePatch(text)) return { type: 'diff', path, lines: patchLines(text) };
  }

  // Exec: a command string, or an argv array (Codex `shell`).
  const command = fields.command ?? fields.cmd;
  if (typeof command === 'string' || Array.isArray(command)) {
    const argv = Array.isArray(command) ? command.map(String) : [command];
    // Codex can run apply_patch as an argv whose last word is the patch.
    const patch = argv.find(looksLikePatch);
    if (patch !== undefined) return { type: 'diff', path, lines: patchLines(patch) };
    const line = argv.join(' ');
    return { type: 'command', command: line, description: str(fields.description) };
  }
  return { type: 'json', text: JSON.stringify(input, null, 2) };
}

/** A tool call's input as plain text, where it is one line among others (a teammate's record):
 * a command as typed, a diff as signed lines under its path, anything else as indented JSON. */
export function toolInputText(input: ToolInput): string {
  switch (input.type) {
    case 'none':
      return '';
    case 'command':
      return [input.description, `$ ${input.command}`].filter(Boolean).join('\n');
    case 'diff':
      return [input.path, ...input.lines.map((l) => (l.sign === '@' ? l.text : `${l.sign}${l.text}`))]
        .filter((line) => line !== null)
        .join('\n');
    case 'json':
      return input.text;
  }
}

/** Lines of a diff shown while folded. */
export const DIFF_FOLD_LINES = 12;
/** Characters of other tool input (JSON) shown while folded. */
export const JSON_FOLD_CHARS = 600;

/** Does a tool input have more to show than its folded form? */
export function inputFolds(input: ToolInput): boolean {
  if (input.type === 'diff') return input.lines.length > DIFF_FOLD_LINES;
  if (input.type === 'json') return input.text.length > JSON_FOLD_CHARS || lineCount(input.text) > FOLD_LINES;
  return false;
}

/** "exit 1", "failed", or null when nothing went wrong (a result that succeeded, or one
 * without an outcome). */
export function outcomeLabel(record: RecordView): string | null {
  if (record.exit_code !== null && record.exit_code !== 0) return `exit ${record.exit_code}`;
  if (record.outcome !== null && record.outcome !== 'succeeded') return record.outcome;
  return null;
}

/** Where the backend starts and ends a match in a search snippet: private-use characters, so
 * brackets in a transcript are never mistaken for highlights (cairn-core `views::search`). */
export const MATCH_START = '\u{E000}';
export const MATCH_END = '\u{E001}';

/** A search snippet (matches wrapped in [`MATCH_START`] … [`MATCH_END`]) as plain-text parts,
 * cleaned for display. The marks outlive the cleaning (`displayText` keeps them), so a match that
 * lay wholly inside a colour code comes out empty and is not marked at all. */
export function snippetParts(raw: string): { text: string; match: boolean }[] {
  const snippet = displayText(raw);
  const parts: { text: string; match: boolean }[] = [];
  const pattern = /\u{E000}([^\u{E001}]*)\u{E001}/gu;
  const plain = (text: string) => {
    const previous = parts.at(-1);
    if (previous !== undefined && !previous.match) previous.text += text;
    else parts.push({ text, match: false });
  };
  let last = 0;
  for (let m = pattern.exec(snippet); m !== null; m = pattern.exec(snippet)) {
    if (m.index > last) plain(snippet.slice(last, m.index));
    if (m[1]!.length > 0) parts.push({ text: m[1]!, match: true });
    last = m.index + m[0].length;
  }
  if (last < snippet.length) plain(snippet.slice(last));
  return parts;
}
