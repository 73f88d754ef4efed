// Settings → Search by meaning: whether the built-in model runs here, how many turns have their
// vector and how many wait, and the build a person starts (it runs in the background, committed
// in chunks, so the window keeps working and a stopped build resumes). While one runs, its
// `meaning-progress` events say how far it is, and the rate observed since it started gives an
// estimate of the time left; `meaning-finished` ends it and the status is read again. A build can
// also start without this store (after a sync, once a person built the vectors): the events tell
// it the same way.
import {
  api,
  onMeaningFinished,
  onMeaningProgress,
  type Api,
  type MeaningFinished,
  type MeaningProgress,
  type MeaningStatus,
  type Outcome,
  type Subscribe,
} from '../api';
import { count } from '../format';
import { Resource } from './resource.svelte';

export type MeaningApi = Pick<Api, 'meaningStatus' | 'meaningBuild'>;

/** Turns the built-in model embeds per second on two cores, for the estimate before a build. */
export const TURNS_PER_SECOND = 15;

/** Less data than this (and fewer than two measured events) gives no estimate of the time left. */
const MIN_SAMPLE_MS = 5000;

/** A duration in words for an estimate: "less than a minute", "about 14 minutes", "about 1.5
 * hours" (to the half hour). `about` is the word before it ("roughly" before a build). */
export function roughTime(seconds: number, about = 'about'): string {
  if (seconds < 60) return 'less than a minute';
  const minutes = Math.round(seconds / 60);
  if (minutes < 90) return `${about} ${count(minutes, 'minute')}`;
  return `${about} ${Math.round(seconds / 1800) / 2} hours`;
}

/** How long embedding `turns` turns takes at the expected pace, in seconds. */
export function buildSeconds(turns: number): number {
  return turns / TURNS_PER_SECOND;
}

export class MeaningStore {
  status = new Resource<MeaningStatus>();
  /** The last "Compute vectors": the status it returned, or why it was refused (the model is
   * missing: where it was looked for and how to install it). */
  request = new Resource<MeaningStatus>();
  /** Where the running build is (null when none runs, or before its first chunk). */
  progress: MeaningProgress | null = $state(null);
  /** The time the running build still needs, in seconds, at the rate observed since it started
   * (null until there is enough to measure). */
  secondsLeft: number | null = $state(null);

  #api: MeaningApi;
  #subscribeProgress: Subscribe<MeaningProgress>;
  #subscribeFinished: Subscribe<MeaningFinished>;
  #now: () => number;
  /** Where the rate is measured from: the build's start (or the first event seen) and the turns
   * done then. */
  #since: { at: number; done: number } | null = null;
  /** Events measured against `#since`. */
  #samples = 0;
  /** When the last progress event came. */
  #lastAt = 0;
  /** Builds that ended since this store started listening: what shows the results of a
   * search by meaning anew (the turns it found by words alone may have their vectors now). */
  ended = $state(0);
  #listening: Promise<void> | null = null;
  #stops: (() => void)[] = [];
  /** Bumped by `dispose`, so a subscription that resolves after it is undone at once. */
  #generation = 0;

  constructor(
    backend: MeaningApi = api,
    subscribeProgress: Subscribe<MeaningProgress> = onMeaningProgress,
    subscribeFinished: Subscribe<MeaningFinished> = onMeaningFinished,
    now: () => number = () => Date.now(),
  ) {
    this.#api = backend;
    this.#subscribeProgress = subscribeProgress;
    this.#subscribeFinished = subscribeFinished;
    this.#now = now;
  }

  /** Listen to the build's events (once; `dispose` stops). Without events the status still
   * loads on demand. */
  listen(): Promise<void> {
    if (this.#listening) return this.#listening;
    const generation = this.#generation;
    this.#listening = (async () => {
      const subscribed = await Promise.allSettled([
        this.#subscribeProgress((p) => this.progressed(p)),
        this.#subscribeFinished(() => this.finished()),
      ]);
      const stops = subscribed.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
      if (generation !== this.#generation || stops.length < subscribed.length) {
        stop(stops);
        // Disposed meanwhile, or half subscribed: the next load tries again.
        if (generation === this.#generation) this.#listening = null;
        return;
      }
      this.#stops = stops;
    })();
    return this.#listening;
  }

