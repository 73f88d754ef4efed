// "The archive changed" from the shell (a sync, the watcher capturing a transcript an agent
// just wrote, or a background extraction pass that filled the Recall inbox). Open views watch
// `version` and reload.
import { onArchiveChanged, onExtractFinished, type ArchiveChanged, type ExtractFinished, type Subscribe } from '../api';

export class LiveStore {
  /** Bumped once per change. */
  version = $state(0);
  last: ArchiveChanged | null = $state(null);
  /** The last background extraction pass that ended. */
  lastExtract: ExtractFinished | null = $state(null);
  #subscribe: Subscribe<ArchiveChanged>;
  #subscribeExtract: Subscribe<ExtractFinished>;
  #started = false;

  constructor(
    subscribe: Subscribe<ArchiveChanged> = onArchiveChanged,
    subscribeExtract: Subscribe<ExtractFinished> = onExtractFinished,
  ) {
    this.#subscribe = subscribe;
    this.#subscribeExtract = subscribeExtract;
  }

  async start(): Promise<void> {
    if (this.#started) return;
    this.#started = true;
    try {
      await this.#subscribe((change) => this.changed(change));
      await this.#subscribeExtract((pass) => this.extracted(pass));
    } catch {
      // No live updates: the views still load on demand.
      this.#started = false;
    }
  }

  changed(change: ArchiveChanged): void {
    this.last = change;
    this.version++;
  }

  extracted(pass: ExtractFinished): void {
    this.lastExtract = pass;
    this.version++;
  }
}

export const live = new LiveStore();
