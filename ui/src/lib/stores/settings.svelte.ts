// Settings: where transcripts are read from (editable), the capture hooks (status, preview,
// install), health checks (retention among them), reading the archive again, and the outbound
// privacy preview.
import {
  api,
  onSyncProgress,
  type Agent,
  type AgentProgram,
  type Api,
  type DoctorReport,
  type ExtractDoctor,
  type ExtractStatus,
  type HookInstall,
  type HooksOverview,
  type McpInstall,
  type McpStatus,
  type OutboundPreview,
  type ReindexReport,
  type SourceDirStatus,
  type Subscribe,
  type SyncProgress,
} from '../api';
import { Resource } from './resource.svelte';
import { agents } from '../format';

export type SettingsApi = Pick<
  Api,
  | 'sourceDirs'
  | 'setSourceDirs'
  | 'hookOverview'
  | 'installHook'
  | 'uninstallHook'
  | 'mcpOverview'
  | 'installMcp'
  | 'uninstallMcp'
  | 'doctor'
  | 'privacyPreview'
  | 'extractStatus'
  | 'extractDoctor'
  | 'reindexArchive'
  | 'agentPrograms'
  | 'setAgentProgram'
>;

/** The agents whose transcripts are read from folders: every one but ATIF, which only comes in
 * through `cairn import` and has no folder to set. */
export const AGENTS: Agent[] = agents.filter((agent) => agent !== 'atif');

export const PRIVACY_SAMPLE =
  'Deploy failed in /home/me/work/shop/src/pay.ts: token ghp_abcdefghijklmnopqrstuvwxyz0123456789 rejected; see https://ci.example.com/run/42';

/** One fresh value per agent Cairn reads. */
function perAgent<T>(make: () => T): Record<Agent, T> {
  return Object.fromEntries(AGENTS.map((agent) => [agent, make()])) as Record<Agent, T>;
}

export class SettingsStore {
  sources = new Resource<SourceDirStatus[]>();
  /** The folder list being edited, one path per line, per agent. */
  drafts: Record<Agent, string> = $state(perAgent(() => ''));
  saving: Record<Agent, Resource<SourceDirStatus[]>> = perAgent(() => new Resource());
  hooks = new Resource<HooksOverview>();
  /** Per agent: the dry run shown before installing (or removing), then the change itself. */
  hookPreview: Record<Agent, Resource<HookInstall>> = perAgent(() => new Resource());
  hookInstall: Record<Agent, Resource<HookInstall>> = perAgent(() => new Resource());
  /** Per agent: whether the preview shown is of taking the hooks out. */
  hookRemoving: Record<Agent, boolean> = $state(perAgent(() => false));
  /** Cairn's MCP server per agent; the dry run shown first, then the change itself. */
  mcp = new Resource<McpStatus[]>();
  mcpPreview: Record<Agent, Resource<McpInstall>> = perAgent(() => new Resource());
  mcpChange: Record<Agent, Resource<McpInstall>> = perAgent(() => new Resource());
  doctor = new Resource<DoctorReport>();
  privacyText = $state(PRIVACY_SAMPLE);
  privacy = new Resource<OutboundPreview>();
  /** Recall extraction: coverage, generations, the last pass; and the endpoint check. */
  extract = new Resource<ExtractStatus>();
  extractDoctor = new Resource<ExtractDoctor>();
  /** Reading the archive again from its retained copies: a dry run (what would change) or the
   * real one; `reindexDry` says which is running or was last. */
  reindexing = new Resource<ReindexReport>();
  reindexDry = $state(true);
  /** How far the running one has read (the sync's progress events). */
  reindexProgress: SyncProgress | null = $state(null);
  /** The agent CLIs reports and extraction can run, and which program each runs. */
  programs = new Resource<AgentProgram[]>();
  /** Per agent: the program being typed, and its save. */
  programDrafts: Record<string, string> = $state({});
  programSaving: Record<string, Resource<AgentProgram[]>> = {};
  #api: SettingsApi;
  #subscribe: Subscribe<SyncProgress>;
  #listening: Promise<unknown> | null = null;

