/**
 * Estimator options are typed per estimator. Two checks: the `@ts-expect-error` lines below make
 * `tsc -p tsconfig.test.json` (the package's typecheck target) fail if a bad call ever compiles,
 * and the vitest cases compile snippets with the TypeScript compiler itself and assert what each
 * diagnostic says, so a line cannot pass by failing for another reason.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';
import { estimateAdvantages, getEstimator, prepareEstimator } from './index.js';

// --- compile-time checks (typecheck target) -------------------------------------------------
export function compileTimeChecks(dynamicName: string, fromJson: unknown): void {
  // @ts-expect-error symmetry is "wrong" | "correct" | "both"
  prepareEstimator('grail', { symmetry: 42 });
  // @ts-expect-error tau is OAR-G's, not GRAIL's
  prepareEstimator('grpo+grail', { tau: 0.3 });
  // @ts-expect-error scaleRewards is "group" | "batch"
  prepareEstimator('grpo', { scaleRewards: 'none' });
  // @ts-expect-error dr-grpo has no options
  estimateAdvantages('dr-grpo', undefined as never, undefined as never, { bessel: false });
  // composed names take both parts' options, and the resolved config is typed
  const p = prepareEstimator('rloo+oar-g', { tau: 0.3, beta: 1 });
  const tau: number = p.config.tau;
  // @ts-expect-error tau is a number
  const notString: string = p.config.tau;
  // a name known only at run time takes anything: the run-time check names what is wrong
  prepareEstimator(dynamicName, fromJson);
  // a name outside the map (a plugin that declared no types) takes any object
  prepareEstimator('grpo+my-weighting', { whatever: 1 });
  void [tau, notString, getEstimator('grail').configSchema.shape.symmetry];
}

// --- the same, asserted on the compiler's own diagnostics ----------------------------------
const here = dirname(fileURLToPath(import.meta.url));
const baseOptions = JSON.parse(readFileSync(join(here, '../../../tsconfig.base.json'), 'utf8')).compilerOptions as Record<string, unknown>;

/**
 * Compiles `files` (name -> source, as files of this package's src, so imports resolve to the
 * sources) in one program and returns each file's diagnostics. Module augmentations are global to
 * the program, as they are in a user's.
 */
function diagnostics(files: Record<string, string>): Record<string, string[]> {
  const paths = new Map(Object.entries(files).map(([name, text]) => [join(here, `__${name}__.ts`), text]));
  const { options } = ts.convertCompilerOptionsFromJson(
    { ...baseOptions, noEmit: true, composite: false, declaration: false, declarationMap: false, sourceMap: false },
    here,
  );
  const host = ts.createCompilerHost(options);
  const read = host.getSourceFile.bind(host);
  const exists = host.fileExists.bind(host);
  host.getSourceFile = (name, lang, ...rest) =>
    paths.has(name) ? ts.createSourceFile(name, paths.get(name)!, lang) : read(name, lang, ...rest);
  host.fileExists = (name) => paths.has(name) || exists(name);
  const program = ts.createProgram([...paths.keys()], options, host);
  const out: Record<string, string[]> = {};
  for (const [path] of paths) {
    const name = Object.keys(files).find((n) => path.endsWith(`__${n}__.ts`))!;
    out[name] = ts
      .getPreEmitDiagnostics(program, program.getSourceFile(path))
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  }
  return out;
}

const use = (line: string) =>
  `import { prepareEstimator } from './index.js';\nimport { PowSchema } from './__augment__.js';\nvoid PowSchema;\n${line}\n`;

/** The snippets: good calls, bad ones, and a third party's declared weighting. */
const SNIPPETS: Record<string, string> = {
  ok: `import { prepareEstimator } from './index.js';
const a = prepareEstimator('grail', { symmetry: 'both', sigmaW: 1 });
const b = prepareEstimator('grpo+grail', { bessel: false, wMax: 3 });
const c = prepareEstimator('reinforce-pp-baseline', { degenerateGroups: 'whiten' });
const n: number = a.config.sigmaW + b.config.wMax;
const k: 'exclude' | 'whiten' = c.config.degenerateGroups;
void [n, k];`,
  symmetry: use(`prepareEstimator('grail', { symmetry: 42 });`),
  tau: use(`prepareEstimator('grpo+grail', { tau: 0.3 });`),
  sigma: use(`prepareEstimator('rloo+oar-g', { tau: 0.3, sigmaW: 1 });`),
  // a third party declares its weighting's schema by module augmentation
  augment: `import { z } from 'zod';
export const PowSchema = z.strictObject({ power: z.number().default(1) });
declare module './index.js' {
  interface WeightingSchemas { pow: typeof PowSchema }
}`,
  powOk: use(`prepareEstimator('grpo+pow', { power: 2, bessel: false });`),
  powBad: use(`prepareEstimator('grpo+pow', { power: 'high' });`),
  powUnknown: use(`prepareEstimator('grpo+pow', { sigmaW: 1 });`),
};

describe('estimator options are typed by name (the TypeScript compiler on snippets)', () => {
  // one program for every snippet: seconds of type checking, in a hook so its timeout applies
  let d: Record<string, string[]> = {};
  beforeAll(() => {
    d = diagnostics(SNIPPETS);
  });

  it('accepts good options and types the resolved config', () => {
    expect(d.ok).toEqual([]);
  });
  it('names the bad field and the allowed values', () => {
    // the allowed values, in whatever order the compiler prints the union
    expect(d.symmetry!.join('\n')).toMatch(/Type 'number' is not assignable to type '(?=[^']*"wrong")(?=[^']*"correct")(?=[^']*"both")/);
    expect(d.tau!.join('\n')).toMatch(/'tau' does not exist in type/);
    expect(d.sigma!.join('\n')).toMatch(/'sigmaW' does not exist in type/);
  });
  it('types a third party’s weighting once it declares its schema', () => {
    expect(d.augment).toEqual([]);
    expect(d.powOk).toEqual([]);
    expect(d.powBad!.join('\n')).toMatch(/Type 'string' is not assignable to type 'number'/);
    expect(d.powUnknown!.join('\n')).toMatch(/'sigmaW' does not exist in type/);
  });
  it('checks at run time what a dynamic name cannot check at compile time', () => {
    expect(() => prepareEstimator('grail' as string, { symmetry: 42 })).toThrow(
      /symmetry: must be one of "wrong", "correct", "both" \(got 42\)/,
    );
  });
});
