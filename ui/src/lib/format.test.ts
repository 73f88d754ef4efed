import { describe, expect, it } from 'vitest';
import {
  agentFilterName,
  agentLabel,
  branchSessions,
  branchSessionsBrief,
  codePieces,
  displayText,
  inert,
  messagePieces,
  plainPreview,
  inWords,
  timeOrText,
  count,
  projectLabel,
  relativeTime,
  sentenceStart,
  sessionTitle,
  splitPreview,
  whyEvidence,
} from './format';
import { fakeSession } from '../testing/sessions';

const now = Date.parse('2026-11-30T12:00:00Z');

describe('relativeTime', () => {
  it.each([
    ['2026-11-30T11:59:40Z', 'just now'],
    ['2026-11-30T11:55:00Z', '5 min ago'],
    ['2026-11-30T09:00:00Z', '3 h ago'],
    ['2026-11-29T10:00:00Z', 'yesterday'],
    ['2026-11-26T12:00:00Z', '4 d ago'],
    ['2026-03-12T12:00:00Z', 'Mar 12, 2026'],
  ])('%s reads as %s', (iso, expected) => {
    expect(relativeTime(iso, now)).toBe(expected);
  });

  it('is empty for a missing or unreadable time', () => {
    expect(relativeTime(null, now)).toBe('');
    expect(relativeTime('not a date', now)).toBe('');
  });
});

describe('sessionTitle', () => {
  it('is the first non-blank line of the title', () => {
    expect(sessionTitle({ ...fakeSession(1), title: '\n  Fix the parser \nand more' })).toBe('Fix the parser');
  });

  it('reads the Markdown of a title or prompt, heading marks included', () => {
    expect(sessionTitle({ ...fakeSession(1), title: '## Fix the **parser**\nmore' })).toBe('Fix the parser');
  });

  it('falls back to the first prompt, then says there was none, as the CLI does', () => {
    expect(sessionTitle({ ...fakeSession(1), title: null, first_prompt: '\nAdd a --json flag\nto sync' })).toBe(
      'Add a --json flag',
    );
    const untitled = { ...fakeSession(1), title: null, first_prompt: null };
    // The Codex rate-limit fixture's session: `cairn sessions` heads it "(no prompt)".
    expect(sessionTitle({ ...untitled, session_id: 'test-ratelimit-session' })).toBe('(no prompt)');
    expect(sessionTitle({ ...untitled, title: '  ', first_prompt: ' \n ', session_id: null })).toBe('(no prompt)');
  });
});

describe('whyEvidence', () => {
  it('says what a search matched, not the legs that found it', () => {
    expect(whyEvidence('search', 'found by turns')).toEqual({ label: 'matched', detail: 'its turns, by their words or meaning' });
    expect(whyEvidence('search', 'found by turns, paths, links').detail).toBe(
      'its turns, by their words or meaning; a file it edited, by name; a branch, review or commit it is linked to, by name',
    );
    expect(whyEvidence('search', 'edited src/login.ts, src/a.rs')).toEqual({
      label: 'matched',
      detail: 'files it edited, by name: src/login.ts, src/a.rs',
    });
    // A reason the window does not know yet is shown as the core names it.
    expect(whyEvidence('search', 'found by turns, tags').detail).toBe('its turns, by their words or meaning; tags');
  });

  it('names any other evidence as the core does', () => {
    expect(whyEvidence('wrote_line', 'wrote 3 of 3 added lines')).toEqual({ label: 'wrote line', detail: 'wrote 3 of 3 added lines' });
  });
});

describe('projectLabel', () => {
  it('prefers the project, else the last part of the directory', () => {
    expect(projectLabel({ ...fakeSession(1), project: 'cairn' })).toBe('cairn');
    expect(projectLabel({ ...fakeSession(1), project: null, cwd: '/home/dev/cairn/' })).toBe('cairn');
    expect(projectLabel({ ...fakeSession(1), project: null, cwd: null })).toBe('');
  });
});

