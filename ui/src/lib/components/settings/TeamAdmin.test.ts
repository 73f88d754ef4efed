import { afterEach, describe, expect, it, vi } from 'vitest';
import { flushSync, mount, unmount } from 'svelte';
import TeamAdmin from './TeamAdmin.svelte';
import { TeamStore, type TeamApi } from '../../stores/team.svelte';
import type { TeamInit, TeamMembership } from '../../api';

let component: ReturnType<typeof mount> | undefined;

afterEach(() => {
  if (component) unmount(component);
  component = undefined;
  document.body.innerHTML = '';
});

const ok = <T>(data: T) => ({ status: 'ok' as const, data });

function view(team: TeamStore): void {
  component = mount(TeamAdmin, { target: document.body, props: { team } });
  flushSync();
}

const text = (id: string) => document.querySelector(`[data-testid="${id}"]`)?.textContent ?? null;

describe('TeamAdmin', () => {
  it('shows the team’s role a set-up made, and who may connect but is not in the team', async () => {
    const made: TeamInit = {
      server: 's', created: false, version: 2, archive_id: 'x', owner: 'owner', role: 'owner', team_role: 'team_members',
      team_role_created: true, members: ['ana'], added: [], outside: ['ben'],
    };
    const team = new TeamStore({ teamInit: vi.fn(async () => ok(made)) } as unknown as TeamApi);
    await team.initArchive();
    view(team);
    expect(text('team-init-result')).toContain("made the team's role team_members now");
    expect(text('team-init-members')).toBe('Members: ana.');
    expect(text('team-init-outside')).toContain('not in the team');
    expect(document.querySelector('[data-testid="team-init-sql"]')).toBeNull();
  });

  it('gives the SQL an administrator runs when the set-up may not make the team’s role, to copy', async () => {
    // The statement is the refusal's typed `sql` field; the hint is worded differently on
    // purpose, so only reading the field finds it.
    const refused = {
      status: 'error' as const,
      error: {
        kind: 'refused',
        message: 'team archive postgres://owner@db/team: the team’s role team_members does not exist, and this role may not create roles',
        hint: 'ask an administrator to make the role, then set up again',
        sql: 'CREATE ROLE team_members NOLOGIN;',
      },
    };
    const team = new TeamStore({ teamInit: vi.fn(async () => refused) } as unknown as TeamApi);
    await team.initArchive();
    view(team);
    expect(text('team-init-error')).toContain('may not create roles');
    expect(document.querySelector('[data-testid="team-init-sql"] pre')?.textContent).toBe('CREATE ROLE team_members NOLOGIN;');
    const writeText = vi.fn(async () => {});
    Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true });
    document.querySelector<HTMLButtonElement>('[data-testid="team-init-sql-copy"]')?.click();
    await vi.waitFor(() => expect(writeText).toHaveBeenCalledWith('CREATE ROLE team_members NOLOGIN;'));
  });

  it('reads the SQL from the typed field only: a hint that words a statement shows none', async () => {
    const worded = {
      status: 'error' as const,
      error: {
        kind: 'refused',
        message: 'the team’s role team_members does not exist, and this role may not create roles',
        hint: 'an administrator (a role that may create roles) runs: CREATE ROLE team_members NOLOGIN; then run `cairn team init` again',
        sql: null,
      },
    };
    const team = new TeamStore({ teamInit: vi.fn(async () => worded) } as unknown as TeamApi);
    await team.initArchive();
    view(team);
    expect(text('team-init-error')).toContain('may not create roles');
    expect(document.querySelector('[data-testid="team-init-sql"]')).toBeNull();
  });

  it('offers the GRANT an administrator runs when this user may not add the teammate, and the push URL after a grant', async () => {
    const refused = {
      status: 'error' as const,
      error: {
        kind: 'refused',
        message: 'team archive postgres://owner@db:5432/team: this role may not change who is in the team (permission denied)',
        hint: 'run it as a superuser, a role with CREATEROLE, or one granted team_members WITH ADMIN OPTION, or have one run it',
        sql: 'GRANT team_members TO "o\'brien";',
      },
    };
    const membership: TeamMembership = {
      server: 'postgres://admin@db:5432/team', team_role: 'team_members', role: 'ben', member: true, changed: true, created: false,
      through: [], sessions_pushed: 0, entries_pushed: 0, delete_sql: null, members: ['ben'], may_connect: true,
      push_url: 'postgres://ben@db:5432/team',
    };
    const teamGrant = vi.fn().mockResolvedValueOnce(refused).mockResolvedValueOnce(ok(membership));
    const team = new TeamStore({ teamGrant } as unknown as TeamApi);
    await team.changeMember("o'brien", true);
    view(team);
    expect(text('team-member-error')).toContain('may not change who is in the team');
    expect(document.querySelector('[data-testid="team-member-sql"] pre')?.textContent).toBe('GRANT team_members TO "o\'brien";');
    await team.changeMember('ben', true);
    flushSync();
    expect(document.querySelector('[data-testid="team-member-sql"]')).toBeNull();
    expect(text('team-member-push-url')).toContain('postgres://ben@db:5432/team');
  });
});
