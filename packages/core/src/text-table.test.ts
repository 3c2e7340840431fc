import { describe, expect, it } from 'vitest';
import { StatusLine, percent, stoppable, textTable, timestamp } from './index.js';

describe('textTable and percent', () => {
  it('align the first column left and the others right, with an optional rule', () => {
    expect(
      textTable(
        ['name', 'x'],
        [
          ['a', '1.00'],
          ['longer', '2'],
        ],
      ),
    ).toBe(['name       x', '------  ----', 'a       1.00', 'longer     2'].join('\n'));
    expect(textTable(['a', 'bb'], [['xyz', '1']], { rule: false })).toBe(['a    bb', 'xyz   1'].join('\n'));
  });

  it('format rates with one decimal and anything not finite as -', () => {
    expect(percent(0.5123)).toBe('51.2%');
    expect(percent(1)).toBe('100.0%');
    expect(percent(Number.NaN)).toBe('-');
    expect(percent(undefined)).toBe('-');
  });
});

describe('StatusLine', () => {
  const sink = () => {
    const out: string[] = [];
    return { out, stream: { write: (s: string) => out.push(s) } };
  };

  it('off a terminal prints only the asked-for status lines, with no control codes', () => {
    const { out, stream } = sink();
    const s = new StatusLine(stream, 'rlvr eval', { live: false });
    s.status('1/10', false);
    s.status('5/10', true);
    s.line('a\n  message');
    s.done();
    expect(out.join('')).toBe('rlvr eval: 5/10\nrlvr eval: a message\n');
  });

  it('on a terminal redraws in place and keeps the status below messages', () => {
    const { out, stream } = sink();
    const s = new StatusLine(stream, 'p', { live: true });
    s.status('1/2', false);
    s.line('hello');
    s.status('2/2', false);
    s.done();
    expect(out.join('')).toBe('p: 1/2' + '\r\x1b[2K' + 'p: hello\n' + 'p: 1/2' + '\r\x1b[2K' + 'p: 2/2' + '\n');
  });

  it('prints nothing when quiet', () => {
    const { out, stream } = sink();
    const s = new StatusLine(stream, 'p', { live: true, quiet: true });
    s.status('x', true);
    s.line('y');
    s.done();
    expect(out).toEqual([]);
  });

  it('stoppable says once that Ctrl-C stops after this step, and closes the status line however the work ends', async () => {
    const { out, stream } = sink();
    const s = new StatusLine(stream, 'p', { live: false });
    const logger = { info: (m: string) => s.line(m), done: () => out.push('<done>') };
    const controller = new AbortController();
    const result = await stoppable(controller.signal, logger, async () => {
      controller.abort();
      return 7;
    });
    expect(result).toBe(7);
    expect(out).toEqual(['p: stopping after this step (Ctrl-C again to exit now)\n', '<done>']);
    await expect(stoppable(new AbortController().signal, logger, () => Promise.reject(new Error('x')))).rejects.toThrow('x');
    expect(out.at(-1)).toBe('<done>');
    expect(out).toHaveLength(3);
  });

  it('stoppable names a signal other than SIGINT (the reason cliMain aborts with): SIGTERM is not Ctrl-C', async () => {
    const { out, stream } = sink();
    const s = new StatusLine(stream, 'p', { live: false });
    const controller = new AbortController();
    await stoppable(controller.signal, { info: (m: string) => s.line(m), done() {} }, async () => {
      controller.abort(new DOMException('interrupted by SIGTERM', 'AbortError'));
      return 0;
    });
    expect(out).toEqual(['p: SIGTERM: stopping after this step (a second SIGTERM or Ctrl-C exits now)\n']);
  });

  it('timestamps in UTC, sortable', () => {
    expect(timestamp(new Date('2026-12-03T06:15:00.123Z'))).toBe('20261203-061500');
  });
});
