// The team archive (PostgreSQL) in the window: Settings → Team (the form Cairn writes into
// config.toml, "Test connection", the last push, Push now) and the Team view, which reads the
// team archive read-only as a second archive: search it, skim a branch or PR across everyone,
// open a teammate's session. The password is never in the window: the form names the variable
// that holds it.
import { api, type Api, type TeamCheck, type TeamConfig, type TeamPushReport, type TeamSearchHit, type TeamShow, type TeamSkim, type TeamStatus } from '../api';
import { Resource } from './resource.svelte';

export type TeamApi = Pick<Api, 'teamStatus' | 'teamSave' | 'teamTest' | 'teamPush' | 'teamSearch' | 'teamSkim' | 'teamShow'>;

export function blankTeam(): TeamConfig {
  return { host: '', port: null, database: '', user: '', password_env: '' };
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

/** What is missing or wrong before the form can be tested or saved; null when nothing is. */
export function teamGap(c: TeamConfig): string | null {
  if (!c.host.trim()) return 'Type the database server’s host (a name, an address, or a socket directory).';
  if (!c.database.trim()) return 'Name the database the team shares.';
  if (!c.user.trim()) return 'Name your database user (your rows are owned by it).';
  if (c.port !== null && (!Number.isInteger(c.port) || c.port < 1 || c.port > 65535)) return 'The port is a number from 1 to 65535.';
  if (c.password_env.trim() && !ENV_NAME.test(c.password_env.trim())) {
    return 'The password variable is the name of an environment variable (letters, digits, _), never the password.';
  }
  return null;
}

/** The address as messages show it: never a password. */
export function teamAddress(c: TeamConfig): string {
  const port = c.port === null ? '' : `:${c.port}`;
  return `postgres://${c.user.trim()}@${c.host.trim()}${port}/${c.database.trim()}`;
}

/** A port typed in the form: a whole number, or null when empty (5432) or not a number. */
export function portOf(text: string): number | null {
  const t = text.trim();
  return /^[0-9]{1,5}$/.test(t) ? Number(t) : null;
}

/** A team search snippet (PostgreSQL's headline, matches between `**`) as text parts; built
 * from text only, never parsed as HTML. */
export function starred(snippet: string): { text: string; match: boolean }[] {
  return snippet
    .split('**')
    .map((text, i) => ({ text, match: i % 2 === 1 }))
    .filter((p) => p.text !== '');
}

export class TeamStore {
  status = new Resource<TeamStatus>();
  /** The form, as edited. */
  draft: TeamConfig = $state(blankTeam());
  saved = new Resource<TeamConfig>();
  test = new Resource<TeamCheck>();
  push = new Resource<TeamPushReport>();

  /** The Team view. */
  query = $state('');
  target = $state('');
  tab: 'search' | 'skim' = $state('search');
  hits = new Resource<TeamSearchHit[]>();
  skim = new Resource<TeamSkim>();
  /** The teammate's session open in the view, if any. */
  open = new Resource<TeamShow>();
  #api: TeamApi;

  constructor(backend: TeamApi = api) {
    this.#api = backend;
  }

  async load(): Promise<void> {
    await this.status.load(() => this.#api.teamStatus(), { keep: true });
    if (this.status.data) this.draft = { ...this.status.data.setup };
  }

  /** Is a team archive set up (saved)? */
  get configured(): boolean {
    const s = this.status.data;
    return s !== null && (s.env_url_set || s.setup.host.trim() !== '');
  }

  /** Has the form changed since it was loaded or saved? */
  get edited(): boolean {
    const s = this.status.data?.setup ?? blankTeam();
    const d = this.draft;
    return (
      s.host !== d.host.trim() ||
      s.port !== d.port ||
      s.database !== d.database.trim() ||
      s.user !== d.user.trim() ||
      s.password_env !== d.password_env.trim()
    );
  }

  async runTest(): Promise<void> {
    await this.test.load(() => this.#api.teamTest({ ...this.draft }));
  }

  async save(): Promise<boolean> {
    const kept = await this.saved.load(() => this.#api.teamSave({ ...this.draft }));
    if (kept && this.saved.status === 'ready') {
      await this.load();
      return true;
    }
    return false;
  }

  async pushNow(): Promise<void> {
    await this.push.load(() => this.#api.teamPush());
    void this.status.load(() => this.#api.teamStatus(), { keep: true });
  }

  async search(): Promise<void> {
    const q = this.query.trim();
    if (!q) {
      this.hits.reset();
      return;
    }
    this.tab = 'search';
    await this.hits.load(() => this.#api.teamSearch(q, 100), { keep: true });
  }

  async runSkim(): Promise<void> {
    const t = this.target.trim();
    if (!t) {
      this.skim.reset();
      return;
    }
    this.tab = 'skim';
    await this.skim.load(() => this.#api.teamSkim(t), { keep: true });
  }

  /** Open a teammate's session (read-only) by its whole key and publisher. */
  async show(sessionKey: string, publisher: string): Promise<void> {
    await this.open.load(() => this.#api.teamShow(sessionKey, publisher));
  }

  close(): void {
    this.open.reset();
  }
}

export const team = new TeamStore();