  constructor(backend: SettingsApi = api, subscribe: Subscribe<SyncProgress> = onSyncProgress) {
    this.#api = backend;
    this.#subscribe = subscribe;
  }

  load(): Promise<unknown> {
    return Promise.all([
      this.loadSources(),
      this.hooks.load(() => this.#api.hookOverview()),
      this.mcp.load(() => this.#api.mcpOverview()),
      this.loadDoctor(),
      this.preview(),
      this.loadExtract(),
      this.loadPrograms(),
    ]);
  }

  async loadPrograms(): Promise<void> {
    await this.programs.load(() => this.#api.agentPrograms(), { keep: true });
    for (const p of this.programs.data ?? []) this.programDrafts[p.agent] = p.configured ?? '';
  }

  /** The save of `agent`'s program (made on first use: the agents come from the backend). */
  programSave(agent: string): Resource<AgentProgram[]> {
    return (this.programSaving[agent] ??= new Resource());
  }

  /** Name the program `agent` runs (empty: its name on PATH again); the shell writes
   * config.toml and opens the archive again, so the next report runs it. */
  async saveProgram(agent: string, binary = this.programDrafts[agent] ?? ''): Promise<boolean> {
    const save = this.programSave(agent);
    await save.load(() => this.#api.setAgentProgram(agent, binary.trim()));
    if (save.status !== 'ready') return false;
    this.programs.data = save.data;
    for (const p of save.data ?? []) this.programDrafts[p.agent] = p.configured ?? '';
    return true;
  }

  async loadSources(): Promise<void> {
    await this.sources.load(() => this.#api.sourceDirs(), { keep: true });
    this.#resetDrafts();
  }

  loadDoctor(): Promise<boolean> {
    return this.doctor.load(() => this.#api.doctor(), { keep: true });
  }

  loadExtract(): Promise<boolean> {
    return this.extract.load(() => this.#api.extractStatus(), { keep: true });
  }

  /** Probe the configured extraction server with real calls (slow: one tiny extraction). */
  checkEndpoint(): Promise<boolean> {
    return this.extractDoctor.load(() => this.#api.extractDoctor());
  }

  dirsOf(agent: Agent): SourceDirStatus[] {
    return (this.sources.data ?? []).filter((d) => d.agent === agent);
  }

  /** Has the person changed an agent's folder list? */
  edited(agent: Agent): boolean {
    return parseDirs(this.drafts[agent]).join('\n') !== this.dirsOf(agent).map((d) => d.path).join('\n');
  }

  /** Save an agent's folders (blank restores the default); the shell reopens the archive. */
  async saveDirs(agent: Agent): Promise<void> {
    const dirs = parseDirs(this.drafts[agent]);
    await this.saving[agent].load(() => this.#api.setSourceDirs(agent, dirs));
    if (this.saving[agent].status === 'ready') {
      this.sources.data = this.saving[agent].data;
      this.#resetDrafts();
      void this.loadDoctor();
    }
  }

  /** Put an agent's folder list back as it is saved (an edit given up). */
  discardDraft(agent: Agent): void {
    this.drafts[agent] = this.dirsOf(agent)
      .map((d) => d.path)
      .join('\n');
  }

  /** Use the default folders again. */
  resetDirs(agent: Agent): Promise<void> {
    this.drafts[agent] = '';
    return this.saveDirs(agent);
  }

  /** Show what installing (or, with `remove`, taking out) the hooks would change (a diff),
   * without writing. */
  previewHook(agent: Agent, remove = false): Promise<boolean> {
    this.hookInstall[agent].reset();
    this.hookRemoving[agent] = remove;
    return this.hookPreview[agent].load(() => (remove ? this.#api.uninstallHook(agent, true) : this.#api.installHook(agent, true)));
  }

  /** Make the change the preview showed. */
  async installHook(agent: Agent): Promise<void> {
    const remove = this.hookRemoving[agent];
    await this.hookInstall[agent].load(() => (remove ? this.#api.uninstallHook(agent, false) : this.#api.installHook(agent, false)));
    if (this.hookInstall[agent].status === 'ready') {
      this.hookPreview[agent].reset();
      await this.hooks.load(() => this.#api.hookOverview(), { keep: true });
    }
  }

  /** Show what adding (or, with `remove`, taking out) Cairn's MCP server would change. */
  previewMcp(agent: Agent, remove: boolean): Promise<boolean> {
    this.mcpChange[agent].reset();
    return this.mcpPreview[agent].load(() => (remove ? this.#api.uninstallMcp(agent, true) : this.#api.installMcp(agent, true)));
  }

  /** Make the change the preview showed. */
  async applyMcp(agent: Agent): Promise<void> {
    const remove = this.mcpPreview[agent].data?.removed ?? false;
    await this.mcpChange[agent].load(() => (remove ? this.#api.uninstallMcp(agent, false) : this.#api.installMcp(agent, false)));
    if (this.mcpChange[agent].status === 'ready') {
      this.mcpPreview[agent].reset();
      await this.mcp.load(() => this.#api.mcpOverview(), { keep: true });
    }
  }

  preview(): Promise<boolean> {
    const text = this.privacyText;
    return this.privacy.load(() => this.#api.privacyPreview(text), { keep: true });
  }

  /** Doctor's word that some sessions were read before their agent's transcripts last changed
   * (an older Cairn read them): the reason to read them again; null when none was. */
  get olderReads(): DoctorReport['checks'][number] | null {
    return this.doctor.data?.checks.find((c) => c.name === 'parsers' && c.status === 'warn') ?? null;
  }

  /** Read sessions again (`dry`: only say what would change): those doctor says an older Cairn
   * read, else every one. Does nothing while one runs. */
  async readAgain(dry: boolean): Promise<boolean> {
    if (this.reindexing.status === 'loading') return false;
    this.#listening ??= this.#subscribe((progress) => {
      if (this.reindexing.status === 'loading') this.reindexProgress = progress;
    }).catch(() => {
      // Without events the bar stays indeterminate; the reading itself still runs.
      this.#listening = null;
    });
    await this.#listening;
    this.reindexDry = dry;
    this.reindexProgress = null;
    const outdated = this.olderReads !== null;
    const kept = await this.reindexing.load(() => this.#api.reindexArchive({ session: null, agent: null, outdated, dry_run: dry }));
    // What doctor says of the archive (the parsers that read it) moved with it.
    if (kept && !dry && this.reindexing.status === 'ready') void this.loadDoctor();
    return kept;
  }

  /** Share of the retained copies read so far, 0–1; null before it is known. */
  get reindexFraction(): number | null {
    const p = this.reindexProgress;
    if (p === null || p.bytes_total === null || p.bytes_total <= 0) return null;
    return Math.min(1, (p.bytes_done ?? 0) / p.bytes_total);
  }

  #resetDrafts(): void {
    for (const agent of AGENTS) this.discardDraft(agent);
  }
}

/** One folder per line; blank lines dropped. */
export function parseDirs(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.length > 0);
}

/** How Settings labels a source dir: found, not there, or there but refused (never said as
 * missing: an unreadable folder hides every transcript in it). */
export function sourceLabel(dir: Pick<SourceDirStatus, 'exists' | 'unreadable'>): {
  state: 'found' | 'missing' | 'unreadable';
  label: string;
} {
  if (dir.unreadable) return { state: 'unreadable', label: dir.unreadable.denied ? 'not readable by you' : 'cannot be read' };
  return dir.exists ? { state: 'found', label: 'found' } : { state: 'missing', label: 'not found' };
}

export const settings = new SettingsStore();