  /** Stop listening (the window closes). */
  dispose(): void {
    this.#generation++;
    this.#listening = null;
    stop(this.#stops);
    this.#stops = [];
  }

  /** Read the status (Settings opened, the archive changed). */
  async load(): Promise<void> {
    await this.listen();
    await this.status.load(() => this.#api.meaningStatus(), { keep: true });
    // No build runs: what an event missed (the window was busy, a listener failed) is over.
    if (this.status.data && !this.status.data.building && this.request.status !== 'loading') this.#reset();
  }

  /** A build runs: the backend says so, an event came, or "Compute vectors" is on its way. */
  get building(): boolean {
    return this.status.data?.building === true || this.progress !== null || this.request.status === 'loading';
  }

  /** "Compute vectors": start a build of every turn that lacks its vector. Resolves to true when
   * the backend took it. */
  async build(): Promise<boolean> {
    if (this.building) return false;
    await this.listen();
    const finished = this.ended;
    // Measured from now: the first chunk's event comes after a whole chunk.
    this.#since = { at: this.#now(), done: 0 };
    this.#samples = 0;
    const kept = await this.request.load(() => this.#api.meaningBuild());
    const started = this.request.data;
    if (!kept || this.request.status !== 'ready' || !started) {
      if (this.progress === null) this.#reset();
      // Refused (the model went missing since the status was read): the status says so too.
      if (kept) await this.status.load(() => this.#api.meaningStatus(), { keep: true });
      return false;
    }
    // A build so short it ended before its answer came: the status it returned is stale.
    if (this.ended !== finished) await this.status.load(() => this.#api.meaningStatus(), { keep: true });
    else await this.status.load(() => Promise.resolve<Outcome<MeaningStatus>>({ status: 'ok', data: started }), { keep: true });
    return true;
  }

  /** One `meaning-progress` event. */
  progressed(p: MeaningProgress): void {
    const now = this.#now();
    const last = this.progress;
    let measured = true;
    if (last !== null && (p.total !== last.total || p.done < last.done)) {
      // Another round of the same build (turns captured meanwhile): it began after the last event.
      this.#since = { at: this.#lastAt, done: 0 };
      this.#samples = 0;
    } else if (this.#since === null) {
      // A build this store did not start (after a sync): measured from the first event seen.
      this.#since = { at: now, done: p.done };
      this.#samples = 0;
      measured = false;
    }
    if (measured) this.#samples++;
    this.#lastAt = now;
    this.progress = { done: Math.min(p.done, p.total), total: p.total };
    this.secondsLeft = this.#estimate(p, now);
  }

  /** One `meaning-finished` event: the build ended (its error, if any, is the status'
   * `last_error` until the next build starts). */
  finished(): void {
    this.ended++;
    this.#reset();
    void this.status.load(() => this.#api.meaningStatus(), { keep: true });
  }

  #estimate(p: MeaningProgress, now: number): number | null {
    const since = this.#since;
    if (since === null) return null;
    const elapsed = now - since.at;
    const gained = p.done - since.done;
    if (elapsed <= 0 || gained <= 0) return null;
    if (this.#samples < 2 && elapsed < MIN_SAMPLE_MS) return null;
    const perSecond = (gained / elapsed) * 1000;
    return Math.max(0, p.total - p.done) / perSecond;
  }

  #reset(): void {
    this.progress = null;
    this.secondsLeft = null;
    this.#since = null;
    this.#samples = 0;
  }
}

/** Undo subscriptions; one that fails (the event system already went away) has nothing to stop. */
function stop(stops: (() => void)[]): void {
  for (const s of stops) void Promise.resolve().then(s).catch(() => {});
}

export const meaning = new MeaningStore();