describe('branchSessions', () => {
  it('never says "0 sessions" of a branch where sessions ran', () => {
    expect(branchSessions(0, 1)).toBe('1 session ran here, none landed work');
    expect(branchSessions(2, 1)).toBe('2 sessions landed work, 1 more ran here');
    expect(branchSessions(3, 0)).toBe('3 sessions');
    expect(branchSessions(0, 0)).toBe('0 sessions');
  });

  it('has a brief form for a row of the branch list', () => {
    expect(branchSessionsBrief(0, 1)).toBe('1 ran here, none landed');
    expect(branchSessionsBrief(2, 1)).toBe('2 landed, 1 ran here');
    expect(branchSessionsBrief(1200, 3)).toBe('1,200 landed, 3 ran here');
    expect(branchSessionsBrief(3, 0)).toBe('3 sessions');
    expect(branchSessionsBrief(1, 0)).toBe('1 session');
  });
});

describe('count', () => {
  it('pluralises and groups digits', () => {
    expect(count(1, 'turn')).toBe('1 turn');
    expect(count(0, 'turn')).toBe('0 turns');
    expect(count(12345, 'record')).toBe('12,345 records');
    expect(count(2, 'retained copy')).toBe('2 retained copies');
    expect(count(1, 'entry')).toBe('1 entry');
    expect(count(3, 'day')).toBe('3 days');
    expect(agentLabel('claude')).toBe('Claude');
    expect(timeOrText('not a time')).toBe('not a time');
    expect(timeOrText(null)).toBe('');
    expect(timeOrText('2026-12-04T13:15:34Z')).not.toContain('T13');
    expect(agentLabel('qwen')).toBe('Qwen Code');
    expect(agentLabel('toString')).toBe('toString');
    expect(agentLabel('someday-agent')).toBe('someday-agent');
    // A filter's `atif` holds every session this build has no reader for; its badge keeps the format's name.
    expect(agentFilterName('atif')).toBe('Imported and other agents');
    expect(agentFilterName('claude')).toBe('Claude');
    expect(agentLabel('atif')).toBe('ATIF import');
  });
});

describe('sentenceStart', () => {
  it('capitalises the first letter only', () => {
    expect(sentenceStart('the Secret Service')).toBe('The Secret Service');
    expect(sentenceStart('the macOS keychain')).toBe('The macOS keychain');
    expect(sentenceStart('')).toBe('');
  });
});

describe('codePieces', () => {
  it('takes the quoted commands out of their backticks', () => {
    expect(codePieces('not installed; run `cairn hooks install --agent claude` first')).toEqual([
      { text: 'not installed; run ', code: false },
      { text: 'cairn hooks install --agent claude', code: true },
      { text: ' first', code: false },
    ]);
    expect(codePieces('`cairn sync` or `cairn skim`')).toEqual([
      { text: 'cairn sync', code: true },
      { text: ' or ', code: false },
      { text: 'cairn skim', code: true },
    ]);
  });

  it('leaves a lone or empty pair of backticks as text', () => {
    expect(codePieces('a ` alone')).toEqual([{ text: 'a ` alone', code: false }]);
    expect(codePieces('x `a` y ` z')).toEqual([
      { text: 'x ', code: false },
      { text: 'a', code: true },
      { text: ' y ` z', code: false },
    ]);
    expect(codePieces('empty `` pair')).toEqual([{ text: 'empty `` pair', code: false }]);
    expect(codePieces('')).toEqual([]);
  });

  it('keeps every character of the message', () => {
    for (const message of ['`a`b`c`', '```', 'plain', '<b>`x`</b>', '`\u001b[31m`']) {
      const joined = codePieces(message)
        .map((p) => (p.code ? `\`${p.text}\`` : p.text))
        .join('');
      expect(joined).toBe(message);
    }
  });
});

describe('inWords', () => {
  it('joins a list as a sentence does', () => {
    expect(inWords([])).toBe('');
    expect(inWords(['1 report'])).toBe('1 report');
    expect(inWords(['1 entry', '2 reports'])).toBe('1 entry and 2 reports');
    expect(inWords(['a', 'b', 'c'])).toBe('a, b and c');
  });
});

