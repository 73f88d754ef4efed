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

/** The title's first line, else the first prompt's, else a stand-in that still tells sessions apart. */
export function sessionTitle(session: Session): string {
  const line = firstLine(session.title) ?? firstLine(session.first_prompt);
  if (line !== null) return line;
  return session.session_id ? `Untitled session ${session.session_id.slice(0, 8)}` : 'Untitled session';
}

/** The project name, else the last part of the working directory. */
export function projectLabel(session: Session): string {
  if (session.project) return session.project;
  if (!session.cwd) return '';
  const parts = session.cwd.split(/[/\\]/).filter((p) => p.length > 0);
  return parts.at(-1) ?? session.cwd;
}

export const agentNames: Record<Agent, string> = { claude: 'Claude', codex: 'Codex' };

/** "1 turn", "12 turns". */
export function count(n: number, noun: string): string {
  return `${n.toLocaleString('en')} ${noun}${n === 1 ? '' : 's'}`;
}
