// Facts about the running app (data dir, version, the link it was started with), whether the
// archive is still empty (first run), what the live watcher covers, and the links a second launch
// of the app hands over (or why the shell refused one).
import {
  api,
  onLinkRefused,
  onOpenLink,
  type Api,
  type AppInfo,
  type LinkRefused,
  type LiveStatus,
  type OpenLink,
  type Subscribe,
  type UiMilestone,
} from '../api';
import { textOf } from '../errors';
import { Resource } from './resource.svelte';

export type AppApi = Pick<Api, 'appInfo' | 'appReady' | 'reopenArchive' | 'listSessions'>;

export class AppStore {
  info: AppInfo | null = $state(null);
  /** Does the archive hold any session? Decides whether the first-run page shows. */
  archive = new Resource<{ empty: boolean }>();
  live: LiveStatus | null = $state(null);
  liveError: string | null = $state(null);
  #api: AppApi;
  #subscribeLinks: Subscribe<OpenLink>;
  #subscribeRefusals: Subscribe<LinkRefused>;
  #readySent = false;
  #milestones: UiMilestone[] = [];

  constructor(
    backend: AppApi = api,
    subscribeLinks: Subscribe<OpenLink> = onOpenLink,
    subscribeRefusals: Subscribe<LinkRefused> = onLinkRefused,
  ) {
    this.#api = backend;
    this.#subscribeLinks = subscribeLinks;
    this.#subscribeRefusals = subscribeRefusals;
  }

  /** Call `open` with each link a second launch hands over (the shell checked it; the router
   * validates it), and `refused` with the sentence that says why the shell refused one.
   * Resolves to the function that stops listening. */
  async followLinks(open: (link: string) => void, refused: (message: string) => void): Promise<() => void> {
    const stops = await Promise.all([
      this.#subscribeLinks((event) => open(event.link)).catch(() => null),
      this.#subscribeRefusals((event) => refused(refusedLink(event.reason))).catch(() => null),
    ]);
    // Without a hand-over a second launch only raises the window. Stopping after the event
    // system went away (tests tear the IPC mock down) has nothing to stop.
    return () => {
      for (const stop of stops) {
        try {
          void Promise.resolve(stop?.() as unknown).catch(() => {});
        } catch {
          // Gone already.
        }
      }
    };
  }

  /** Why the link the app was started with was not opened, as the window says it; null when
   * there was none or it was opened. */
  get launchRefused(): string | null {
    const reason = this.info?.launch_refused;
    return reason ? refusedLink(reason) : null;
  }

  /** Null while unknown (loading, or the archive could not be read). */
  get empty(): boolean | null {
    return this.archive.data?.empty ?? null;
  }

  async load(): Promise<void> {
    await Promise.all([this.loadInfo(), this.checkArchive()]);
  }

  /** Something was listed, so the archive is not empty: no need to ask (keeps a cold start
   * from reading the session table just to decide against the first-run page). */
  noteNotEmpty(): void {
    if (this.archive.status !== 'ready') void this.archive.load(async () => ({ status: 'ok', data: { empty: false } }));
  }

  async loadInfo(): Promise<void> {
    try {
      this.info = await this.#api.appInfo();
    } catch {
      // The footer is informational; the views report real failures.
      this.info = null;
    }
  }

  /** Re-read whether the archive is empty (after a sync, on retry). */
  checkArchive(): Promise<boolean> {
    return this.archive.load(
      async () => {
        const outcome = await this.#api.listSessions({ limit: 1 });
        return outcome.status === 'ok' ? { status: 'ok', data: { empty: outcome.data.length === 0 } } : outcome;
      },
      { keep: true },
    );
  }

  /** Try again to open an archive that could not be opened (the shell keeps one that is open),
   * then re-read what the window knows of it; when it opens, the shell goes live as after
   * `ready`. True when the archive is open now; else `archive` holds why not. */
  async reopen(): Promise<boolean> {
    const outcome = await this.#api.reopenArchive();
    if (outcome.status === 'ok') {
      this.live = outcome.data;
      this.liveError = null;
    }
    await this.load();
    return outcome.status === 'ok';
  }

  /** Note a start-up moment, reported with `ready()` (for scripts/measure-startup.sh). */
  mark(name: string): void {
    this.#milestones.push({ name, at_ms: performance.timeOrigin + performance.now() });
  }

  /** The first screen is interactive: tell the shell (which starts watching the source dirs). */
  async ready(): Promise<void> {
    if (this.#readySent) return;
    this.#readySent = true;
    const outcome = await this.#api.appReady(this.#milestones);
    if (outcome.status === 'ok') this.live = outcome.data;
    else this.liveError = textOf(outcome.error);
  }
}

/** The window's sentence for a link the shell refused, from its reason ("it names no place in
 * Cairn"): what was wrong and what to do, never the link itself (it may hold anything). */
export function refusedLink(reason: string): string {
  return `A link from outside was not opened: ${reason}. Open the place from the tabs above, or copy its link from Cairn again.`;
}

export const app = new AppStore();
