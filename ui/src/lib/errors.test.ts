// Reading a failure: today's string errors, tomorrow's `{ kind, message, hint }`, and whatever
// else a promise rejects with, never shown as `[object Object]`.
import { describe, expect, it } from 'vitest';
import { problemOf, textOf } from './errors';

describe('problemOf', () => {
  it('reads a message alone', () => {
    expect(problemOf('database locked')).toEqual({ message: 'database locked', hint: null, kind: null });
    expect(problemOf(new Error('IPC is down'))).toEqual({ message: 'IPC is down', hint: null, kind: null });
  });

  it('reads a command error with its kind and hint', () => {
    expect(problemOf({ kind: 'locked', message: 'database locked', hint: 'Close the other window.' })).toEqual({
      message: 'database locked',
      hint: 'Close the other window.',
      kind: 'locked',
    });
    expect(problemOf({ kind: 'invalid', message: 'bad date', hint: null })).toEqual({ message: 'bad date', hint: null, kind: 'invalid' });
    expect(problemOf({ message: 'bad date' })).toEqual({ message: 'bad date', hint: null, kind: null });
  });

  it('drops fields of the wrong type or empty, and cuts a huge hint', () => {
    expect(problemOf({ message: 'm', hint: { html: '<b>' }, kind: 7 })).toEqual({ message: 'm', hint: null, kind: null });
    expect(problemOf({ message: 'm', hint: '   ' }).hint).toBeNull();
    expect(problemOf({ message: 'm', hint: 'h'.repeat(100_000) }).hint).toHaveLength(2000);
  });

  it('shows anything else as JSON or text, never as [object Object]', () => {
    expect(problemOf({ code: 5 }).message).toBe('{"code":5}');
    expect(problemOf({ message: 42 }).message).toBe('{"message":42}');
    expect(problemOf(null).message).toBe('null');
    expect(problemOf(undefined).message).toBe('undefined');
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(problemOf(cyclic).message).toBe('[object Object]');
  });
});

describe('one line of text', () => {
  it('is the message, with the hint after it when there is one', () => {
    expect(textOf({ kind: 'locked', message: 'database locked', hint: 'Close it.' })).toBe('database locked (Close it.)');
    expect(textOf('database locked')).toBe('database locked');
  });
});

describe('advice for the command line', () => {
  it('is said the window’s way: a missing session points at Sessions and Search', () => {
    const missing = problemOf({
      kind: 'not_found',
      message: 'not found: session "sha256-0011"; find sessions with `cairn sessions` or `cairn skim`',
      hint: null,
    });
    expect(missing).toEqual({ message: 'not found: session "sha256-0011"', hint: 'Find it in Sessions or Search.', kind: 'not_found' });
    // Read again (a store's Problem passed on to ErrorText), it stays the same.
    expect(problemOf(missing)).toEqual(missing);
    expect(problemOf('session "x"; find sessions with `cairn sessions`').message).toBe('session "x"');
    // As export, resume and a session's header word it.
    expect(problemOf({ kind: 'not_found', message: 'session "x"; list sessions with `cairn sessions`', hint: null })).toEqual({
      message: 'session "x"',
      hint: 'Find it in Sessions or Search.',
      kind: 'not_found',
    });
  });

  it('asks to try again rather than to run a command, and keeps a hint the core sent', () => {
    const settings = problemOf({
      kind: 'invalid',
      message: '/h/.claude/settings.json is not valid JSON (line 1); fix it or move it aside, then run the command again',
      hint: 'Open it in an editor.',
    });
    expect(settings.message).toBe('/h/.claude/settings.json is not valid JSON (line 1); fix it or move it aside, then try again');
    expect(settings.hint).toBe('Open it in an editor.');
  });
});
