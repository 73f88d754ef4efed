// The team archive (PostgreSQL) in the window: Settings → Team (the form Cairn writes into
// config.toml, "Test connection", the last push, Push now) and the Team view, which reads the
// team archive read-only as a second archive: search it, skim a branch or PR across everyone,
// open a teammate's session. The password is never kept in the window: the form names the
// variable that holds it, or "Remember in the keyring" hands one typed password to the OS keyring
// (the field is cleared whatever the answer, and nothing sends it back). An administrator's
// corner of Settings → Team sets the archive up (`cairn team init`) and adds or takes out a
// teammate (`cairn team grant` / `revoke`), as the saved server's user.
import {
  api,
  onTeamPushProgress,
  type Api,
  type Subscribe,
  type TeamCheck,
  type TeamConfig,
  type TeamInit,
  type TeamMembership,
  type TeamPushProgress,
  type TeamPushReport,
  type TeamRemembered,
  type TeamSearchHit,
  type TeamShow,
  type TeamSkim,
  type TeamStatus,
} from '../api';
import { Resource } from './resource.svelte';

/** Sessions in a page of the team skim: what the desktop's command asks for (the server's
 * `team::read::MAX_LIMIT`). */
export const MAX_SKIM = 500;

export type TeamApi = Pick<
  Api,
  | 'teamStatus'
  | 'teamSave'
  | 'teamTest'
  | 'teamPush'
  | 'teamRemember'
  | 'teamForget'
  | 'teamInit'
  | 'teamGrant'
  | 'teamRevoke'
  | 'teamSearch'
  | 'teamSkim'
  | 'teamShow'
>;

/** The SQL that clears a refused administrator's command (`team_init`, `team_grant`,
 * `team_revoke`): the core sends it as the error's own `sql` field (`AdminError`), whole, so
 * nothing here reads the hint's wording. Null when the error carries none. */
export function adminSql(error: unknown): string | null {
  if (typeof error !== 'object' || error === null) return null;
  const sql = (error as { sql?: unknown }).sql;
  return typeof sql === 'string' && sql.trim() !== '' ? sql : null;
}

/** What a set-up did, in one sentence. */
export function initSummary(r: TeamInit): string {
  const made = r.created ? 'Created' : 'Checked';
  const role = r.team_role_created ? `made the team's role ${r.team_role} now` : `the team is role ${r.team_role}`;
  return `${made} the team archive (schema version ${r.version}), owned by ${r.owner}; ${role}: only its members, the owner and superusers may connect, read and push.`;
}

/** What a grant or revoke did, in one sentence, and what stays after a revoke. Whether the role
 * may connect is what the server answered (`may_connect`), as `cairn team grant` and `revoke` say
 * it: the team's role may have lost CONNECT on the database since the set-up granted it, and a
 * grant or a PUBLIC's CONNECT may outlast a revoke. */
export function membershipSummary(m: TeamMembership, granted: boolean): string {
  if (granted) {
    if (!m.may_connect) {
      const head = m.changed ? `Added ${m.role} to the team, but` : `${m.role} is already in the team: nothing changed, but`;
      return `${head} they may not connect to the team's database yet: CONNECT on it is not granted to ${m.team_role}. The database's owner sets the archive up again (cairn team init), which grants it.`;
    }
    return m.changed ? `Added ${m.role} to the team: they may now connect, read everyone's records and push their own.` : `${m.role} is already in the team: nothing changed.`;
  }
  const head = m.changed ? `Took ${m.role} out of the team.` : `${m.role} was not a member: nothing changed.`;
  const still = m.member
    ? m.through.length
      ? ` They are still in the team through ${m.through.join(', ')}.`
      : ' They still read the archive (a superuser needs no grant).'
    : !m.changed
      ? ''
      : m.may_connect
        ? ' They can no longer read or push, but may still connect to its database (CONNECT granted to them or to PUBLIC).'
        : ' They can no longer connect, read or push.';
  if (m.sessions_pushed === 0 && m.entries_pushed === 0) return `${head}${still} They pushed nothing to the team archive.`;
  const kept =
    m.sessions_pushed === null || m.entries_pushed === null
      ? ' What they pushed stays in the team archive'
      : ` Their ${m.sessions_pushed} pushed session${m.sessions_pushed === 1 ? '' : 's'} and ${m.entries_pushed} Recall entr${m.entries_pushed === 1 ? 'y' : 'ies'} stay in the team archive`;
  return `${head}${still}${kept} for the team to read, unless a superuser deletes them; their own archive and what they pulled stay on their machine.`;
}

