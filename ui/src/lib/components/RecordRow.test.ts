import { afterEach, describe, expect, it } from 'vitest';
import { flushSync, mount, unmount } from 'svelte';
import type { RecordView } from '../api';
import RecordRow from './RecordRow.svelte';

let component: ReturnType<typeof mount> | undefined;

afterEach(() => {
  if (component) unmount(component);
  component = undefined;
  document.body.innerHTML = '';
});

const record = (extra: Partial<RecordView> = {}): RecordView => ({
  ordinal: 4,
  turn_record_index: 0,
  timestamp: '2026-01-01T00:00:01Z',
  kind: 'message',
  source_event_kind: 'user',
  role: 'user',
  text: 'fix it',
  prompt_source: null,
  tool_name: null,
  tool_kind: null,
  tool_input: null,
  call_id: null,
  exit_code: null,
  outcome: null,
  file_paths: [],
  is_sidechain: false,
  is_compaction: false,
  ...extra,
});

function render(r: RecordView): HTMLElement {
  const target = document.createElement('div');
  document.body.append(target);
  component = mount(RecordRow, {
    target,
    props: { record: r, sessionKey: 'gemini:doc-1', selected: false, highlighted: false, unfolded: false, ontogglefold: () => {} },
  });
  flushSync();
  return target.querySelector('[data-testid="record-row"]')!;
}

describe('RecordRow', () => {
  it('marks a record the agent took back, and keeps its text', () => {
    const row = render(record({ retracted_at: '2026-01-01T00:05:00Z' }));
    expect(row.classList.contains('retracted')).toBe(true);
    expect(row.querySelector('.tag')?.textContent).toBe('retracted');
    expect(row.textContent).toContain('fix it');
  });

  it('shows a live record unmarked', () => {
    const row = render(record());
    expect(row.classList.contains('retracted')).toBe(false);
    expect(row.textContent).not.toContain('retracted');
  });

  it('shows a tool result as a terminal would, without its colour codes', () => {
    const row = render(record({ kind: 'tool_result', role: null, tool_name: 'Bash', text: '\x1b[32mPASS\x1b[0m src/a.test.ts' }));
    expect(row.querySelector('pre.text')?.textContent).toBe('PASS src/a.test.ts');
  });
});
