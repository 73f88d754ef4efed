// The archive sync: idle, running (with progress from the shell's typed events), done or
// failed, and run again on demand.
import { api, onSyncProgress, type Api, type Subscribe, type SyncProgress, type SyncReport } from '../api';
import { problemOf, type Problem } from '../errors';

export type SyncStatus = 'idle' | 'running' | 'done' | 'error';

export class SyncStore {
  status: SyncStatus = $state('idle');
  progress: SyncProgress | null = $state(null);
  report: SyncReport | null = $state.raw(null);
  /** Why the last sync failed: its message and, when the backend gave one, a hint. */
  problem: Problem | null = $state(null);
  #api: Pick<Api, 'syncArchive'>;
  #subscribe: Subscribe<SyncProgress>;
  #listening: Promise<unknown> | null = null;

  constructor(backend: Pick<Api, 'syncArchive'> = api, subscribe: Subscribe<SyncProgress> = onSyncProgress) {
    this.#api = backend;
    this.#subscribe = subscribe;
  }

  /** Share of the bytes read so far, 0–1; null before the sync knows how much there is. */
  get fraction(): number | null {
    const p = this.progress;
    if (p === null || p.bytes_total === null || p.bytes_total <= 0) return null;
    return Math.min(1, (p.bytes_done ?? 0) / p.bytes_total);
  }

  /** The failure's message (`problem` has its hint too). */
  get error(): string | null {
    return this.problem?.message ?? null;
  }

  get running(): boolean {
    return this.status === 'running';
  }

  /** Forget a failure: what it said no longer holds (the archive it could not write was just
   * opened again). A report or a running sync is kept. */
  forget(): void {
    if (this.status !== 'error') return;
    this.status = this.report === null ? 'idle' : 'done';
    this.problem = null;
  }

  /** Import what is new. Does nothing while a sync runs; resolves to the report or null. */
  async run(): Promise<SyncReport | null> {
    if (this.status === 'running') return null;
    this.#listening ??= this.#subscribe((progress) => {
      if (this.status === 'running') this.progress = progress;
    }).catch(() => {
      // Without events the bar stays indeterminate; the sync itself still runs.
      this.#listening = null;
    });
    await this.#listening;
    this.status = 'running';
    this.progress = null;
    this.problem = null;
    try {
      const outcome = await this.#api.syncArchive();
      if (outcome.status === 'ok') {
        this.report = outcome.data;
        this.status = 'done';
        return outcome.data;
      }
      this.problem = problemOf(outcome.error);
    } catch (error) {
      this.problem = problemOf(error);
    }
    this.status = 'error';
    return null;
  }
}

export const sync = new SyncStore();
