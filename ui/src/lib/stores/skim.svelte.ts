// A branch's skim timeline: sessions in order with their turns, flattened into rows for the
// virtual list; sessions that only ran on the branch sit in a collapsed group at the end.
import { api, type Api, type CorrectionAction, type PullReport, type SkimSession, type SkimTurn, type SkimView } from '../api';
import { problemOf } from '../errors';
import { count } from '../format';
import { Resource } from './resource.svelte';
import type { AgentFilter } from './agents.svelte';

export type SkimRow =
  | { type: 'session'; session: SkimSession }
  | { type: 'turn'; session: SkimSession; turn: SkimTurn }
  | { type: 'weak-group'; count: number; open: boolean };

export class SkimStore {
  /** The branch target key (`ref:refs/heads/<name>`) on screen. */
  target: string | null = $state(null);
  /** The repository the branch belongs to (its root); `null` = every repository with the branch,
   * or with `project` the sessions of that project that ran in no repository. */
  repo: string | null = $state(null);
  project: string | null = $state(null);
  view = new Resource<SkimView>();
  /** Only this agent's sessions ('all': every agent's). */
  agent: AgentFilter = $state('all');
  /** Is the "Also ran on this branch" group open? */
  weakOpen = $state(false);
  selected = $state(-1);
  /** What the last "belongs here" / "not related" did, or why it failed. */
  corrected: { text: string; error: boolean } | null = $state(null);
  /** A pull of teammates' sessions is running in this repository. */
  pulling = $state(false);
  /** What the last pull brought, or why it failed. */
  pulled: { text: string; error: boolean } | null = $state(null);
  #api: Pick<Api, 'skimBranch' | 'correctLink' | 'pullTeammates'>;

  constructor(backend: Pick<Api, 'skimBranch' | 'correctLink' | 'pullTeammates'> = api) {
    this.#api = backend;
  }

  rows: SkimRow[] = $derived.by(() => {
    const sessions = this.view.data?.sessions ?? [];
    const out: SkimRow[] = [];
    const push = (session: SkimSession) => {
      out.push({ type: 'session', session });
      for (const turn of session.turns) out.push({ type: 'turn', session, turn });
    };
    const weak = sessions.filter((s) => s.weak);
    for (const s of sessions) if (!s.weak) push(s);
    if (weak.length > 0) {
      out.push({ type: 'weak-group', count: weak.length, open: this.weakOpen });
      if (this.weakOpen) weak.forEach(push);
    }
    return out;
  });

  get strongCount(): number {
    return (this.view.data?.sessions ?? []).filter((s) => !s.weak).length;
  }

  /** Show `target`'s timeline in `repo`, or of `project`'s sessions in no repository (weak
   * sessions are fetched too, for the collapsed group). */
  async load(target: string, repo: string | null = null, project: string | null = null): Promise<void> {
    if (repo !== null) project = null;
    if (target !== this.target || repo !== this.repo || project !== this.project) {
      this.target = target;
      this.repo = repo;
      this.project = project;
      this.weakOpen = false;
      this.selected = -1;
      this.corrected = null;
      this.pulled = null;
      this.view.reset();
    }
    await this.view.load(() => this.#api.skimBranch(target, true, repo, project, this.agent === 'all' ? null : this.agent), { keep: true });
    if (this.selected >= this.rows.length) this.selected = this.rows.length - 1;
    if (this.selected < 0 && this.rows.length > 0) this.selected = 0;
  }

  /** Show only one agent's sessions ('all' for every agent), reloading what is on screen. */
  setAgent(agent: AgentFilter): Promise<void> {
    if (agent === this.agent) return Promise.resolve();
    this.agent = agent;
    this.selected = -1;
    return this.refresh();
  }

  refresh(): Promise<void> {
    return this.target === null ? Promise.resolve() : this.load(this.target, this.repo, this.project);
  }

  clear(): void {
    this.target = null;
    this.repo = null;
    this.project = null;
    this.selected = -1;
    this.view.reset();
  }

  /** A person's word on a session of this branch: `link` ("belongs here") or `unlink` ("not
   * related"). The core keeps it across every sync; the timeline reloads. */
  async correct(sessionKey: string, action: CorrectionAction): Promise<void> {
    const target = this.target;
    if (target === null) return;
    const outcome = await this.#api.correctLink(sessionKey, { kind: 'branch', key: target, pr_number: null }, action, null);
    if (this.target !== target) return;
    this.corrected =
      outcome.status === 'ok'
        ? {
            text:
              action === 'link'
                ? 'Linked to this branch by you; syncs keep it.'
                : 'Marked not related; syncs will not link it here again.',
            error: false,
          }
        : { text: problemOf(outcome.error).message, error: true };
    await this.refresh();
  }

  /** Pull what teammates published on the repository's `origin` (`cairn pull`), then reload:
   * their sessions show on the timeline marked with who published them. */
  async pull(): Promise<void> {
    const repo = this.repo;
    if (repo === null || this.pulling) return;
    this.pulling = true;
    try {
      const outcome = await this.#api.pullTeammates(repo, null);
      if (this.repo !== repo) return;
      this.pulled = outcome.status === 'ok' ? { text: pulledText(outcome.data), error: false } : { text: problemOf(outcome.error).message, error: true };
    } finally {
      this.pulling = false;
    }
    await this.refresh();
  }

  toggleWeak(): void {
    this.weakOpen = !this.weakOpen;
  }

  select(index: number): void {
    this.selected = this.rows.length === 0 ? -1 : Math.min(Math.max(index, 0), this.rows.length - 1);
  }

  move(delta: number): void {
    if (this.rows.length === 0) return;
    this.select(this.selected < 0 ? (delta > 0 ? 0 : this.rows.length - 1) : this.selected + delta);
  }

  get selectedRow(): SkimRow | null {
    return this.rows[this.selected] ?? null;
  }
}

/** A pull's outcome in one line: what arrived, what was already here, what was refused. */
export function pulledText(r: PullReport): string {
  const skipped = r.skipped.length + r.skipped_more;
  const parts = [
    r.sessions_imported === 0 && r.transcripts_imported === 0
      ? `Nothing new from ${r.remote}`
      : `Pulled ${count(r.sessions_imported, 'published session')} from ${r.remote} (${r.transcripts_imported} in full)`,
  ];
  if (r.unchanged > 0) parts.push(`${r.unchanged} unchanged`);
  if (r.forgotten > 0) parts.push(`${count(r.forgotten, 'session')} you forgot here left out`);
  if (r.withdrawn > 0) parts.push(`${count(r.withdrawn, 'session')} their publishers withdrew dropped`);
  if (skipped > 0) parts.push(`${count(skipped, 'ref')} refused: ${r.skipped[0]?.reason ?? ''}`);
  return `${parts.join(' · ')}.`;
}

export const skim = new SkimStore();
