// Full-text search over the archive: the query and its filters, the hits, and the selection.
// Typing searches after a short pause; Enter searches at once.
import { api, type Agent, type Api, type SearchHit, type SearchQuery } from '../api';
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
  selected = $state(-1);
  /** Bumped to ask the search box to take the keyboard focus (`/`). */
  focusToken = $state(0);
  #api: Pick<Api, 'searchArchive'>;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(backend: Pick<Api, 'searchArchive'> = api) {
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
    if (query.text === '') {
      this.results.reset();
      this.selected = -1;
      return;
    }
    const kept = await this.results.load(() => this.#api.searchArchive(query), { keep: true });
    if (kept) this.selected = this.hits.length > 0 ? 0 : -1;
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
