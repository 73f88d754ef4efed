import { describe, expect, it, vi } from 'vitest';
import type { TeamConfig, TeamInit, TeamMembership, TeamShow, TeamSkim, TeamStatus } from '../api';
import {
  MAX_SKIM,
  TeamStore,
  adminSql,
  blankTeam,
  initSummary,
  membershipSummary,
  passwordFrom,
  portOf,
  pushShare,
  teamAddress,
  teamGap,
  unscopedNote,
  type TeamApi,
} from './team.svelte';

const ok = <T>(data: T) => ({ status: 'ok' as const, data });

const setup: TeamConfig = { host: '127.0.0.1', port: 5433, database: 'team', user: 'alice', password_env: 'TEAM_PW' };

function status(extra: Partial<TeamStatus> = {}): TeamStatus {
  return { setup, env_url_set: false, password_set: true, password_var: 'TEAM_PW', keyring: null, last_push: null, ...extra };
}

function fakeApi(over: Partial<TeamApi> = {}): TeamApi {
  return {
    teamStatus: vi.fn(async () => ok(status())),
    teamSave: vi.fn(async (s: TeamConfig) => ok(s)),
    teamTest: vi.fn(),
    teamPush: vi.fn(),
    teamRemember: vi.fn(),
    teamForget: vi.fn(async () => ok(true)),
    teamSearch: vi.fn(async () => ok([])),
    teamSkim: vi.fn(),
    teamShow: vi.fn(async () => ok({} as TeamShow)),
    ...over,
  } as unknown as TeamApi;
}

