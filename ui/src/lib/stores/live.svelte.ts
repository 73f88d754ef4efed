// "The archive changed" from the shell (a sync, the watcher capturing a transcript an agent
// just wrote, or a background extraction pass that filled the Recall inbox). Open views watch
// `version` and reload. Also where a running extraction pass is (the status bar's progress bar
// and count of new entries) and how many entries the last passes added that nobody has looked
// at yet (the inbox tab's badge). And what live capture told of its failures
// (`live-problems.ts`), shown above the status bar until it goes well again.
import {
  onArchiveChanged,
  onExtractFinished,
  onExtractProgress,
  onLiveCapture,
  type ArchiveChanged,
  type ExtractFinished,
  type ExtractProgress,
  type LiveCapture,
  type LiveStep,
  type Subscribe,
} from '../api';
import { dismissed, shown, told, type LiveProblem, type LiveProblems } from './live-problems';

/** A running extraction pass, as its events tell it. */
export interface Extracting {
  /** Sessions the pass will read. */
  sessions: number;
  /** Sessions read to their end, or failed. */
  finished: number;
  /** Of each session being read: the share of its units done. */
  reading: Record<string, number>;
  /** Entries written so far. */
  entries: number;
}

/** How far a pass is, 0..1 (null before it knows how many sessions it reads). */
export function passFraction(pass: Extracting): number | null {
  if (pass.sessions === 0) return null;
  const partial = Object.values(pass.reading).reduce((sum, f) => sum + f, 0);
  return Math.min((pass.finished + partial) / pass.sessions, 1);
}

export class LiveStore {
  /** Bumped once per change. */
  version = $state(0);
  last: ArchiveChanged | null = $state(null);
  /** The last background extraction pass that ended. */
  lastExtract: ExtractFinished | null = $state(null);
  /** The pass running now, or null. */
  extracting: Extracting | null = $state(null);
  /** Entries added by passes since the inbox was last seen (the inbox tab's badge). */
  unseenEntries = $state(0);
  /** Live capture's problems, one per step, as told and coalesced. */
  problems: LiveProblems = $state({});
  /** The problems on screen (not dismissed), the capture's first. */
  readonly shownProblems: LiveProblem[] = $derived(shown(this.problems));
  #subscribe: Subscribe<ArchiveChanged>;
  #subscribeExtract: Subscribe<ExtractFinished>;
  #subscribeProgress: Subscribe<ExtractProgress>;
  #subscribeCapture: Subscribe<LiveCapture>;
  #started = false;

  constructor(
    subscribe: Subscribe<ArchiveChanged> = onArchiveChanged,
    subscribeExtract: Subscribe<ExtractFinished> = onExtractFinished,
    subscribeProgress: Subscribe<ExtractProgress> = onExtractProgress,
    subscribeCapture: Subscribe<LiveCapture> = onLiveCapture,
  ) {
    this.#subscribe = subscribe;
    this.#subscribeExtract = subscribeExtract;
    this.#subscribeProgress = subscribeProgress;
    this.#subscribeCapture = subscribeCapture;
  }

  async start(): Promise<void> {
    if (this.#started) return;
    this.#started = true;
    try {
      await this.#subscribe((change) => this.changed(change));
      await this.#subscribeExtract((pass) => this.extracted(pass));
      await this.#subscribeProgress((p) => this.progress(p));
      await this.#subscribeCapture((event) => this.captured(event));
    } catch {
      // No live updates: the views still load on demand.
      this.#started = false;
    }
  }

  changed(change: ArchiveChanged): void {
    this.last = change;
    this.version++;
  }

  /** Live capture told how a step went. */
  captured(event: LiveCapture, now: number = Date.now()): void {
    this.problems = told(this.problems, event, now);
  }

  /** A person dismissed `step`'s problem: hidden while the same failure repeats. */
  dismissProblem(step: LiveStep): void {
    this.problems = dismissed(this.problems, step);
  }

  /** One event of a running pass. */
  progress({ event }: ExtractProgress): void {
    const pass: Extracting = this.extracting ?? { sessions: 0, finished: 0, reading: {}, entries: 0 };
    switch (event.event) {
      case 'pass_started':
        this.extracting = { sessions: event.sessions, finished: 0, reading: {}, entries: 0 };
        return;
      case 'session_started':
        this.extracting = { ...pass, reading: { ...pass.reading, [event.session_key]: 0 } };
        return;
      case 'unit_done': {
        const share = event.units_total > 0 ? Math.min(event.unit / event.units_total, 1) : 0;
        this.extracting = { ...pass, reading: { ...pass.reading, [event.session_key]: share }, entries: pass.entries + event.entries };
        return;
      }
      case 'session_done':
      case 'session_failed': {
        const reading = { ...pass.reading };
        delete reading[event.session_key];
        this.extracting = { ...pass, reading, finished: pass.finished + 1 };
        return;
      }
      case 'aborted':
      case 'activated':
        return;
    }
  }

  extracted(pass: ExtractFinished): void {
    this.lastExtract = pass;
    this.extracting = null;
    this.unseenEntries += pass.report?.entries ?? 0;
    this.version++;
  }

  /** The inbox is on screen: its new entries have been seen. */
  seenInbox(): void {
    this.unseenEntries = 0;
  }
}

export const live = new LiveStore();
