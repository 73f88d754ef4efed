// Full-text search over the archive: the query and its filters, the hits, and the selection.
// Typing searches after a short pause; Enter searches at once.
import { api, type Agent, type Api, type Entry, type RecallFilters, type SearchHit, type SearchQuery } from '../api';
import { nextDay } from '../format';
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
  results = new Resource<SearchHit[]>();
  /** `archive`: full text over transcripts; `recall`: a ranked query over Recall entries. */
  mode: 'archive' | 'recall' = $state('archive');
  recallResults = new Resource<Entry[]>();
  selected = $state(-1);
  /** Bumped to ask the search box to take the keyboard focus (`/`). */
  focusToken = $state(0);
  #api: Pick<Api, 'searchArchive'> & Partial<Pick<Api, 'recallQuery'>>;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(backend: Pick<Api, 'searchArchive'> & Partial<Pick<Api, 'recallQuery'>> = api) {
    this.#api = backend;
  }

  /** The query as the backend takes it: blank filters are left out. */
  get query(): SearchQuery {
    const query: SearchQuery = { text: this.text.trim(), limit: LIMIT };
    if (this.agent !== 'all') query.agent = this.agent;
    if (this.project.trim()) query.project = this.project.trim();
    if (this.branch.trim()) query.branch = this.branch.trim();
    if (this.since) query.since = this.since;
    // `until` is inclusive for a person picking a day: search up to the start of the next day.
    if (this.until) query.until = nextDay(this.until);
    return query;
  }

  get hits(): SearchHit[] {
    return this.results.data ?? [];
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
    if (query.text === '') {
      this.results.reset();
      this.selected = -1;
      return;
    }
    const kept = await this.results.load(() => this.#api.searchArchive(query), { keep: true });
    if (kept) this.selected = this.hits.length > 0 ? 0 : -1;
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

  setMode(mode: 'archive' | 'recall'): void {
    if (mode === this.mode) return;
    this.mode = mode;
    void this.run();
  }

  focus(): void {
    this.focusToken++;
  }

  select(index: number): void {
    this.selected = this.hits.length === 0 ? -1 : Math.min(Math.max(index, 0), this.hits.length - 1);
  }

  move(delta: number): void {
    if (this.hits.length === 0) return;
    this.select(this.selected < 0 ? 0 : this.selected + delta);
  }

  get selectedHit(): SearchHit | null {
    return this.hits[this.selected] ?? null;
  }
}

export const search = new SearchStore();
