// Made-up sessions for UI tests. Shapes follow the generated bindings.
import type { Agent, Session } from '../lib/api';

export function fakeSession(n: number, agent: Agent = n % 3 === 0 ? 'codex' : 'claude'): Session {
  return {
    session_key: `sha256-${n.toString(16).padStart(32, '0')}`,
    agent,
    session_id: `session-${n}`,
    project: `project-${n % 7}`,
    cwd: `/home/dev/project-${n % 7}`,
    git_branch: n % 2 === 0 ? 'main' : `feature/${n}`,
    title: `Session number ${n}\nsecond line`,
    model: agent === 'codex' ? 'gpt-5' : 'claude-opus',
    started_at: '2026-11-30T09:00:00Z',
    updated_at: '2026-11-30T10:00:00Z',
    turn_count: n % 12,
    record_count: n * 3,
    warnings: n % 5 === 0 ? 1 : 0,
    subagent_count: 0,
    first_prompt: `Please look at issue ${n}`,
    published_by: null,
    ran_by: null,
  };
}

export function fakeSessions(count: number, agent?: Agent): Session[] {
  return Array.from({ length: count }, (_, i) => fakeSession(i + 1, agent));
}
