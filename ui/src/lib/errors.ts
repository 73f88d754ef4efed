import type { ErrorReport } from './api';

/** A command's failure as the core reports it, for anything a promise rejected with instead. */
export function reportOf(error: unknown): ErrorReport {
  return { kind: 'internal', message: messageOf(error), hint: null };
}

/** The one-line message to show for anything a promise rejected with. */
export function messageOf(error: unknown): string {
  if (typeof error === 'string') return error;
  if (error instanceof Error) return error.message;
  try {
    return JSON.stringify(error);
  } catch {
    return String(error);
  }
}
