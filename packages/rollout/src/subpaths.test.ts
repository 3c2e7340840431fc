import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const PACKAGE_DIR = fileURLToPath(new URL('..', import.meta.url));

/**
 * A resolve hook that refuses a module whose specifier starts with one of `banned` (or equals it,
 * for an entry ending in `$`): importing the entry then fails, naming the module and who imported
 * it. Runs in a fresh node on the built package.
 */
function importWithout(entry: string, banned: string[]): { status: number | null; stderr: string; stdout: string } {
  const hook = `export async function resolve(specifier, context, next) {
    if (${JSON.stringify(banned)}.some((b) => (b.endsWith('$') ? specifier === b.slice(0, -1) : specifier.startsWith(b)))) throw new Error('loaded ' + specifier + ' from ' + context.parentURL);
    return next(specifier, context);
  }`;
  const register = `import { register } from 'node:module'; register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hook)}));`;
  const main = `const m = await import(${JSON.stringify(entry)}); console.log(Object.keys(m).sort().join(','));`;
  const r = spawnSync(
    process.execPath,
    ['--import', `data:text/javascript,${encodeURIComponent(register)}`, '--input-type=module', '-e', main],
    { cwd: PACKAGE_DIR, encoding: 'utf8' },
  );
  return { status: r.status, stderr: r.stderr, stdout: r.stdout };
}

describe('subpath exports without TensorFlow.js (issue 14)', () => {
  it('@rlvr/rollout/http loads no tfjs module and no @rlvr/policy model code', () => {
    const r = importWithout('@rlvr/rollout/http', ['@tensorflow/', '@rlvr/policy$']);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout.trim().split(',')).toEqual(
      expect.arrayContaining(['httpSampler', 'sampleGroups', 'spanLocator', 'promptBuilder', 'loadTasks', 'syntheticGenerator']),
    );
  });

  it('@rlvr/rollout/spans loads neither tfjs nor a tokenizer engine', () => {
    const r = importWithout('@rlvr/rollout/spans', ['@tensorflow/', '@rlvr/policy', 'tiktoken', '@huggingface/']);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout.trim().split(',')).toEqual([
      'RolloutError',
      'SpanOptionsSchema',
      'VocabFileSchema',
      'fillBatchSpans',
      'loadVocab',
      'locateAnswerSpans',
      'spanLocator',
      'vocabFromJson',
    ]);
  });

  it('the hook does catch tfjs: the main entry loads it', () => {
    const r = importWithout('@rlvr/rollout', ['@tensorflow/']);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/loaded @tensorflow\/tfjs-core from file:.*\/dist\//);
  });
});
