// Generated insights in the window: the form (and the preview of the slice the next report will
// read, refreshed as the form changes), a generation and its phases, the saved reports (search,
// star, rename, delete), the open report and its exports.
import {
  api,
  onInsightProgress,
  type Agent,
  type Api,
  type Automation,
  type ExportFormat,
  type GenerateRequest,
  type Generated,
  type Insight,
  type InsightSummary,
  type Phase,
  type Preview,
  type Subscribe,
  type InsightProgress,
  type Template,
} from '../api';
import { textOf, type CommandError } from '../errors';
import { Resource } from './resource.svelte';

export const PREVIEW_DELAY_MS = 250;
const LIST_LIMIT = 200;

type InsightsApi = Pick<
  Api,
  | 'insightTemplates'
  | 'insightPreview'
  | 'insightGenerate'
  | 'insightList'
  | 'insightGet'
  | 'insightHtml'
  | 'insightStar'
  | 'insightRename'
  | 'insightDelete'
  | 'insightExport'
>;

export const PHASE_LABELS: Record<Phase, string> = {
  material: 'Reading the sessions…',
  cache_hit: 'A saved report answers this request',
  generating: 'The generator is writing…',
  saving: 'Saving the report…',
};

export class InsightsStore {
  // The form. Days are `YYYY-MM-DD` (the core reads a day as local, `until` inclusive).
  since = $state('');
  until = $state('');
  project = $state('');
  branch = $state('');
  /** With a branch: also the sessions that only ran on it (recorded it, or ran while it was
   * checked out), not only those linked to it by a commit, an edit or a person. */
  includeWeak = $state(false);
  agent: Agent | 'all' = $state('all');
  automation: Automation = $state('exclude');
  /** Include teammates' pulled sessions (their redacted text then goes to the generator). */
  teammates = $state(false);
  template = $state('weekly-summary');
  generator = $state('');
  focus = $state('');
  title = $state('');

  templates = new Resource<Template[]>();
  preview = new Resource<Preview>();
  generation = new Resource<Generated>();
  phase: Phase | null = $state(null);

  search = $state('');
  starredOnly = $state(false);
  list = new Resource<InsightSummary[]>();

  report = new Resource<Insight>();
  html = new Resource<string>();
  /** A short message about the last action (an export's file name, a failure). */
  toast: { text: string; error: boolean } | null = $state(null);

  #api: InsightsApi;
  #subscribe: Subscribe<InsightProgress>;
  #run = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(backend: InsightsApi = api, subscribe: Subscribe<InsightProgress> = onInsightProgress) {
    this.#api = backend;
    this.#subscribe = subscribe;
  }

  /** The request as the backend takes it: blank fields are left out. */
  get request(): GenerateRequest {
    const slice: GenerateRequest['slice'] = { automation: this.automation, teammates: this.teammates };
    if (this.since) slice.since = this.since;
    if (this.until) slice.until = this.until;
    if (this.project.trim()) slice.project = this.project.trim();
    if (this.branch.trim()) {
      slice.branch = this.branch.trim();
      slice.include_weak = this.includeWeak;
    }
    if (this.agent !== 'all') slice.agent = this.agent;
    const request: GenerateRequest = { slice, template: this.template, force: false };
    if (this.generator.trim()) request.generator = this.generator.trim();
    if (this.focus.trim()) request.focus = this.focus.trim();
    if (this.title.trim()) request.title = this.title.trim();
    return request;
  }

  async load(): Promise<void> {
    await Promise.all([
      this.templates.data ? Promise.resolve() : this.templates.load(() => this.#api.insightTemplates()),
      this.loadList(),
      this.loadPreview(),
    ]);
  }

  /** Refresh the preview after the form stops changing. */
  schedulePreview(): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => void this.loadPreview(), PREVIEW_DELAY_MS);
  }

  loadPreview(): Promise<boolean> {
    clearTimeout(this.#timer);
    const request = this.request;
    return this.preview.load(() => this.#api.insightPreview(request), { keep: true });
  }

  loadList(): Promise<boolean> {
    const search = this.search.trim() || null;
    return this.list.load(() => this.#api.insightList(search, this.starredOnly, LIST_LIMIT), { keep: true });
  }

  /** Generate (or reuse) a report; opens it when done. `force` makes a new one even if one is saved. */
  async generate(force = false): Promise<Insight | null> {
    const run = ++this.#run;
    const request = { ...this.request, force };
    this.phase = null;
    let stop: (() => void) | null = null;
    try {
      stop = await this.#subscribe((progress) => {
        if (progress.run === run) this.phase = progress.phase;
      });
    } catch {
      // Progress is a nicety; the generation goes on without it.
    }
    try {
      await this.generation.load(() => this.#api.insightGenerate(run, request));
    } finally {
      stop?.();
    }
    if (run !== this.#run) return null;
    this.phase = null;
    const generated = this.generation.data;
    if (!generated) return null;
    this.say(generated.cached ? `Opened the saved report #${generated.insight.id}` : `Report #${generated.insight.id} saved`);
    await Promise.all([this.loadList(), this.loadPreview()]);
    await this.open(generated.insight.id);
    return generated.insight;
  }

  get generating(): boolean {
    return this.generation.status === 'loading';
  }

  /** Open a saved report: its record and its rendered HTML. */
  async open(id: number): Promise<boolean> {
    if (this.report.data?.id !== id) {
      this.report.reset();
      this.html.reset();
    }
    const [found] = await Promise.all([
      this.report.load(() => this.#api.insightGet(id), { keep: true }),
      this.html.load(() => this.#api.insightHtml(id), { keep: true }),
    ]);
    return found && this.report.status === 'ready';
  }

  close(): void {
    this.report.reset();
    this.html.reset();
  }

  async #act(action: () => Promise<{ status: 'ok' } | { status: 'error'; error: CommandError }>, done?: string): Promise<boolean> {
    try {
      const outcome = await action();
      if (outcome.status === 'error') {
        this.say(textOf(outcome.error), true);
        return false;
      }
      if (done) this.say(done);
      return true;
    } catch (error) {
      this.say(textOf(error), true);
      return false;
    }
  }

  async star(id: number, starred: boolean): Promise<void> {
    if (await this.#act(() => this.#api.insightStar(id, starred))) {
      await Promise.all([this.loadList(), this.report.data?.id === id ? this.report.retry() : Promise.resolve()]);
    }
  }

  async rename(id: number, title: string): Promise<void> {
    const name = title.trim();
    if (!name) return;
    if (await this.#act(() => this.#api.insightRename(id, name), 'Renamed')) {
      await Promise.all([this.loadList(), this.report.data?.id === id ? this.report.retry() : Promise.resolve()]);
    }
  }

  async remove(id: number): Promise<void> {
    if (await this.#act(() => this.#api.insightDelete(id), `Deleted report #${id}`)) {
      if (this.report.data?.id === id) this.close();
      await Promise.all([this.loadList(), this.loadPreview()]);
    }
  }

  /** Write the open report to the Downloads folder; the toast names the file. */
  async export(id: number, format: ExportFormat): Promise<string | null> {
    let written: string | null = null;
    await this.#act(async () => {
      const outcome = await this.#api.insightExport(id, format);
      if (outcome.status === 'ok') {
        written = outcome.data.path;
        this.say(`Saved ${outcome.data.file_name} (${outcome.data.path})`);
      }
      return outcome;
    });
    return written;
  }

  say(text: string, error = false): void {
    this.toast = { text, error };
  }
}

export const insights = new InsightsStore();