describe('displayText', () => {
  it.each([
    ['colour codes', '\x1b[32mok\x1b[0m and \x1b[1;31mfailed\x1b[m', 'ok and failed'],
    ['the C1 form of CSI', '\u009b33mwarn\u009b0m', 'warn'],
    ['a window title ended by BEL', '\x1b]0;build\x07done', 'done'],
    ['a hyperlink ended by ESC \\', '\x1b]8;;https://x.test\x1b\\link\x1b]8;;\x1b\\', 'link'],
    ['an unterminated OSC, to the end of its line', 'ok\x1b]0;never ends\nnext line', 'ok\nnext line'],
    ['two-character escapes and a charset choice', '\x1b7saved\x1b8 \x1b(Bascii', 'saved ascii'],
    ['a lone ESC at the end', 'end\x1b', 'end'],
  ])('takes out %s', (_, text, shown) => {
    expect(displayText(text)).toBe(shown);
  });

  it('never takes a record with it: an OSC without an end within 512 characters, or a lone C1', () => {
    const long = 'x'.repeat(600);
    expect(displayText(`a \x1b]0;${long}`)).toBe(`a 0;${long}`);
    // A mis-decoded quote (â\u0080\u009d … \u009c) loses its control characters, not the words between.
    expect(displayText('tail after a lone \u009d and the words \u009c that follow')).toBe('tail after a lone  and the words  that follow');
  });

  it('takes out direction controls, so an override cannot make a command or a file name read as another', () => {
    expect(displayText('rm -rf /tmp/safe \u202E; rm -rf ~ #\u202C (looks harmless)')).toBe(
      'rm -rf /tmp/safe ; rm -rf ~ # (looks harmless)',
    );
    expect(displayText('invoice_\u202Egpj.exe \u2066a\u2069 \u202Ab\u202C \u202Bc\u202C \u2067d\u2068e\u2069')).toBe(
      'invoice_gpj.exe a b c de',
    );
    // Right-to-left prose carries its own direction: its letters and marks stay.
    expect(displayText('שלום \u200Fעולם\u200E مرحبا')).toBe('שלום \u200Fעולם\u200E مرحبا');
  });

  it('leaves plain text, tabs and newlines as they are', () => {
    expect(displayText('a [32m b')).toBe('a [32m b');
    expect(displayText('tab\there\nnew line')).toBe('tab\there\nnew line');
  });

  it('takes out other control characters as the CLI does, a line-breaking one leaving a space between words', () => {
    // The core's own case (`printable_removes_whole_sequences`): BEL and NUL go, CR parts words.
    expect(displayText('a\rb\u0007c\nd\te\u0000')).toBe('a bc\nd\te');
    expect(displayText('50%\rdone, 50% \rdone, line\r\nnext')).toBe('50% done, 50% done, line\nnext');
    expect(displayText('page\fbreak\vtab\u0085nel\u007fdel\u0084ind\u001fus')).toBe('page break tab neldelindus');
    // A run with a line break in it is one cut: one space, not two.
    expect(displayText('a\u0007\r\u0000b')).toBe('a b');
  });

  it('takes out what is drawn as nothing and joins nothing, keeping the joiners and marks that shape text', () => {
    expect(displayText('sha\u200B256-ab\u2060c\uFEFFd\u206Ae\uFFF9f')).toBe('sha256-abcdef');
    expect(displayText('a\u200Cb\u00ADc \u{1F469}\u200D\u{1F4BB} \u200Fx')).toBe('a\u200Cb\u00ADc \u{1F469}\u200D\u{1F4BB} \u200Fx');
  });

  it('cleans session titles and previews too', () => {
    expect(sessionTitle({ ...fakeSession(1), title: '\x1b[32mGreen\x1b[0m title' })).toBe('Green title');
    expect(splitPreview('assistant: \x1b[31mno\x1b[0m')).toEqual({ who: 'assistant', text: 'no' });
  });

  it('reads the Markdown of a skim preview', () => {
    expect(splitPreview('assistant: Counted **3,124 Swift files** in `src/`')).toEqual({ who: 'assistant', text: 'Counted 3,124 Swift files in src/' });
  });
});

