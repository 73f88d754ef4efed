import { afterEach, describe, expect, it, vi } from 'vitest';
import { flushSync, mount, unmount } from 'svelte';
import TeamView from './TeamView.svelte';
import { TeamStore, type TeamApi } from '../stores/team.svelte';
import type { TeamSkim } from '../api';

let component: ReturnType<typeof mount> | undefined;

afterEach(() => {
  if (component) unmount(component);
  component = undefined;
  document.body.innerHTML = '';
});

const ok = <T>(data: T) => ({ status: 'ok' as const, data });

function skimOf(scope: TeamSkim['repo_scope']): TeamSkim {
  return { target: 'ref:refs/heads/main', publishers: [], sessions: [], matched: 0, left_out: 0, repo_scope: scope, warnings: [] };
}

function view(team: TeamStore, repos: { name: string; root: string }[]): void {
  component = mount(TeamView, {
    target: document.body,
    props: { team, repos, onsettings: () => {}, onopen: () => {}, onback: () => {} },
  });
  flushSync();
}

describe('TeamView', () => {
  it('keeps showing the repository a skim keeps to when the branch list no longer offers it', async () => {
    const teamSkim = vi.fn(async () => ok(skimOf('one')));
    const team = new TeamStore({ teamSkim } as unknown as TeamApi);
    team.target = 'main';
    await team.setRepo('/src/shop');
    // An agent filter on the branch list left `shop` out of the repositories passed in.
    view(team, [{ name: 'docs', root: '/src/docs' }]);
    const select = document.querySelector<HTMLSelectElement>('[data-testid="team-skim-repo"]');
    expect(select?.value).toBe('/src/shop');
    expect(select?.selectedOptions[0]?.textContent).toBe('shop');
    expect([...(select?.options ?? [])].map((o) => o.value)).toEqual(['', '/src/docs', '/src/shop']);
  });

  it('names each session’s project, which tells two repositories’ branch of one name apart', async () => {
    const session = (key: string, project: string | null) => ({
      session: { publisher: 'ann', session_key: key, agent: 'claude', title: 't', project, started_at: null },
      why: [],
      turns: [],
    });
    const skim = { ...skimOf('every'), matched: 2, sessions: [session('a', 'shop'), session('b', null)] } as unknown as TeamSkim;
    const team = new TeamStore({ teamSkim: vi.fn(async () => ok(skim)) } as unknown as TeamApi);
    team.target = 'main';
    await team.runSkim();
    view(team, []);
    const lines = [...document.querySelectorAll('[data-testid="team-skim-session"] .muted')].map((e) => e.textContent);
    expect(lines[0]).toContain('· shop ·');
    expect(lines[1]).not.toContain('shop');
  });

  it('says when a skim in one repository read every repository’s', async () => {
    for (const [scope, said] of [
      ['one', null],
      ['server_keeps_none', /keeps no session's repository yet/],
      ['unnamed', /shallow clone/],
    ] as const) {
      const team = new TeamStore({ teamSkim: vi.fn(async () => ok(skimOf(scope))) } as unknown as TeamApi);
      team.target = 'main';
      await team.runSkim();
      view(team, []);
      const note = document.querySelector('[data-testid="team-skim-unscoped"]');
      if (said === null) expect(note).toBeNull();
      else expect(note?.textContent).toMatch(said);
      if (component) unmount(component);
      component = undefined;
    }
  });

  it('says what the team archive’s own warning says (an archive every role on the server may read)', async () => {
    const said = 'the team archive at postgres://a@db/team is schema version 1: every role on the server may read the team’s records';
    const team = new TeamStore({ teamSkim: vi.fn(async () => ok({ ...skimOf('every'), warnings: [said] })) } as unknown as TeamApi);
    team.target = 'main';
    await team.runSkim();
    view(team, []);
    expect([...document.querySelectorAll('[data-testid="team-warning"]')].map((e) => e.textContent)).toEqual([said]);
  });
});
