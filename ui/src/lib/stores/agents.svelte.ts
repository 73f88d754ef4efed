// The agents with sessions in the archive, and how many each has: what every agent filter bar
// offers (an agent with nothing captured is not worth a button). One list for the window,
// reloaded when the archive changes.
import { api, type AgentCount, type Api, type Agent } from '../api';
import { Resource } from './resource.svelte';

/** One agent, or every agent. */
export type AgentFilter = Agent | 'all';

/** Agents shown as buttons before the rest go in the "More agents" menu. */
export const MAX_CHIPS = 5;

/** What a filter bar shows for `value`: the agents as buttons (most sessions first) and the rest
 * in a menu. The chosen agent always stays reachable, even with nothing captured. A menu of one
 * is a button instead. */
export function agentChoices(
  counts: AgentCount[] | null,
  value: AgentFilter,
  max = MAX_CHIPS,
): { chips: Agent[]; more: Agent[] } {
  const present = (counts ?? []).map((c) => c.agent);
  if (value !== 'all' && !present.includes(value)) present.push(value);
  if (present.length <= max + 1) return { chips: present, more: [] };
  return { chips: present.slice(0, max), more: present.slice(max) };
}

export class AgentsStore {
  counts = new Resource<AgentCount[]>();
  #api: Pick<Api, 'agentCounts'>;

  constructor(backend: Pick<Api, 'agentCounts'> = api) {
    this.#api = backend;
  }

  /** Load (or reload, keeping the bar on screen). */
  async load(): Promise<void> {
    await this.counts.load(() => this.#api.agentCounts(), { keep: true });
  }

  /** Sessions of `agent` in the archive, when known. */
  sessionsOf(agent: Agent): number | null {
    return this.counts.data?.find((c) => c.agent === agent)?.sessions ?? null;
  }
}

/** The window's one list. */
export const agentCounts = new AgentsStore();
