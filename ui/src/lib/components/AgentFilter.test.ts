// The agent filter bar's names: `atif` gathers every session this build has no reader for, so
// its button says so rather than naming one format.
import { afterEach, describe, expect, it } from 'vitest';
import { flushSync, mount, unmount } from 'svelte';
import { clearMocks, mockIPC } from '@tauri-apps/api/mocks';
import AgentFilter from './AgentFilter.svelte';
import { agentCounts } from '../stores/agents.svelte';

let component: ReturnType<typeof mount> | undefined;

afterEach(() => {
  if (component) unmount(component);
  component = undefined;
  clearMocks();
  document.body.innerHTML = '';
});

describe('AgentFilter', () => {
  it('names the atif choice for every session it holds, with its count', async () => {
    mockIPC((cmd) =>
      cmd === 'agent_counts'
        ? [
            { agent: 'claude', sessions: 12 },
            { agent: 'atif', sessions: 2 },
          ]
        : null,
    );
    await agentCounts.load();
    component = mount(AgentFilter, { target: document.body, props: { value: 'all', onchange: () => {} } });
    flushSync();
    const atif = document.querySelector<HTMLElement>('[data-agent-filter="atif"]')!;
    expect(atif.textContent?.trim()).toBe('Imported and other agents');
    expect(atif.title).toBe('2 sessions');
    expect(document.querySelector('[data-agent-filter="claude"]')?.textContent?.trim()).toBe('Claude');
  });
});
