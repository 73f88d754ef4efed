// The Branches page: repositories with their branches (a flat list of rows, repository
// headers included), which branch is selected, and which pane the keyboard drives.
import { api, type Api, type Branch, type Repo } from '../api';
import { Resource } from './resource.svelte';
import type { AgentFilter } from './agents.svelte';

export type BranchRow = { type: 'repo'; repo: Repo } | { type: 'branch'; repo: Repo; branch: Branch };

/** The project a skim of `repo`'s branch passes: none for a repository (its root says where),
 * else its group's project, empty for the group of sessions of no project either (a skim
 * with neither a root nor a project would read every repository's). */
export function groupProject(repo: Repo): string | null {
  return repo.root !== null ? null : (repo.project ?? '');
}

export class BranchesStore {
  repos = new Resource<Repo[]>();
  /** Index of the selected branch row, -1 for none. */
  selected = $state(-1);
  /** Where j/k go: the branch list, or the open branch's timeline. */
  pane: 'list' | 'timeline' = $state('list');
  /** Only branches this agent's sessions worked on ('all': every agent's). */
  agent: AgentFilter = $state('all');
  #api: Pick<Api, 'listBranches'>;
  #inflight: Promise<void> | null = null;
  /** The branch last selected, kept while the agent filter hides it from the list, so it is
   * selected again when the filter lets it back. */
  #pinned: { root: string | null; project: string | null; key: string } | null = null;

  constructor(backend: Pick<Api, 'listBranches'> = api) {
    this.#api = backend;
  }

  rows: BranchRow[] = $derived.by(() => {
    const out: BranchRow[] = [];
    for (const repo of this.repos.data ?? []) {
      out.push({ type: 'repo', repo });
      for (const branch of repo.branches) out.push({ type: 'branch', repo, branch });
    }
    return out;
  });

  get selectedRow(): Extract<BranchRow, { type: 'branch' }> | null {
    const row = this.rows[this.selected];
    return row?.type === 'branch' ? row : null;
  }

  /** Number of branches across repositories. */
  get branchCount(): number {
    return this.rows.filter((r) => r.type === 'branch').length;
  }

  /** Load (or reload, keeping the list on screen) and keep the selection by repo and branch.
   * A load asked for while one is in flight joins it (the start-up prefetch, then the view). */
  load(): Promise<void> {
    this.#inflight ??= this.#load().finally(() => (this.#inflight = null));
    return this.#inflight;
  }

  /** Load again even if a load is in flight (the archive changed since it started). */
  reload(): Promise<void> {
    this.#inflight = this.#load().finally(() => (this.#inflight = null));
    return this.#inflight;
  }

  async #load(): Promise<void> {
    const kept = await this.repos.load(() => this.#api.listBranches(this.agent === 'all' ? null : this.agent), { keep: true });
    if (!kept) return;
    const previous = this.#pinned;
    this.selected = previous
      ? this.rows.findIndex(
          (r) =>
            r.type === 'branch' &&
            r.repo.root === previous.root &&
            groupProject(r.repo) === previous.project &&
            r.branch.key === previous.key,
        )
      : -1;
  }

  /** Does the agent filter hide the branch `key` of repository `repo` (`null`: any repository
   * with it, or the group of `project`) from the list? False while nothing is filtered or the
   * list is not loaded. */
  hides(key: string, repo: string | null, project: string | null = null): boolean {
    if (this.agent === 'all' || !this.repos.data) return false;
    return this.#find(key, repo, project) < 0;
  }

  /** The row of branch `key` in repository `repo`; without one, in the group of `project` (sessions
   * in no repository), else in any group; -1 when none. */
  #find(key: string, repo: string | null, project: string | null): number {
    return this.rows.findIndex(
      (r) =>
        r.type === 'branch' &&
        r.branch.key === key &&
        (repo !== null ? r.repo.root === repo : project === null || (r.repo.root === null && groupProject(r.repo) === project)),
    );
  }

  #pin(): void {
    const row = this.selectedRow;
    if (row) this.#pinned = { root: row.repo.root, project: groupProject(row.repo), key: row.branch.key };
  }

  /** Count only one agent's sessions ('all' for every agent) and reload. */
  setAgent(agent: AgentFilter): Promise<void> {
    if (agent === this.agent) return Promise.resolve();
    this.agent = agent;
    return this.reload();
  }

  /** Select the branch row `index` (repository headers are skipped in the direction of travel). */
  select(index: number, direction = 1): void {
    const rows = this.rows;
    let i = Math.min(Math.max(index, 0), rows.length - 1);
    while (i >= 0 && i < rows.length && rows[i]!.type !== 'branch') i += direction;
    if (i >= 0 && i < rows.length) {
      this.selected = i;
      this.#pin();
    }
  }

  /** Select the row showing the branch `key` of repository `repo` (a link, a restored place);
   * without a repository, of the group of `project`, else the first row with that branch. */
  selectKey(key: string, repo: string | null = null, project: string | null = null): void {
    const index = this.#find(key, repo, project);
    if (index >= 0) {
      this.selected = index;
      this.#pin();
    }
  }

  move(delta: number): void {
    if (this.rows.length === 0) return;
    if (this.selected < 0) this.select(delta > 0 ? 0 : this.rows.length - 1, delta > 0 ? 1 : -1);
    else this.select(this.selected + delta, delta > 0 ? 1 : -1);
  }
}

export const branches = new BranchesStore();
