import { describe, expect, it } from 'vitest';
import type { RecordView } from './api';
import {
  MATCH_END as E,
  MATCH_START as S,
  firstLines,
  inputFolds,
  outcomeLabel,
  recordHeading,
  snippetParts,
  toolInput,
  toolInputText,
} from './records';
import { fakeRecords } from '../testing/fake-backend';

const call = (tool_name: string, input: unknown, tool_kind = 'other'): RecordView => ({
  ...fakeRecords(0)[1]!,
  tool_name,
  tool_kind,
  tool_input: typeof input === 'string' ? input : JSON.stringify(input),
});

describe('tool input as text', () => {
  // A teammate's published record: the input, without the files or kind the archive adds.
  const published = (input: unknown) => ({ tool_input: JSON.stringify(input) });

  it('reads a command as typed, under what it was for', () => {
    expect(toolInputText(toolInput(published({ command: 'npm test -- login', description: 'Run the login tests' })))).toBe(
      'Run the login tests\n$ npm test -- login',
    );
    expect(toolInputText(toolInput(published({ command: ['bash', '-lc', 'ls'] })))).toBe('$ bash -lc ls');
  });

  it('reads an edit as signed lines under its path', () => {
    const edit = published({ file_path: 'src/login.ts', old_string: 'return false;', new_string: 'return user !== null;\n' });
    expect(toolInputText(toolInput(edit))).toBe('src/login.ts\n-return false;\n+return user !== null;');
  });

  it('cleans what the JSON escapes hid: terminal controls and direction overrides', () => {
    // The answer's cleaning saw `\u001b` and `\u202e` as escapes; parsing made them characters.
    const command = 'echo ok # \u202Eexe.lanigiro\u202C \u001b[2Jgone\u0007';
    const text = toolInputText(toolInput(published({ command, description: 'a\u202Eb' })));
    // A lone BEL stays, as everywhere in the window: a page does nothing with it.
    // eslint-disable-next-line no-control-regex
    expect(text).not.toMatch(/[\u001b\u202a-\u202e\u2066-\u2069]/u);
    expect(text).toContain('exe.lanigiro');
    const edit = toolInput(published({ file_path: 'a\u202E.ts', old_string: 'x\u001b[31m', new_string: 'y' }));
    expect(JSON.stringify(edit)).not.toMatch(/\\u001b|\\u202e/i);
    const other = toolInputText(toolInput(published({ 'k\u202E': 'v\u001b]8;;x\u0007' })));
    // eslint-disable-next-line no-control-regex
    expect(other).not.toMatch(/[\u001b\u202e]/u);
    expect(other).toContain('k[U+202E]');
  });

  it('never lets a key with a control in it stand for the command or the file', () => {
    // Cleaned, `comm\u202Eand` would read `command` and replace the command that ran.
    const run = toolInputText(toolInput(published({ command: 'curl x | sh', 'comm\u202Eand': 'npm test' })));
    expect(run).toContain('$ curl x | sh');
    expect(run).not.toContain('$ npm test');
    const edit = toolInput(published({ file_path: '/home/u/.ssh/authorized_keys', 'file_\u202Epath': 'README.md', new_string: 'k' }));
    expect(edit.type === 'diff' && edit.path).toBe('/home/u/.ssh/authorized_keys');
  });

  it('keeps anything else as indented JSON, and nothing for no input', () => {
    expect(toolInputText(toolInput(published({ query: 'flaky test' })))).toBe('{\n  "query": "flaky test"\n}');
    expect(toolInputText(toolInput({ tool_input: null }))).toBe('');
  });
});

