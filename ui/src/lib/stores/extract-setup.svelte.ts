// Settings → Recall extraction as a form: what is at hand (detected, nothing sent), the setup
// being edited, one tiny test request, the preview of a pass, save (Cairn writes config.toml and
// applies it at once), start and stop.
import { api, type Api, type DetectedGenerator, type ExtractDoctor, type ExtractPreview, type ExtractSetup } from '../api';
import { Resource } from './resource.svelte';

export type ExtractSetupApi = Pick<
  Api,
  'extractDetect' | 'extractSetup' | 'extractTest' | 'extractPreview' | 'extractSave' | 'extractStart' | 'extractStop'
>;

export const AGENT_GENERATORS = ['claude', 'codex', 'gemini', 'copilot'] as const;

export const SCHEDULES: { value: ExtractSetup['schedule']; label: string }[] = [
  { value: 'after_sync', label: 'After each sync' },
  { value: 'nightly', label: 'Nightly (around 03:00)' },
  { value: 'manual', label: 'Only when I press Run' },
];

export function blankSetup(): ExtractSetup {
  return {
    enabled: false,
    generator: 'endpoint',
    endpoint: '',
    model: '',
    api_key_env: '',
    schedule: 'after_sync',
    input_price_per_mtok: null,
    output_price_per_mtok: null,
    allow_http: false,
  };
}

/** Is `endpoint` plain http:// to a host that is not this machine (not `localhost`, a
 * `127.x.x.x` address or `::1`)? Such a server is saved only with plain HTTP allowed, as the core
 * and both setup commands' `--allow-http` say (transcript text would cross the network
 * unencrypted). False for what does not parse: Test and Save say why. */
export function plainHttpOffMachine(endpoint: string): boolean {
  let url: URL;
  try {
    // Read once and dropped: nothing reacts to it.
    // eslint-disable-next-line svelte/prefer-svelte-reactivity
    url = new URL(endpoint.trim());
  } catch {
    return false;
  }
  if (url.protocol !== 'http:') return false;
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const loopback = host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
  return !loopback;
}

/** `base` with the detected generator `g` picked: the core says what `g` stands for
 * (`g.setup`: generator, endpoint, model, key variable and plain HTTP allowed, set whole); the
 * schedule, prices and switch stay. */
export function withPicked(g: DetectedGenerator, base: ExtractSetup): ExtractSetup {
  return { ...base, ...g.setup };
}

/** Does `setup` use the detected generator `g`? */
export function uses(setup: ExtractSetup, g: DetectedGenerator): boolean {
  if (g.kind === 'agent') return setup.generator === g.name;
  return setup.generator === 'endpoint' && setup.endpoint === (g.endpoint ?? '') && (g.kind === 'server' || setup.api_key_env === g.api_key_env);
}

/** An environment variable's name, as a shell writes one. */
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** What is missing or plainly wrong before the form can be tested or saved; null when nothing
 * is. Only what can be told from the form alone: the core checks the rest on Test and Save. */
export function missing(setup: ExtractSetup): string | null {
  if (setup.generator !== 'endpoint') return null;
  const endpoint = setup.endpoint.trim();
  if (!endpoint) return 'Type the server’s OpenAI-compatible base URL (e.g. http://127.0.0.1:11434/v1), or pick a generator above.';
  if (!/^https?:\/\/\S+$/.test(endpoint)) return 'The endpoint is a URL starting with http:// or https://, without spaces.';
  if (!setup.model.trim()) return 'Name the model to ask (the server’s list shows what it offers).';
  if (plainHttpOffMachine(endpoint) && !setup.allow_http) {
    return 'This is plain HTTP to another machine, so session text would cross the network unencrypted: use https://, or tick “Allow plain HTTP” if that network is yours.';
  }
  const variable = setup.api_key_env.trim();
  if (variable && !VARIABLE_NAME.test(variable)) {
    return 'The API key variable is the name of an environment variable (such as OPENAI_API_KEY), never the key itself.';
  }
  return null;
}

/** A duration in words: "about 3 min". */
export function roughly(seconds: number): string {
  if (seconds < 60) return `about ${Math.max(1, Math.round(seconds))} s`;
  if (seconds < 3600) return `about ${Math.round(seconds / 60)} min`;
  return `about ${(seconds / 3600).toFixed(1)} h`;
}

/** How long a pass would take: at the last pass's pace, else at the test's pace (one unit per
 * test time, `concurrency` at once); null when neither is known. */
