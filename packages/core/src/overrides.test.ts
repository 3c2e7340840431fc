import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { runCommand } from './cli.js';
import type { CliIo, CommandContext } from './cli.js';
import { deepMerge } from './config-file.js';
import { applyOverrides, parseWithOverrides, splitDottedFlags } from './overrides.js';

/** A config shaped as `rlvr train`'s, as its JSON Schema (the input side, as editors see it). */
const TrainLike = z
  .object({
    seed: z.number().int().default(0),
    estimator: z.string().default('grail'),
    estimatorConfig: z.record(z.string(), z.unknown()).default({}),
    plugins: z.array(z.string()).default([]),
    data: z.object({ train: z.string(), eval: z.string().optional() }).strict().optional(),
    trainer: z
      .object({
        clipLow: z.number().default(0.2),
        dualClip: z.number().nullable().default(null),
        schedule: z.union([
          z.object({ type: z.literal('constant'), lr: z.number().positive() }).strict(),
          z.object({ type: z.literal('cosine'), lr: z.number().positive(), totalSteps: z.number() }).strict(),
        ]),
      })
      .strict()
      .optional(),
    eval: z
      .object({ greedy: z.boolean().default(true) })
      .strict()
      .default({ greedy: true }),
    // a plugin backend's options: any value, checked later by the backend's own schema
    saliency: z.object({ refresh: z.string().optional() }).catchall(z.unknown()).optional(),
  })
  .strict();
const train = z.toJSONSchema(TrainLike, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
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

  test("a key of an unconstrained option (a plugin backend's options) is set as read: JSON where it parses, else the string", () => {
    const config = applyOverrides(
      {},
      [o('--saliency.process-steps.tokenizer', 'runs/x/checkpoint'), o('--saliency.process-steps.concurrency', '8')],
      train,
    );
    expect(config).toEqual({ saliency: { 'process-steps': { tokenizer: 'runs/x/checkpoint', concurrency: 8 } } });
  });

  test('an unknown path names the keys that exist there', () => {
    expect(() => applyOverrides({}, [o('--trainer.lrr', '1')], train)).toThrow(
      /^--trainer\.lrr: unknown option: trainer has no key "lrr" \(keys: clipLow, /,
    );
    expect(() => applyOverrides({}, [o('--stepz', '1')], train)).toThrow(/unknown option: the config has no key "stepz"/);
    // a typo names the nearest key, as a flag
    expect(() => applyOverrides({}, [o('--trainer.cliplow', '1')], train)).toThrow(
      /^--trainer\.cliplow: unknown option: trainer has no key "cliplow" \(did you mean --trainer\.clipLow\?\) \(keys: clipLow, /,
    );
    expect(() => applyOverrides({}, [o('--seed.x', '1')], train)).toThrow('--seed.x: unknown option: seed takes a value, not options');
    expect(() => applyOverrides({}, [o('--plugins', 'a.mjs')], train)).toThrow(/--plugins: takes JSON here/);
    expect(() => applyOverrides({}, [o('--estimator.wMin', '0.3')], train)).toThrow(
      "--estimator.wMin: unknown option: estimator takes a value, not options (the estimator's options are --estimatorConfig.KEY)",
    );
  });

  test('parseWithOverrides: a schema error at an overridden path names the flag; any other stays the parser error', () => {
    const parse = (c: Record<string, unknown>) => {
      const r = TrainLike.safeParse(c);
      if (r.success) return r.data;
      throw new Error('invalid config', { cause: r.error });
    };
    const lr = o('--trainer.schedule.lr', '-1');
    expect(() => parseWithOverrides(parse, { trainer: { schedule: { type: 'constant', lr: 1 } } }, [lr], train)).toThrow(
      /^--trainer\.schedule\.lr: .* \(got "-1"\)$/,
    );
    expect(() => parseWithOverrides(parse, { seed: 'x' }, [o('--eval.greedy', 'false')], train)).toThrow('invalid config');
    expect(parseWithOverrides(parse, {}, [o('--eval.greedy', 'false')], train).eval).toEqual({ greedy: false });
  });

  test('a dotted command gets its dotted flags as ctx.overrides; core parses the rest; a malformed one exits 2 with a line naming --help', async () => {
    const out: string[] = [];
    const io: CliIo = { stdout: { write: (s: string) => out.push(s) }, stderr: { write: (s: string) => out.push(s) } };
    let seen: CommandContext | undefined;
    const command = {
      usage: 'usage: t [--out DIR] [--KEY.KEY VALUE]',
      options: { out: { type: 'string' } },
      dotted: true,
      run: async (ctx: CommandContext) => {
        seen = ctx;
      },
    } as const;
    expect(await runCommand('t', command, ['--a.b', '1', '--out', 'x', '--c.d=2'], io)).toBe(0);
    expect(seen?.values.out).toBe('x');
    expect(seen?.overrides).toEqual([o('--a.b', '1'), o('--c.d', '2')]);
    expect(await runCommand('t', command, ['--a.b'], io)).toBe(2);
    expect(out.join('')).toBe('t: --a.b: takes a value (e.g. --a.b VALUE or --a.b=VALUE)\n(t --help lists the options)\n');
    // without `dotted`, a dotted flag is an unknown option
    expect(await runCommand('t', { ...command, dotted: false }, ['--a.b', '1'], io)).toBe(2);
  });

  test('deepMerge: objects key by key, anything else replaces', () => {
    expect(deepMerge({ a: { b: 1, c: [1] }, d: 1 }, { a: { c: [2] }, e: 2 })).toEqual({ a: { b: 1, c: [2] }, d: 1, e: 2 });
  });
});
