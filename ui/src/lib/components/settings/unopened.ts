// Settings over an archive that did not open: the page says why once (Data and retention's
// check of the archive), and each panel that needs the archive says it waits for it instead of
// repeating the same error. SettingsView provides what failed; `PanelError` reads it.
import { getContext, setContext } from 'svelte';
import type { Problem } from '../../errors';

const KEY = Symbol('archive-unopened');

/** Why the archive did not open, or null when it is open. A getter, read when a panel renders. */
export type Unopened = () => Problem | null;

export function provideUnopened(unopened: Unopened): void {
  setContext(KEY, unopened);
}

/** The page's getter (call it where it is read, so what it reads is tracked); one that says
 * "open" outside Settings. */
export function unopenedGetter(): Unopened {
  return getContext<Unopened | undefined>(KEY) ?? (() => null);
}

/** Whether `problem` is the archive's own failure to open (a panel's load that failed only
 * because there is no archive to ask). */
export function sameProblem(problem: Problem | null, unopened: Problem | null): boolean {
  return problem !== null && unopened !== null && problem.message === unopened.message && problem.kind === unopened.kind;
}
