// Full-text search over the archive: the query and its filters, the hits, and the selection.
// Typing searches after a short pause; Enter searches at once.
import { api, type Agent, type Api, type Entry, type RecallFilters, type SearchAnswer, type SearchHit, type SearchQuery, type WhyAnswer } from '../api';
import type { WhyFrom } from '../links';
import { dayStart } from '../format';
import { Resource } from './resource.svelte';

export const SEARCH_DELAY_MS = 200;
const LIMIT = 200;

export class SearchStore {
  text = $state('');
  agent: Agent | 'all' = $state('all');
  project = $state('');
  branch = $state('');
  /** `YYYY-MM-DD`, or empty for no bound. */
  since = $state('');
  until = $state('');
  results = new Resource<SearchAnswer>();
  /** `archive`: full text over transcripts; `recall`: a ranked query over Recall entries; `why`:
   * the sessions behind a commit, a file's lines or a description. */
  mode: SearchMode = $state('archive');
  recallResults = new Resource<Entry[]>();
  /** Where a Why question is traced (see [`WhyFrom`]); the repository picker sets `repo`. */
  whyFrom: WhyFrom = $state({ repo: null, session: null });
  whyResults = new Resource<WhyAnswer>();
  selected = $state(-1);
  /** The words the transcripts' answer on screen was asked with (the box may hold newer ones). */
  answered = $state('');
  /** Bumped to ask the search box to take the keyboard focus (`/`). */
  focusToken = $state(0);
  /** Whether the last such ask is not yet answered (the view may mount after it). */
  focusAsked = false;
  #api: SearchBackend;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(backend: SearchBackend = api) {
    this.#api = backend;
  }

  /** The query as the backend takes it: blank filters are left out. */
  get query(): SearchQuery {
    const query: SearchQuery = { text: this.text.trim(), limit: LIMIT };
    if (this.agent !== 'all') query.agent = this.agent;
    if (this.project.trim()) query.project = this.project.trim();
    if (this.branch.trim()) query.branch = this.branch.trim();
    // Days on the clock hits are shown on; "to" includes its whole day.
    if (this.since) query.since = dayStart(this.since);
    if (this.until) query.until = dayStart(this.until, true);
    return query;
  }

  get hits(): SearchHit[] {
    return this.results.data?.hits ?? [];
  }

  /** The answer on screen was searched by meaning as well as words (the turns' vectors are
   * built), which the backend decides. */
  get byMeaning(): boolean {
    const mode = this.results.data?.mode;
    return mode !== undefined && mode !== 'lexical';
  }

  /** Turns captured since the vectors were last built: found by words only until the catch-up
   * embeds them (a search, or Why from a description). */
  get vectorsPending(): number {
    const answer = this.mode === 'why' ? this.whyResults.data : this.mode === 'archive' ? this.results.data : null;
    return answer?.vectors_pending ?? 0;
  }

  /** Search after the person stops typing. */
  schedule(): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => void this.run(), SEARCH_DELAY_MS);
  }

  /** Search now. A blank query clears the results. */
  async run(): Promise<void> {
    clearTimeout(this.#timer);
    const query = this.query;
    if (this.mode === 'recall') {
      await this.#runRecall(query);
      return;
    }
    if (this.mode === 'why') {
      await this.#runWhy(query.text);
      return;
    }
    if (query.text === '') {
      this.results.reset();
      this.selected = -1;
      return;
    }
    const kept = await this.results.load(() => this.#api.searchArchive(query), { keep: true });
    if (kept) {
      this.answered = query.text;
      this.selected = this.hits.length > 0 ? 0 : -1;
    }
  }

  /** Rows of an earlier question's answer are on screen while the newer one is asked: the view
   * marks them as out of date rather than blanking them or passing them off as current. (An
   * empty earlier answer is not kept: the view says it is searching instead.) */
  get stale(): boolean {
    if (this.mode === 'why') return this.whyResults.status === 'loading' && this.whySessions.length > 0;
    if (this.mode === 'recall') return this.recallResults.status === 'loading' && (this.recallResults.data ?? []).length > 0;
    return this.results.status === 'loading' && this.hits.length > 0;
  }

  /** Recall mode: the words as a ranked query over every accepted entry (trusted or not), with
   * the repository and agent filters; hits are entries. */
  async #runRecall(query: SearchQuery): Promise<void> {
    const recallQuery = this.#api.recallQuery;
    if (query.text === '' || !recallQuery) {
      this.recallResults.reset();
      return;
    }
    const filters: RecallFilters = { trusted_only: false, limit: 100 };
    if (query.project) filters.project = query.project;
    if (query.agent) filters.agent = query.agent;
    await this.recallResults.load(
      async () => {
        const outcome = await recallQuery({ text: query.text, mode: 'lexical', filters, context: false });
        return outcome.status === 'ok' ? { status: 'ok', data: outcome.data.results.map((r) => r.entry) } : outcome;
      },
      { keep: true },
    );
  }

  /** Why mode: the target (a commit, `path:line`, words) traced where `from` says. */
  async #runWhy(target: string): Promise<void> {
    const why = this.#api.why;
    if (target === '' || !why) {
      this.whyResults.reset();
      return;
    }
    const { repo, session } = this.whyFrom;
    const place = repo !== null
      ? ({ type: 'repo', root: repo } as const)
      : session !== null
        ? ({ type: 'session', session_key: session } as const)
        : ({ type: 'nowhere' } as const);
    const kept = await this.whyResults.load(() => why(target, place), { keep: true });
    if (kept) this.selected = this.whySessions.length > 0 ? 0 : -1;
  }

  /** Where Enter leads in Why mode: the selected session at its most confident turn. */
  get selectedWhy(): { sessionKey: string; ordinal: number | null } | null {
    const s = this.whySessions[this.selected];
    return s ? { sessionKey: s.session_key, ordinal: s.turns[0]?.ordinal ?? null } : null;
  }

  /** Ask Why about `target` (from the branch timeline, a session's file, or a link). */
  ask(target: string, from: WhyFrom): void {
    this.text = target;
    this.whyFrom = from;
    this.mode = 'why';
    void this.run();
  }

  /** The sessions of the Why answer on screen (none outside Why mode). */
  get whySessions(): WhyAnswer['sessions'] {
    return this.mode === 'why' ? (this.whyResults.data?.sessions ?? []) : [];
  }

  setMode(mode: SearchMode): void {
    if (mode === this.mode) return;
    this.mode = mode;
    void this.run();
  }

  focus(): void {
    this.focusAsked = true;
    this.focusToken++;
  }

  /** Rows of the list on screen: hits, or Why's sessions. */
  get #rows(): number {
    return this.mode === 'why' ? this.whySessions.length : this.hits.length;
  }

  select(index: number): void {
    const rows = this.#rows;
    this.selected = rows === 0 ? -1 : Math.min(Math.max(index, 0), rows - 1);
  }

  move(delta: number): void {
    if (this.#rows === 0) return;
    this.select(this.selected < 0 ? 0 : this.selected + delta);
  }

  get selectedHit(): SearchHit | null {
    return this.hits[this.selected] ?? null;
  }
}

export type SearchMode = 'archive' | 'recall' | 'why';
type SearchBackend = Pick<Api, 'searchArchive'> & Partial<Pick<Api, 'recallQuery' | 'why'>>;

export const search = new SearchStore();