/** Where "Test connection" found the password, in words. */
export function passwordFrom(p: TeamCheck['password_from']): string {
  switch (p.from) {
    case 'url':
      return 'the connection string in CAIRN_TEAM_URL';
    case 'variable':
      return `the variable ${p.name}`;
    case 'keyring':
      return 'the OS keyring';
    case 'none':
      return 'nowhere (the server asked for none)';
  }
}

/** A push's progress as the bar shows it: a fraction from 0 to 1, and the words beside it. */
export function pushShare(p: TeamPushProgress | null): { value: number; text: string } | null {
  if (!p) return null;
  if (p.total === 0) return { value: 1, text: 'Nothing to send' };
  const done = Math.min(p.done, p.total);
  return { value: done / p.total, text: `${done} of ${p.total} session${p.total === 1 ? '' : 's'}` };
}

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

/** What a team skim in one repository says when it read every repository's instead; nothing when
 * it read what was asked. */
export function unscopedNote(scope: TeamSkim['repo_scope']): string | null {
  switch (scope) {
    case 'server_keeps_none':
      return "Every repository's sessions: the team archive keeps no session's repository yet (the next push by its schema's owner adds it).";
    case 'unnamed':
      return "Every repository's sessions: this repository is a shallow clone or has no commit, so it has no name to keep to (git fetch --unshallow gives it one).";
    default:
      return null;
  }
}

/** Does the form `d` say other than the saved setup `s` (spaces around a value aside)? */
function differs(s: TeamConfig, d: TeamConfig): boolean {
  return (
    s.host !== d.host.trim() ||
    s.port !== d.port ||
    s.database !== d.database.trim() ||
    s.user !== d.user.trim() ||
    s.password_env !== d.password_env.trim()
  );
}

export class TeamStore {
  status = new Resource<TeamStatus>();
  /** The form, as edited. */
  draft: TeamConfig = $state(blankTeam());
  saved = new Resource<TeamConfig>();
  test = new Resource<TeamCheck>();
  push = new Resource<TeamPushReport>();
  /** Where the running push is (null when none runs). */
  pushProgress: TeamPushProgress | null = $state(null);
  remember = new Resource<TeamRemembered>();
  forget = new Resource<boolean>();
  /** The administrator's set-up (`cairn team init`) and membership changes. */
  init = new Resource<TeamInit>();
  membership = new Resource<TeamMembership>();
  /** The SQL that clears the shown refusal of the set-up, or of a grant or revoke (`adminSql`). */
  initSql: string | null = $state(null);
  memberSql: string | null = $state(null);
  /** Whether the membership shown was a grant (else a revoke). */
  granted = $state(true);
  /** The role typed to add or take out. */
  memberRole = $state('');

  /** The Team view. */
  query = $state('');
  target = $state('');
  tab: 'search' | 'skim' = $state('search');
  hits = new Resource<TeamSearchHit[]>();
  skim = new Resource<TeamSkim>();
  /** How many of the most recent sessions the skim shown passes over (0: the newest page). */
  skimSkip = $state(0);
  /** The target the skim shown was asked for (paging keeps it while the box is edited). */
  #skimmed = '';
  /** Skim only the sessions pushed from this repository's clones (a root of the branch list)
   * and those with none known; null: every repository's (a PR number is shared by all). */
  repo: string | null = $state(null);
  /** The teammate's session open in the view, if any. */
  open = new Resource<TeamShow>();
  #api: TeamApi;
  #subscribe: Subscribe<TeamPushProgress>;

  constructor(backend: TeamApi = api, subscribe: Subscribe<TeamPushProgress> = onTeamPushProgress) {
    this.#api = backend;
    this.#subscribe = subscribe;
  }