describe('team setup', () => {
  it('says what is missing, and never takes a password for a variable name', () => {
    expect(teamGap(blankTeam())).toContain('host');
    expect(teamGap({ ...setup, database: ' ' })).toContain('database');
    expect(teamGap({ ...setup, user: '' })).toContain('user');
    expect(teamGap({ ...setup, port: 70000 })).toContain('port');
    expect(teamGap({ ...setup, password_env: 'hunter2 secret!' })).toContain('never the password');
    expect(teamGap({ ...setup, password_env: '' })).toBeNull();
    expect(teamGap(setup)).toBeNull();
  });

  it('shows the address without a password, and reads a typed port', () => {
    expect(teamAddress(setup)).toBe('postgres://alice@127.0.0.1:5433/team');
    expect(teamAddress({ ...setup, port: null })).toBe('postgres://alice@127.0.0.1/team');
    expect([portOf('5432'), portOf(''), portOf('54x'), portOf('1234567')]).toEqual([5432, null, null, null]);
  });

  it('says where the password came from, never what it is', () => {
    expect(passwordFrom({ from: 'keyring' })).toBe('the OS keyring');
    expect(passwordFrom({ from: 'variable', name: 'TEAM_PW' })).toBe('the variable TEAM_PW');
    expect(passwordFrom({ from: 'none' })).toContain('nowhere');
  });

  it('says when a skim in one repository read every repository’s, and why', () => {
    expect(unscopedNote('every')).toBeNull();
    expect(unscopedNote('one')).toBeNull();
    expect(unscopedNote('server_keeps_none')).toMatch(/keeps no session's repository yet/);
    expect(unscopedNote('unnamed')).toMatch(/shallow clone/);
  });

  it('loads the saved setup into the form, saves the form, and knows when it was edited', async () => {
    const api = fakeApi();
    const team = new TeamStore(api);
    await team.load();
    expect(team.draft).toEqual(setup);
    expect(team.edited).toBe(false);
    expect(team.configured).toBe(true);
    team.draft.user = 'bob';
    expect(team.edited).toBe(true);
    expect(await team.save()).toBe(true);
    expect(api.teamSave).toHaveBeenCalledWith({ ...setup, user: 'bob' });
  });

  it('keeps what the person typed while the status was on its way, and takes the saved setup after a save', async () => {
    let answer: (v: ReturnType<typeof ok<TeamStatus>>) => void = () => {};
    const api = fakeApi({ teamStatus: vi.fn(() => new Promise<ReturnType<typeof ok<TeamStatus>>>((resolve) => (answer = resolve))) });
    const team = new TeamStore(api);
    const loading = team.load();
    team.draft.host = 'db.internal';
    answer(ok(status()));
    await loading;
    expect(team.draft.host).toBe('db.internal');
    expect(team.edited).toBe(true);
    // Saved: the form shows what was saved (the server's answer), trimmed as stored.
    const saving = team.save();
    await vi.waitFor(() => expect(api.teamStatus).toHaveBeenCalledTimes(2));
    answer(ok(status({ setup: { ...setup, host: 'db.internal' } })));
    await saving;
    expect(team.draft).toEqual({ ...setup, host: 'db.internal' });
    expect(team.edited).toBe(false);
  });

  it('is not configured with an empty [team], unless CAIRN_TEAM_URL is set', async () => {
    const empty = status({ setup: blankTeam() });
    const team = new TeamStore(fakeApi({ teamStatus: vi.fn(async () => ok(empty)) }));
    await team.load();
    expect(team.configured).toBe(false);
    const env = new TeamStore(fakeApi({ teamStatus: vi.fn(async () => ok({ ...empty, env_url_set: true })) }));
    await env.load();
    expect(env.configured).toBe(true);
  });

  it('opens a teammate’s session by key and publisher, and searches only with words', async () => {
    const api = fakeApi();
    const team = new TeamStore(api);
    team.query = '   ';
    await team.search();
    expect(api.teamSearch).not.toHaveBeenCalled();
    team.query = 'quokka';
    await team.search();
    expect(api.teamSearch).toHaveBeenCalledWith('quokka', 100);
    await team.show('sha256-abc', 'mate');
    expect(api.teamShow).toHaveBeenCalledWith('sha256-abc', 'mate');
    team.close();
    expect(team.open.status).toBe('idle');
  });

  it('shows a push’s progress while it runs and clears it after', async () => {
    let send: ((p: { done: number; total: number }) => void) | null = null;
    const unsubscribe = vi.fn();
    const subscribe = vi.fn(async (h: (p: { done: number; total: number }) => void) => {
      send = h;
      return unsubscribe;
    });
    let finish: (v: unknown) => void = () => {};
    const api = fakeApi({
      teamPush: vi.fn(
        () =>
          new Promise((resolve) => {
            finish = resolve;
          }),
      ) as unknown as TeamApi['teamPush'],
    });
    const team = new TeamStore(api, subscribe);
    const pushing = team.pushNow();
    await vi.waitFor(() => expect(api.teamPush).toHaveBeenCalled());
    send!({ done: 3, total: 12 });
    expect(team.pushProgress).toEqual({ done: 3, total: 12 });
    expect(pushShare(team.pushProgress)).toEqual({ value: 0.25, text: '3 of 12 sessions' });
    finish(ok({ sessions_pushed: 12 }));
    await pushing;
    expect(team.pushProgress).toBeNull();
    expect(unsubscribe).toHaveBeenCalledOnce();
    // A late event after the push ended is ignored.
    send!({ done: 12, total: 12 });
    expect(team.pushProgress).toBeNull();
    expect(pushShare({ done: 0, total: 0 })).toEqual({ value: 1, text: 'Nothing to send' });
    expect(pushShare({ done: 1, total: 1 })?.text).toBe('1 of 1 session');
  });

  it('hands a typed password to the keyring for the form’s server, and forgets it', async () => {
    const api = fakeApi({
      teamRemember: vi.fn(async () => ok({ server: 's', account: 'a', store: 'the Secret Service', replaced: false, checked: true })),
    });
    const team = new TeamStore(api);
    await team.load();
    expect(await team.rememberPassword('')).toBe(false);
    expect(api.teamRemember).not.toHaveBeenCalled();
    expect(await team.rememberPassword('pw-typed')).toBe(true);
    expect(api.teamRemember).toHaveBeenCalledWith(setup, 'pw-typed');
    // The status (what the keyring holds) is read again, and the password is kept nowhere.
    expect(api.teamStatus).toHaveBeenCalledTimes(2);
    expect(JSON.stringify(team)).not.toContain('pw-typed');
    await team.forgetPassword();
    expect(api.teamForget).toHaveBeenCalledWith(setup);
    expect(team.forget.data).toBe(true);
    expect(team.remember.status).toBe('idle');
  });

  it('pages a skim: earlier after the sessions shown, newer back to the most recent, for the target asked', async () => {
    // 1,200 sessions match: pages of 500, 500 and 200.
    const page = (skip: number): TeamSkim => {
      const n = Math.max(0, Math.min(MAX_SKIM, 1200 - skip));
      return {
        target: 'ref:refs/heads/main',
        publishers: ['ann'],
        sessions: Array.from({ length: n }, () => ({}) as TeamSkim['sessions'][number]),
        matched: 1200,
        left_out: 1200 - skip - n,
        repo_scope: 'every',
        warnings: [],
      };
    };
    const teamSkim = vi.fn(async (_t: string, skip: number | null) => ok(page(skip ?? 0)));
    const team = new TeamStore(fakeApi({ teamSkim } as Partial<TeamApi>));
    team.target = 'main';
    await team.runSkim();
    expect(teamSkim).toHaveBeenLastCalledWith('main', null, null);
    await team.pageSkim(false); // already the newest page: nothing asked
    expect(teamSkim).toHaveBeenCalledTimes(1);
    team.target = 'edited, not run';
    await team.pageSkim(true);
    expect(teamSkim).toHaveBeenLastCalledWith('main', 500, null);
    await team.pageSkim(true);
    expect(teamSkim).toHaveBeenLastCalledWith('main', 1000, null);
    expect(team.skim.data?.left_out).toBe(0);
    await team.pageSkim(true); // nothing earlier
    expect(teamSkim).toHaveBeenCalledTimes(3);
    await team.pageSkim(false);
    expect(teamSkim).toHaveBeenLastCalledWith('main', 500, null);
    await team.pageSkim(false);
    expect(teamSkim).toHaveBeenLastCalledWith('main', null, null);
    expect(team.skimSkip).toBe(0);
    // A page that fails to load leaves the skip where the sessions shown are.
    teamSkim.mockImplementationOnce(async () => ({ status: 'error' as const, error: { kind: 'external', message: 'gone' } }) as never);
    await team.pageSkim(true);
    expect(team.skim.status).toBe('error');
    expect(team.skimSkip).toBe(0);
    await team.runSkim(); // a new skim starts at the newest page again
    expect(teamSkim).toHaveBeenLastCalledWith('edited, not run', null, null);
  });

  it('keeps a skim to one repository, its pages too, and skims again when the repository changes', async () => {
    const teamSkim = vi.fn(async (_t: string, skip: number | null) => ok({
      target: 'pull-request:#12', publishers: ['ann'], matched: 600, left_out: 600 - (skip ?? 0) - 500, repo_scope: 'one',
      sessions: Array.from({ length: 500 }, () => ({}) as TeamSkim['sessions'][number]),
    } as TeamSkim));
    const team = new TeamStore(fakeApi({ teamSkim } as Partial<TeamApi>));
    await team.setRepo('/home/dev/shop'); // nothing skimmed yet: nothing asked
    expect(teamSkim).not.toHaveBeenCalled();
    team.target = '#12';
    await team.runSkim();
    expect(teamSkim).toHaveBeenLastCalledWith('#12', null, '/home/dev/shop');
    await team.pageSkim(true);
    expect(teamSkim).toHaveBeenLastCalledWith('#12', 500, '/home/dev/shop');
    // Another repository skims the target shown again from its newest page, whatever the box holds.
    team.target = 'typed, not run';
    await team.setRepo(null);
    expect(teamSkim).toHaveBeenLastCalledWith('#12', null, null);
    expect(team.skimSkip).toBe(0);
    await team.setRepo(null); // the same: nothing asked
    expect(teamSkim).toHaveBeenCalledTimes(3);
  });

  it('sets the archive up and shows the team’s role; a refusal gives the SQL an administrator runs', async () => {
    const made: TeamInit = {
      server: 'postgres://owner@db:5432/team', created: true, version: 2, archive_id: 'x', owner: 'owner', role: 'owner',
      team_role: 'team_members', team_role_created: true, members: [], added: [], outside: ['ben'],
    };
    // The refusal's typed field, never the hint's wording.
    const sql = 'CREATE ROLE team_members NOLOGIN; GRANT team_members TO ana;';
    expect(adminSql({ kind: 'refused', message: 'm', hint: `an administrator runs: ${sql} then run it again`, sql })).toBe(sql);
    expect(adminSql({ kind: 'refused', message: 'm', hint: `an administrator runs: ${sql} then run it again`, sql: null })).toBeNull();
    expect(adminSql('check the user')).toBeNull();
    expect(adminSql(null)).toBeNull();
    expect(initSummary(made)).toContain("made the team's role team_members now");
    expect(initSummary({ ...made, team_role_created: false, created: false })).toMatch(/^Checked .* the team is role team_members/);
    const grant = vi.fn(async () =>
      ok({ server: 's', team_role: 'team_members', role: 'ben', member: true, changed: true, through: [], sessions_pushed: 0,
        entries_pushed: 0, delete_sql: null, members: ['ben'], may_connect: true, created: false, push_url: null } as TeamMembership),
    );
    const team = new TeamStore(fakeApi({ teamInit: vi.fn(async () => ok(made)), teamGrant: grant } as Partial<TeamApi>));
    await team.initArchive();
    expect(team.init.data?.team_role_created).toBe(true);
    // Adding someone the set-up listed outside moves them in.
    await team.changeMember(' ben ', true);
    expect(grant).toHaveBeenCalledWith('ben');
    expect(team.init.data?.members).toEqual(['ben']);
    expect(team.init.data?.outside).toEqual([]);
    await team.changeMember('  ', true);
    expect(grant).toHaveBeenCalledOnce();
  });

  it('says what a revoke changed and what stays', () => {
    const m: TeamMembership = {
      server: 's', team_role: 'team_members', role: 'ben', member: false, changed: true, created: false, through: [], sessions_pushed: 3,
      entries_pushed: 1, delete_sql: "DELETE FROM cairn.sessions WHERE publisher = 'ben';", members: [], may_connect: false, push_url: null,
    };
    expect(membershipSummary(m, false)).toMatch(/^Took ben out of the team\. They can no longer connect.*Their 3 pushed sessions and 1 Recall entry stay/);
    expect(membershipSummary({ ...m, changed: false }, false)).toMatch(/^ben was not a member: nothing changed\. Their 3 pushed/);
    expect(membershipSummary({ ...m, changed: false, sessions_pushed: 0, entries_pushed: 0 }, false)).toBe(
      'ben was not a member: nothing changed. They pushed nothing to the team archive.',
    );
    expect(membershipSummary({ ...m, member: true, through: ['devs'] }, false)).toContain('still in the team through devs');
    expect(membershipSummary({ ...m, member: true, changed: false, may_connect: true }, true)).toBe('ben is already in the team: nothing changed.');
    // CONNECT granted to ben or to PUBLIC outlasts the revoke: the summary says what the server answered.
    expect(membershipSummary({ ...m, may_connect: true }, false)).toMatch(
      /^Took ben out of the team\. They can no longer read or push, but may still connect to its database/,
    );
  });

  it('says a grant lets the teammate connect only when the server says they may', () => {
    const m: TeamMembership = {
      server: 's', team_role: 'team_members', role: 'ben', member: true, changed: true, created: false, through: [], sessions_pushed: 0,
      entries_pushed: 0, delete_sql: null, members: ['ben'], may_connect: true, push_url: 'postgres://ben@db:5432/team',
    };
    expect(membershipSummary(m, true)).toBe("Added ben to the team: they may now connect, read everyone's records and push their own.");
    // The team's role lost CONNECT on the database since the set-up granted it.
    const refused = membershipSummary({ ...m, may_connect: false }, true);
    expect(refused).toBe(
      "Added ben to the team, but they may not connect to the team's database yet: CONNECT on it is not granted to team_members. The database's owner sets the archive up again (cairn team init), which grants it.",
    );
    expect(refused).not.toContain('may now connect');
    expect(membershipSummary({ ...m, changed: false, may_connect: false }, true)).toMatch(
      /^ben is already in the team: nothing changed, but they may not connect/,
    );
  });
});
