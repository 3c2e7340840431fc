import { describe, expect, test } from 'vitest';
import { configJsonSchemas } from './config-schema.js';
import { applyOverrides, deepMerge, splitDottedFlags } from './overrides.js';

const train = configJsonSchemas().train;
const o = (flag: string, value: string) => ({ flag, path: flag.slice(2).split('.'), value });

describe('dotted flags', () => {
  test('--a.b VALUE and --a.b=VALUE come out of the arguments, in order, up to --', () => {
    expect(
      splitDottedFlags(['--trainer.schedule.lr', '1e-5', '--out', 'x', '--eval.greedy=false', '--w.x=-1', '--', '--c.d', '2']),
    ).toEqual({
      rest: ['--out', 'x', '--', '--c.d', '2'],
      overrides: [o('--trainer.schedule.lr', '1e-5'), o('--eval.greedy', 'false'), o('--w.x', '-1')],
    });
  });

  test('a dotted flag without a value, or with an empty part, is a usage error naming it', () => {
    expect(() => splitDottedFlags(['--eval.greedy'])).toThrow(
      '--eval.greedy: takes a value (e.g. --eval.greedy VALUE or --eval.greedy=VALUE)',
    );
    expect(() => splitDottedFlags(['--eval.greedy', '--out', 'x'])).toThrow('--eval.greedy: takes a value');
    expect(() => splitDottedFlags(['--a..b', '1'])).toThrow('--a..b: is not a dotted option path (an empty part)');
  });

  test("values are read as the option's type; the config is not changed", () => {
    const config = { trainer: { clipLow: 0.1 } };
    const out = applyOverrides(
      config,
      [
        o('--trainer.schedule.lr', '1e-5'),
        o('--eval.greedy', 'false'),
        o('--trainer.dualClip', 'null'),
        o('--data.train', '123'),
        o('--plugins', '["a.mjs"]'),
        o('--estimatorConfig.symmetry', 'both'),
        o('--estimatorConfig.wMin', '0.3'),
      ],
      train,
    );
    expect(out).toEqual({
      trainer: { clipLow: 0.1, schedule: { lr: 1e-5 }, dualClip: null },
      eval: { greedy: false },
      data: { train: '123' },
      plugins: ['a.mjs'],
      estimatorConfig: { symmetry: 'both', wMin: 0.3 },
    });
    expect(config).toEqual({ trainer: { clipLow: 0.1 } });
  });

  test('an unknown path names the keys that exist there', () => {
    expect(() => applyOverrides({}, [o('--trainer.lrr', '1')], train)).toThrow(
      /^--trainer\.lrr: unknown option: trainer has no key "lrr" \(keys: clipLow, /,
    );
    expect(() => applyOverrides({}, [o('--stepz', '1')], train)).toThrow(/unknown option: the config has no key "stepz"/);
    expect(() => applyOverrides({}, [o('--seed.x', '1')], train)).toThrow('--seed.x: unknown option: seed takes a value, not options');
    expect(() => applyOverrides({}, [o('--plugins', 'a.mjs')], train)).toThrow(/--plugins: takes JSON here/);
  });

  test('deepMerge: objects key by key, anything else replaces', () => {
    expect(deepMerge({ a: { b: 1, c: [1] }, d: 1 }, { a: { c: [2] }, e: 2 })).toEqual({ a: { b: 1, c: [2] }, d: 1, e: 2 });
  });
});
