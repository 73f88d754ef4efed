import { describe, expect, it, vi } from 'vitest';
import type { TeamConfig, TeamShow, TeamStatus } from '../api';
import { TeamStore, blankTeam, portOf, starred, teamAddress, teamGap, type TeamApi } from './team.svelte';

const ok = <T>(data: T) => ({ status: 'ok' as const, data });

const setup: TeamConfig = { host: '127.0.0.1', port: 5433, database: 'team', user: 'alice', password_env: 'TEAM_PW' };

function status(extra: Partial<TeamStatus> = {}): TeamStatus {
  return { setup, env_url_set: false, password_set: true, password_var: 'TEAM_PW', last_push: null, ...extra };
}

function fakeApi(over: Partial<TeamApi> = {}): TeamApi {
  return {
    teamStatus: vi.fn(async () => ok(status())),
    teamSave: vi.fn(async (s: TeamConfig) => ok(s)),
    teamTest: vi.fn(),
    teamPush: vi.fn(),
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

  it('marks the matches of a team snippet as text, never as HTML', () => {
    expect(starred('a **quokka** <b>x</b>')).toEqual([
      { text: 'a ', match: false },
      { text: 'quokka', match: true },
      { text: ' <b>x</b>', match: false },
    ]);
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
});