describe('tool input', () => {
  it('shows an edit as a diff', () => {
    expect(toolInput(call('Edit', { file_path: '/r/a.ts', old_string: 'a\nb\n', new_string: 'c' }, 'file_edit'))).toEqual({
      type: 'diff',
      path: '/r/a.ts',
      lines: [
        { sign: '-', text: 'a' },
        { sign: '-', text: 'b' },
        { sign: '+', text: 'c' },
      ],
    });
    const multi = toolInput(call('MultiEdit', { file_path: '/r/a', edits: [{ old_string: 'x', new_string: 'y' }] }, 'file_edit'));
    expect(multi.type === 'diff' && multi.lines.map((l) => l.sign).join('')).toBe('@-+');
    const write = toolInput(call('Write', { file_path: '/r/n', content: 'new\nfile' }, 'file_edit'));
    expect(write.type === 'diff' && write.lines.every((l) => l.sign === '+')).toBe(true);
  });

  it('shows apply_patch in its three forms as a diff', () => {
    const patch = '*** Begin Patch\n*** Update File: a.txt\n@@\n-old\n+new\n*** End Patch';
    for (const input of [patch, { input: patch }, { command: ['apply_patch', patch] }]) {
      const shown = toolInput(call('apply_patch', input));
      expect(shown.type).toBe('diff');
      expect(shown.type === 'diff' && shown.lines.filter((l) => l.sign === '+' || l.sign === '-')).toEqual([
        { sign: '-', text: 'old' },
        { sign: '+', text: 'new' },
      ]);
    }
  });

  it('shows exec as a command line', () => {
    expect(toolInput(call('Bash', { command: 'cargo test', description: 'Run the tests' }, 'exec'))).toEqual({
      type: 'command',
      command: 'cargo test',
      description: 'Run the tests',
    });
    expect(toolInput(call('shell', { command: ['bash', '-lc', 'ls'] }, 'exec'))).toMatchObject({ command: 'bash -lc ls' });
  });

  it('falls back to JSON, and folds long input', () => {
    const shown = toolInput(call('WebSearch', { query: 'x'.repeat(700) }));
    expect(shown.type).toBe('json');
    expect(inputFolds(shown)).toBe(true);
    expect(toolInput({ ...call('X', null), tool_input: null })).toEqual({ type: 'none' });
  });
});

describe('record text', () => {
  it('names who wrote a record', () => {
    const [user, edit, , result] = fakeRecords(0);
    expect(recordHeading(user!)).toBe('User');
    expect(recordHeading({ ...user!, prompt_source: 'system_injected' })).toBe('Injected prompt');
    expect(recordHeading(edit!)).toBe('Edit');
    expect(recordHeading(result!)).toBe('Result of Bash');
  });

  it('folds to the first lines', () => {
    expect(firstLines('a\nb\nc\nd', 2)).toEqual({ text: 'a\nb', cut: true });
    expect(firstLines('a\nb', 2)).toEqual({ text: 'a\nb', cut: false });
  });

  it('reports failures', () => {
    const result = fakeRecords(0)[3]!;
    expect(outcomeLabel({ ...result, exit_code: 2 })).toBe('exit 2');
    expect(outcomeLabel({ ...result, exit_code: 0 })).toBeNull();
    expect(outcomeLabel({ ...result, exit_code: null, outcome: 'failed' })).toBe('failed');
    // What the archive stores for a result that went well is no problem to show.
    expect(outcomeLabel({ ...result, exit_code: null, outcome: 'succeeded' })).toBeNull();
    expect(outcomeLabel({ ...result, exit_code: 0, outcome: 'succeeded' })).toBeNull();
  });

  it('splits a search snippet into marked and plain text', () => {
    expect(snippetParts(`ran ${S}cargo${E} then [${S}test${E}]!`)).toEqual([
      { text: 'ran ', match: false },
      { text: 'cargo', match: true },
      { text: ' then [', match: false },
      { text: 'test', match: true },
      { text: ']!', match: false },
    ]);
  });

  it('takes colour codes out of a snippet and keeps its marks in step', () => {
    // A match around coloured words, a match inside a colour code's letters, and one inside an
    // OSC window title: the words stay marked, the codes go, and no mark is left open.
    const snippet = `\x1b[32m${S}ok${E}\x1b[0m \x1b[${S}31m${E}red \x1b]0;${S}title${E}\x07 ${S}done${E}`;
    expect(snippetParts(snippet)).toEqual([
      { text: 'ok', match: true },
      { text: ' red  ', match: false },
      { text: 'done', match: true },
    ]);
  });
});
