// The agent filter bars: which agents they offer as buttons and which go in the menu, and the
// stores that send the chosen agent to the core.
import { describe, expect, it } from 'vitest';
import type { Agent, AgentCount, Api, Outcome, Repo, SkimView } from '../api';
import { agentChoices, AgentsStore, MAX_CHIPS } from './agents.svelte';
import { BranchesStore } from './branches.svelte';
import { RecallStore } from './recall.svelte';
import { SkimStore } from './skim.svelte';
import { agents as everyAgent } from '../format';

const ok = <T>(data: T): Outcome<T> => ({ status: 'ok', data });
const counts = (...agents: Agent[]): AgentCount[] => agents.map((agent, i) => ({ agent, sessions: 100 - i }));

describe('agentChoices', () => {
  it('offers only the agents with sessions, most first, with no menu when they fit', () => {
    expect(agentChoices(counts('codex', 'claude'), 'all')).toEqual({ chips: ['codex', 'claude'], more: [] });
    expect(agentChoices([], 'all')).toEqual({ chips: [], more: [] });
    expect(agentChoices(null, 'all')).toEqual({ chips: [], more: [] });
  });

  it('puts the rest of a long list in the menu, never a menu of one', () => {
    const all = counts(...everyAgent);
    const { chips, more } = agentChoices(all, 'all');
    expect(chips).toEqual(everyAgent.slice(0, MAX_CHIPS));
    expect(more).toEqual(everyAgent.slice(MAX_CHIPS));
    expect(chips.length + more.length).toBe(everyAgent.length);
    const six = counts(...everyAgent.slice(0, MAX_CHIPS + 1));
    expect(agentChoices(six, 'all')).toEqual({ chips: everyAgent.slice(0, MAX_CHIPS + 1), more: [] });
  });

  it('keeps the chosen agent reachable even with nothing captured', () => {
    expect(agentChoices(counts('claude'), 'kiro')).toEqual({ chips: ['claude', 'kiro'], more: [] });
    const { more } = agentChoices(counts(...everyAgent.filter((a) => a !== 'atif')), 'atif');
    expect(more.at(-1)).toBe('atif');
  });
});

describe('agent filters reach the core', () => {
  it('loads the counts once per call and tells a count by agent', async () => {
    let calls = 0;
    const store = new AgentsStore({ agentCounts: async () => (calls++, ok(counts('gemini', 'claude'))) } as Pick<Api, 'agentCounts'>);
    await store.load();
    expect(calls).toBe(1);
    expect(store.sessionsOf('gemini')).toBe(100);
    expect(store.sessionsOf('codex')).toBeNull();
  });

  it('sends the branches and skim agent, null for all', async () => {
    const asked: (Agent | null)[] = [];
    const branches = new BranchesStore({ listBranches: async (agent: Agent | null) => (asked.push(agent), ok([] as Repo[])) } as unknown as Api);
    await branches.load();
    await branches.setAgent('gemini');
    await branches.setAgent('gemini');
    await branches.setAgent('all');
    expect(asked).toEqual([null, 'gemini', null]);

    const skimmed: (Agent | null)[] = [];
    const view: SkimView = {
      target_kind: 'branch',
      target_key: 'ref:refs/heads/main',
      coverage: { showing_sessions: 0, showing_turns: 0, related_turn_count: 0, weak_sessions_hidden: 0, other_repo_sessions_hidden: 0 },
      sessions: [],
    };
    const skim = new SkimStore({
      skimBranch: async (_t: string, _w: boolean, _r: string | null, _p: string | null, agent: Agent | null) => (skimmed.push(agent), ok(view)),
    } as unknown as Api);
    await skim.setAgent('codex'); // nothing on screen yet: nothing to reload
    await skim.load('ref:refs/heads/main');
    await skim.setAgent('all');
    expect(skimmed).toEqual(['codex', null]);
  });

  it('puts the Recall agent in the corpus filters', () => {
    const recall = new RecallStore({} as Api);
    expect(recall.filters.agent).toBeUndefined();
    recall.agent = 'cursor';
    expect(recall.filters.agent).toBe('cursor');
  });
});

describe('Settings', () => {
  it('lists a folder setting for every agent read from folders, and none for ATIF imports', async () => {
    const { AGENTS } = await import('./settings.svelte');
    expect(AGENTS).not.toContain('atif');
    expect(AGENTS.length).toBe(everyAgent.length - 1);
  });
});
