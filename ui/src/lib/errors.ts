// How the window reads a failure. A desktop command's error is a string today and becomes
// `{ kind, message, hint }` (issue 18: errors keep their kind across the IPC boundary); both read
// the same here, so stores and views compile against either bindings. `ErrorText.svelte` shows one.

/** A command's error as the desktop sends it: a message, or a message with its kind and a hint
 * that says what to do about it. */
export type CommandError = string | { kind?: string | null; message: string; hint?: string | null };

/** A failure as the window shows it. */
export interface Problem {
  message: string;
  /** What to do about it (a command to run, a setting to change); null when there is none. */
  hint: string | null;
  /** What kind of failure it is (`not_found`, `locked`, …), when the backend says. */
  kind: string | null;
}

/** Longest hint or kind shown; a message is shown whole (it names the file or value at fault). */
const MAX_FIELD = 2000;

/** Read anything a command or promise failed with: a string, an `Error`, a `{ kind, message,
 * hint }` object. Fields of the wrong type are dropped, never shown as `[object Object]`. Advice
 * the core words for its command line is said the window's way (`forWindow`). */
export function problemOf(error: unknown): Problem {
  if (typeof error === 'string') return forWindow({ message: error, hint: null, kind: null });
  if (error instanceof Error) return forWindow({ message: error.message, hint: null, kind: null });
  if (typeof error === 'object' && error !== null && typeof (error as { message?: unknown }).message === 'string') {
    const { message, hint, kind } = error as { message: string; hint?: unknown; kind?: unknown };
    return forWindow({ message, hint: field(hint), kind: field(kind) });
  }
  return { message: stringify(error), hint: null, kind: null };
}

/**
 * The core's messages end with advice for its command line (`find sessions with `cairn
 * sessions``, `then run the command again`), which means nothing in a window that has no command
 * to run. Each phrase, as the core writes it, is replaced by what a person does here; the advice
 * becomes the hint when the core sent none. A phrase the core rewords is simply shown as it came,
 * so this table can fall behind but never garble a message.
 */
const CLI_ADVICE: readonly { said: string; instead: string; hint: string | null }[] = [
  { said: '; find sessions with `cairn sessions` or `cairn skim`', instead: '', hint: 'Find it in Sessions or Search.' },
  { said: '; find sessions with `cairn sessions`', instead: '', hint: 'Find it in Sessions or Search.' },
  { said: '; list sessions with `cairn sessions`', instead: '', hint: 'Find it in Sessions or Search.' },
  { said: ', then run the command again', instead: ', then try again', hint: null },
];

function forWindow(problem: Problem): Problem {
  let { message, hint } = problem;
  for (const advice of CLI_ADVICE) {
    if (!message.includes(advice.said)) continue;
    message = message.replace(advice.said, advice.instead);
    hint ??= advice.hint;
  }
  return { ...problem, message, hint };
}

/** Longer than a few lines of an error box: such a message is shown in a box of its own that
 * scrolls (`ErrorText.svelte`), so it cannot cover the page. */
export const LONG_MESSAGE = 320;

/** Whether `text` is too long to show in the flow of a sentence (a few lines at most). */
export function isLong(text: string): boolean {
  return text.length > LONG_MESSAGE || text.split('\n').length > 5;
}

/** One line of plain text for places that cannot lay out a hint (a tooltip, a toast). */
export function textOf(error: unknown): string {
  const { message, hint } = problemOf(error);
  return hint ? `${message} (${hint})` : message;
}

function field(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value.slice(0, MAX_FIELD) : null;
}

function stringify(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
