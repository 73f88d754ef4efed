// One async value and its state: idle, loading, ready or error. Every store that fetches uses
// it, so every view can show the same four states and offer the same retry.
import type { Outcome } from '../api';
import { problemOf, type Problem } from '../errors';

export type LoadStatus = 'idle' | 'loading' | 'ready' | 'error';

export class Resource<T> {
  status: LoadStatus = $state('idle');
  /** The last value loaded. Kept while a reload runs, so a refresh does not blank the view.
   * `raw`: values are replaced, never mutated, and deep proxies over big timelines cost. */
  data: T | null = $state.raw(null);
  /** Why the last load failed: its message and, when the backend gave one, a hint. */
  problem: Problem | null = $state(null);

  /** Bumped per load, so a slow answer to an older request cannot overwrite a newer one. */
  #generation = 0;
  #last: (() => Promise<Outcome<T>>) | null = null;

  /** Run `fetch` and keep its answer. Resolves to true when this load's answer was kept. */
  async load(fetch: () => Promise<Outcome<T>>, options: { keep?: boolean } = {}): Promise<boolean> {
    const generation = ++this.#generation;
    this.#last = fetch;
    this.status = 'loading';
    this.problem = null;
    if (!options.keep) this.data = null;
    let outcome: Outcome<T>;
    try {
      outcome = await fetch();
    } catch (error) {
      outcome = { status: 'error', error: problemOf(error) };
    }
    if (generation !== this.#generation) return false;
    if (outcome.status === 'ok') {
      this.data = outcome.data;
      this.status = 'ready';
    } else {
      this.problem = problemOf(outcome.error);
      this.status = 'error';
    }
    return true;
  }

  /** The failure's message (`problem` has its hint too). */
  get error(): string | null {
    return this.problem?.message ?? null;
  }

  /** Run the last fetch again (the Retry button, a refresh after the archive changed). */
  retry(options: { keep?: boolean } = { keep: true }): Promise<boolean> {
    return this.#last ? this.load(this.#last, options) : Promise.resolve(false);
  }

  /** Forget a failure, keeping the value: what it said no longer holds (the person acted again
   * elsewhere, and an old message beside a new one reads as two failures). */
  dismiss(): void {
    if (this.status !== 'error') return;
    this.problem = null;
    this.status = this.data === null ? 'idle' : 'ready';
  }

  /** Forget the value and any load in flight. */
  reset(): void {
    this.#generation++;
    this.#last = null;
    this.status = 'idle';
    this.data = null;
    this.problem = null;
  }
}
