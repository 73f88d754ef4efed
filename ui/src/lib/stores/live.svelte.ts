// "The archive changed" from the shell (a sync, or the watcher capturing a transcript an agent
// just wrote). Open views watch `version` and reload.
import { onArchiveChanged, type ArchiveChanged, type Subscribe } from '../api';

export class LiveStore {
  /** Bumped once per change. */
  version = $state(0);
  last: ArchiveChanged | null = $state(null);
  #subscribe: Subscribe<ArchiveChanged>;
  #started = false;

  constructor(subscribe: Subscribe<ArchiveChanged> = onArchiveChanged) {
    this.#subscribe = subscribe;
  }

  async start(): Promise<void> {
    if (this.#started) return;
    this.#started = true;
    try {
      await this.#subscribe((change) => this.changed(change));
    } catch {
      // No live updates: the views still load on demand.
      this.#started = false;
    }
  }

  changed(change: ArchiveChanged): void {
    this.last = change;
    this.version++;
  }
}

export const live = new LiveStore();
