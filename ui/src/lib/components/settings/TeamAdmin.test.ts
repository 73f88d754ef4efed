import { afterEach, describe, expect, it, vi } from 'vitest';
import { flushSync, mount, unmount } from 'svelte';
import TeamAdmin from './TeamAdmin.svelte';
import { TeamStore, type TeamApi } from '../../stores/team.svelte';
import type { TeamInit } from '../../api';

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
    const refused = {
      status: 'error' as const,
      error: {
        kind: 'refused',
        message: 'team archive postgres://owner@db/team: the team’s role team_members does not exist, and this role may not create roles',
        hint: 'an administrator (a role that may create roles) runs: CREATE ROLE team_members NOLOGIN; then run `cairn team init` again',
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
});
