// The session list's state: what is loaded, the agent filter, the selection and the load status.
// Components read it and call its methods; they never call the backend themselves.
import { backend, type Session, type SessionsBackend } from '../api';
import { problemOf, type Problem } from '../errors';
import type { AgentFilter } from './agents.svelte';

export type LoadStatus = 'idle' | 'loading' | 'ready' | 'error';
export type { AgentFilter };

export class SessionsStore {
  status: LoadStatus = $state('idle');
  /** Newest first, as the backend sends them. `raw`: rows are replaced, never mutated, and a
   * deep proxy over 100k rows would cost more than the list itself. */
  sessions: Session[] = $state.raw([]);
  /** Why the last load failed: its message and, when the backend gave one, a hint. */
  problem: Problem | null = $state(null);
  agent: AgentFilter = $state('all');
  /** Index into `sessions`, or -1 when nothing is selected. */
  selected = $state(-1);

  readonly #backend: SessionsBackend;
  /** Bumped per load, so a slow answer to an older filter cannot overwrite a newer one. */
  #generation = 0;

  constructor(api: SessionsBackend = backend) {
    this.#backend = api;
  }

  /** The failure's message (`problem` has its hint too). */
  get error(): string | null {
    return this.problem?.message ?? null;
  }

  get selectedSession(): Session | null {
    return this.sessions[this.selected] ?? null;
  }

  /** Fetch the list for the current filter. Safe to call again at any time (retry, refresh). */
  async load(): Promise<void> {
    const generation = ++this.#generation;
    const previousKey = this.selectedSession?.session_key ?? null;
    this.status = 'loading';
    this.problem = null;

    let outcome;
    try {
      outcome = await this.#backend.listSessions(this.agent === 'all' ? {} : { agent: this.agent });
    } catch (error) {
      outcome = { status: 'error' as const, error: problemOf(error) };
    }
    if (generation !== this.#generation) return;

    if (outcome.status === 'ok') {
      this.sessions = outcome.data;
      // Keep the same session selected across a refresh when it is still listed.
      const kept = previousKey === null ? -1 : outcome.data.findIndex((s) => s.session_key === previousKey);
      this.selected = kept >= 0 ? kept : outcome.data.length > 0 ? 0 : -1;
      this.status = 'ready';
    } else {
      this.problem = problemOf(outcome.error);
      this.status = 'error';
    }
  }

  /** Show only one agent's sessions ('all' for every agent) and reload. */
  setAgent(agent: AgentFilter): Promise<void> {
    if (agent === this.agent && this.status !== 'error') return Promise.resolve();
    this.agent = agent;
    return this.load();
  }

  /** Select the row `index`, clamped to the list. */
  select(index: number): void {
    this.selected = this.sessions.length === 0 ? -1 : Math.min(Math.max(index, 0), this.sessions.length - 1);
  }

  /** Move the selection by `delta` rows (j/k, arrow keys). */
  move(delta: number): void {
    if (this.sessions.length === 0) return;
    if (this.selected < 0) this.select(delta > 0 ? 0 : this.sessions.length - 1);
    else this.select(this.selected + delta);
  }
}

/** The window's one session list. */
export const sessions = new SessionsStore();
