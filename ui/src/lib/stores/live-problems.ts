// What live capture told the window went wrong, one problem per step (capture, watch), as the
// window keeps it: a failure that repeats (the watcher tries again at every write of an agent)
// is one problem counted, not one more notice each time; the step's next success clears it;
// a person may dismiss it, and it stays dismissed while the same failure repeats. A pure reducer,
// so the rules are tested without a window.
import type { ErrorReport, LiveCapture, LiveStep } from '../api';

/** One step's problem as the window shows it. */
export interface LiveProblem {
  step: LiveStep;
  problem: ErrorReport;
  /** How many times it was told since it began. */
  count: number;
  /** When it was first and last told (milliseconds since the epoch). */
  since: number;
  last: number;
  dismissed: boolean;
}

export type LiveProblems = Partial<Record<LiveStep, LiveProblem>>;

/** The same failure again: same kind and words (a count or a time in it would make it new). */
function same(a: ErrorReport, b: ErrorReport): boolean {
  return a.kind === b.kind && a.message === b.message && a.hint === b.hint;
}

/** `state` after the shell told `event` at `now`. */
export function told(state: LiveProblems, event: LiveCapture, now: number): LiveProblems {
  const { step, problem } = event;
  if (problem === null) {
    if (state[step] === undefined) return state;
    const rest = { ...state };
    delete rest[step];
    return rest;
  }
  const before = state[step];
  if (before && same(before.problem, problem)) {
    return { ...state, [step]: { ...before, count: before.count + 1, last: now } };
  }
  return { ...state, [step]: { step, problem, count: 1, since: now, last: now, dismissed: false } };
}

/** `state` with `step`'s problem dismissed (until a different one comes). */
export function dismissed(state: LiveProblems, step: LiveStep): LiveProblems {
  const before = state[step];
  return before ? { ...state, [step]: { ...before, dismissed: true } } : state;
}

/** The problems to show, the capture's first. */
export function shown(state: LiveProblems): LiveProblem[] {
  return (['capture', 'watch'] as const).flatMap((step) => {
    const p = state[step];
    return p && !p.dismissed ? [p] : [];
  });
}
