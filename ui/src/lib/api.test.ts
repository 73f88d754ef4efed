import { describe, expect, it } from 'vitest';
import { inertAnswers } from './api';

describe('inertAnswers', () => {
  it('cleans what every command answers, its data and its error, and passes its arguments on', async () => {
    const commands = {
      echo: async (text: string, n: number) => ({ status: 'ok' as const, data: { text, n } }),
      fail: async () => ({ status: 'error' as const, error: { kind: 'invalid', message: 'no \u202Ebranch\u202C \x1b[31mx' } }),
    };
    const api = inertAnswers(commands);
    expect(await api.echo('cat invoice_\u202Egpj.exe', 2)).toEqual({
      status: 'ok',
      data: { text: 'cat invoice_gpj.exe', n: 2 },
    });
    expect(await api.fail()).toEqual({ status: 'error', error: { kind: 'invalid', message: 'no branch x' } });
  });
});