  /** The status, and the saved setup into the form unless the person has edited it since it
   * was shown: the answer can come seconds after Settings opened (the backend may be busy),
   * and what was typed meanwhile stays. `adopt`: take the saved setup whatever the form holds
   * (after a save). */
  async load(adopt = false): Promise<void> {
    const shown = this.status.data?.setup ?? blankTeam();
    await this.status.load(() => this.#api.teamStatus(), { keep: true });
    if (this.status.data && (adopt || !differs(shown, this.draft))) this.draft = { ...this.status.data.setup };
  }

  /** Is a team archive set up (saved)? */
  get configured(): boolean {
    const s = this.status.data;
    return s !== null && (s.env_url_set || s.setup.host.trim() !== '');
  }

  /** Has the form changed since it was loaded or saved? */
  get edited(): boolean {
    return differs(this.status.data?.setup ?? blankTeam(), this.draft);
  }

  async runTest(): Promise<void> {
    await this.test.load(() => this.#api.teamTest({ ...this.draft }));
  }

  async save(): Promise<boolean> {
    const kept = await this.saved.load(() => this.#api.teamSave({ ...this.draft }));
    if (kept && this.saved.status === 'ready') {
      await this.load(true);
      return true;
    }
    return false;
  }

  async pushNow(): Promise<void> {
    this.pushProgress = null;
    const unsubscribe = await this.#subscribe((p) => {
      if (this.push.status === 'loading') this.pushProgress = p;
    }).catch(() => null);
    try {
      await this.push.load(() => this.#api.teamPush());
    } finally {
      unsubscribe?.();
      this.pushProgress = null;
    }
    void this.status.load(() => this.#api.teamStatus(), { keep: true });
  }

  /** "Remember in the keyring": the password goes to the OS keyring for the server the form
   * names, once the server accepted it. Resolves to true when it was kept. */
  async rememberPassword(password: string): Promise<boolean> {
    if (!password) return false;
    this.forget.reset();
    await this.remember.load(() => this.#api.teamRemember({ ...this.draft }, password));
    const kept = this.remember.status === 'ready';
    await this.status.load(() => this.#api.teamStatus(), { keep: true });
    return kept;
  }

  /** "Forget": the OS keyring no longer keeps a password for the server the form names. */
  async forgetPassword(): Promise<void> {
    this.remember.reset();
    await this.forget.load(() => this.#api.teamForget({ ...this.draft }));
    await this.status.load(() => this.#api.teamStatus(), { keep: true });
  }

  /** "Set up or bring up" the team archive, as the saved user (its database's owner). */
  async initArchive(): Promise<void> {
    this.membership.reset();
    this.memberSql = null;
    let sql: string | null = null;
    const kept = await this.init.load(async () => {
      const outcome = await this.#api.teamInit();
      sql = outcome.status === 'error' ? adminSql(outcome.error) : null;
      return outcome;
    });
    if (kept) this.initSql = this.init.status === 'error' ? sql : null;
  }

  /** Add `role` to the team (`grant`), or take it out. The set-up shown is read again after a
   * change it lists (its members, those outside). */
  async changeMember(role: string, grant: boolean): Promise<void> {
    const name = role.trim();
    if (!name) return;
    this.granted = grant;
    let sql: string | null = null;
    const kept = await this.membership.load(async () => {
      const outcome = await (grant ? this.#api.teamGrant(name) : this.#api.teamRevoke(name));
      sql = outcome.status === 'error' ? adminSql(outcome.error) : null;
      return outcome;
    });
    if (kept) this.memberSql = this.membership.status === 'error' ? sql : null;
    const done = this.membership.data;
    if (this.membership.status === 'ready' && done && this.init.data) {
      const outside = grant ? this.init.data.outside.filter((r) => r !== done.role) : this.init.data.outside;
      this.init.data = { ...this.init.data, members: done.members, outside };
    }
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
    this.#skimmed = t;
    this.skimSkip = 0;
    const repo = this.repo;
    await this.skim.load(() => this.#api.teamSkim(t, null, repo), { keep: true });
  }

  /** Skim in `repo` (null: every repository), again for the target shown. */
  setRepo(repo: string | null): Promise<void> {
    if (repo === this.repo) return Promise.resolve();
    this.repo = repo;
    if (!this.#skimmed) return Promise.resolve();
    this.target = this.#skimmed;
    return this.runSkim();
  }

  /** The page of earlier sessions (`earlier`) or of newer ones, of the skim shown. The skip
   * moves only with a page that loaded. */
  async pageSkim(earlier: boolean): Promise<void> {
    const shown = this.skim.data;
    if (!shown || !this.#skimmed || (earlier ? shown.left_out === 0 : this.skimSkip === 0)) return;
    const skip = earlier ? this.skimSkip + shown.sessions.length : Math.max(0, this.skimSkip - MAX_SKIM);
    const t = this.#skimmed;
    const repo = this.repo;
    const kept = await this.skim.load(() => this.#api.teamSkim(t, skip === 0 ? null : skip, repo), { keep: true });
    if (kept && this.skim.status === 'ready') this.skimSkip = skip;
  }

  /** The teammate's session asked for last (open, opening or failed), or null. */
  shown: { key: string; publisher: string } | null = $state(null);

  /** Open a teammate's session (read-only) by its whole key and publisher. */
  async show(sessionKey: string, publisher: string): Promise<void> {
    this.shown = { key: sessionKey, publisher };
    await this.open.load(() => this.#api.teamShow(sessionKey, publisher));
  }

  close(): void {
    this.shown = null;
    this.open.reset();
  }
}

export const team = new TeamStore();