describe('messagePieces', () => {
  it('shows Markdown emphasis as emphasis, not asterisks', () => {
    const text = 'the API key variable must be the *name* of a variable, **never** the key: run `ls *.toml`';
    expect(messagePieces(text)).toEqual([
      { text: 'the API key variable must be the ', code: false, em: false },
      { text: 'name', code: false, em: true },
      { text: ' of a variable, ', code: false, em: false },
      { text: 'never', code: false, em: true },
      { text: ' the key: run ', code: false, em: false },
      { text: 'ls *.toml', code: true, em: false },
    ]);
  });

  it('leaves asterisks that are no emphasis as they are', () => {
    for (const text of ['no file matches *.rs or *.ts', '2 * 3 * 4', 'a*b*c', '* item']) {
      expect(messagePieces(text).map((p) => p.text).join(''), text).toBe(text);
      expect(messagePieces(text).some((p) => p.em), text).toBe(false);
    }
  });
});

describe('plainPreview', () => {
  it.each([
    ['The subagent counted **3,124 Swift files** in `/tmp/project`.', 'The subagent counted 3,124 Swift files in /tmp/project.'],
    ['**Bold** and *it* too', 'Bold and it too'],
    // Read twice (a title, then its row), code keeps its characters all the same.
    ['Why does `__main__` run twice?', 'Why does __main__ run twice?'],
    ['# Plan\n- read the code\n* fix it', 'Plan\nread the code\nfix it'],
    ['## Heading', 'Heading'],
    ['does not exist: ``` cat: /x: No such file ```', 'does not exist: cat: /x: No such file'],
  ])('%j reads as %j', (text, expected) => {
    expect(plainPreview(text)).toBe(expected);
    expect(plainPreview(plainPreview(text))).toBe(expected);
  });

  it.each([
    'match *.rs or *.ts',
    'src/*/*.rs',
    '2 * 3 = 6',
    'rename my_var_name and __init__.py',
    // Underscores are code's far more often than emphasis in a transcript: left alone.
    'Why does __main__ run twice when the _private_ helpers import it?',
    '/tmp/_cache_/x and C:\\_x_\\y',
    'a - b, # not a heading mid-line',
    '**unclosed and `unclosed',
  ])('leaves %j as it is', (text) => {
    expect(plainPreview(text)).toBe(text);
  });

  it('keeps the characters inside code and the search-match marks', () => {
    expect(plainPreview('run `**not bold**` then `a_b_c`')).toBe('run **not bold** then a_b_c');
    expect(plainPreview('**\u{E000}Swift\u{E001} files** in `\u{E000}x\u{E001}`')).toBe('\u{E000}Swift\u{E001} files in \u{E000}x\u{E001}');
  });

  it('takes out terminal escapes first, as displayText does', () => {
    expect(plainPreview('\x1b[1m**ok**\x1b[0m')).toBe('ok');
  });
});

describe('inert', () => {
  it('cleans every string value of an answer, however deep, and leaves keys and other values', () => {
    const answer = {
      status: 'ok',
      data: [
        { git_branch: 'evil\x1b[31m-\u202Ebranch', turn_count: 3, title: null, ok: true },
        { tools: ['cat invoice_\u202Egpj.exe'], nested: { deeper: ['\x1b]52;c;cGF3bmVk\x07x'] } },
      ],
    };
    expect(inert(answer)).toEqual({
      status: 'ok',
      data: [
        { git_branch: 'evil-branch', turn_count: 3, title: null, ok: true },
        { tools: ['cat invoice_gpj.exe'], nested: { deeper: ['x'] } },
      ],
    });
    expect(inert('\u202Ex')).toBe('x');
    expect(inert(7)).toBe(7);
  });

  it('leaves the fields the window sends back as they came, so they still name the same thing', () => {
    const repo = { root: '/src/a\u202Eb', name: 'a\u202Eb', path: '/home/x\x1b[31m', target_key: 'ref:refs/heads/f\u202Ex' };
    expect(inert(repo)).toEqual({ root: '/src/a\u202Eb', name: 'ab', path: '/home/x\x1b[31m', target_key: 'ref:refs/heads/f\u202Ex' });
  });
});