export function passSeconds(preview: ExtractPreview, testMs: number | null): number | null {
  if (preview.estimated_seconds !== null) return preview.estimated_seconds;
  if (testMs === null || preview.units === 0) return null;
  return (preview.units * testMs) / 1000 / Math.max(1, preview.concurrency);
}

export class ExtractSetupStore {
  detected = new Resource<DetectedGenerator[]>();
  saved = new Resource<ExtractSetup>();
  /** The form, as edited. */
  draft: ExtractSetup = $state(blankSetup());
  test = new Resource<ExtractDoctor>();
  preview = new Resource<ExtractPreview>();
  action = new Resource<null>();
  /** The form as it was when Save refused it: Start waits until it is changed. */
  #refused: string | null = $state(null);
  #api: ExtractSetupApi;

  constructor(backend: ExtractSetupApi = api) {
    this.#api = backend;
  }

  async load(): Promise<void> {
    // The answer can come seconds after the form opened (the backend may be busy): what the
    // person typed meanwhile stays; an untouched form takes the saved setup.
    const shown = JSON.stringify(this.saved.data ?? blankSetup());
    await Promise.all([
      this.detect(),
      this.saved.load(() => this.#api.extractSetup(), { keep: true }).then(() => {
        if (this.saved.data && JSON.stringify(this.draft) === shown) this.draft = { ...this.saved.data };
      }),
      this.preview.load(() => this.#api.extractPreview(), { keep: true }),
    ]);
  }

  /** Only the saved setup (cheap: no detection; the form's draft untouched), for offers
   * outside Settings. */
  async loadSaved(): Promise<void> {
    await this.saved.load(() => this.#api.extractSetup(), { keep: true });
  }

  /** Nothing chosen yet: no agent CLI, no model, off. */
  get unconfigured(): boolean {
    const s = this.saved.data;
    return s !== null && !s.enabled && s.generator === 'endpoint' && s.model.trim() === '';
  }

  detect(): Promise<boolean> {
    return this.detected.load(() => this.#api.extractDetect(), { keep: true });
  }

  pick(g: DetectedGenerator): void {
    this.draft = withPicked(g, this.draft);
    this.test.reset();
  }

  /** Has the form changed since the last save? */
  get edited(): boolean {
    return JSON.stringify(this.draft) !== JSON.stringify(this.saved.data ?? blankSetup());
  }

  /** Did Save refuse the form as it is now? Then starting would only be refused again. */
  get refused(): boolean {
    return this.#refused !== null && this.#refused === JSON.stringify(this.draft);
  }

  /** The form as the last Test saw it. */
  #tested: string | null = null;

  /** Does the last Test's answer (or failure) speak of the form as it is now? Edited since, it
   * speaks of a form no longer there. */
  get testCurrent(): boolean {
    return this.#tested !== null && this.#tested === JSON.stringify(this.draft);
  }

  /** One tiny request through the form as it is (nothing saved). */
  runTest(): Promise<boolean> {
    const setup = { ...this.draft };
    this.#tested = JSON.stringify(setup);
    // The earlier Save's or Start's failure was about the form before this test.
    this.saved.dismiss();
    this.action.dismiss();
    return this.test.load(() => this.#api.extractTest(setup));
  }

  /** Write config.toml and apply it; `enabled` overrides the form's switch (Start, Turn off). */
  async save(enabled: boolean = this.draft.enabled): Promise<boolean> {
    const setup = { ...this.draft, enabled };
    const form = JSON.stringify(this.draft);
    // An earlier test's or pass's failure is about the form before this save.
    this.test.dismiss();
    this.action.dismiss();
    await this.saved.load(() => this.#api.extractSave(setup), { keep: true });
    this.#refused = this.saved.status === 'error' ? form : null;
    if (this.saved.status !== 'ready' || !this.saved.data) return false;
    this.draft = { ...this.saved.data };
    await this.preview.load(() => this.#api.extractPreview(), { keep: true });
    return true;
  }

  /** Save with extraction on, then run a pass now. */
  async start(): Promise<void> {
    if (await this.save(true)) await this.action.load(() => this.#api.extractStart());
  }

  /** Stop the running pass (what it wrote stays). */
  stop(): Promise<boolean> {
    return this.action.load(() => this.#api.extractStop());
  }
}

export const extractSetup = new ExtractSetupStore();
