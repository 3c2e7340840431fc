import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const PACKAGE_DIR = fileURLToPath(new URL('..', import.meta.url));

it('@rlvr/tasks loads neither tfjs nor a tokenizer engine (a resolve hook refuses them in a fresh node)', () => {
  const banned = ['@tensorflow/', '@rlvr/policy', 'tiktoken', '@huggingface/'];
  const hook = `export async function resolve(specifier, context, next) {
    if (${JSON.stringify(banned)}.some((b) => specifier.startsWith(b))) throw new Error('loaded ' + specifier + ' from ' + context.parentURL);
    return next(specifier, context);
  }`;
  const register = `import { register } from 'node:module'; register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hook)}));`;
  const main = `const m = await import('@rlvr/tasks'); process.stdout.write(Object.keys(m).length + ' ' + typeof m.labelTokens + '\\n');`;
  const r = spawnSync(
    process.execPath,
    ['--import', `data:text/javascript,${encodeURIComponent(register)}`, '--input-type=module', '-e', main],
    {
      cwd: PACKAGE_DIR,
      encoding: 'utf8',
    },
  );
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  expect(r.stdout).toMatch(/^\d+ function\n$/);
  // the hook does refuse: the tokenizer subpath loads tiktoken
  const t = spawnSync(
    process.execPath,
    [
      '--import',
      `data:text/javascript,${encodeURIComponent(register)}`,
      '--input-type=module',
      '-e',
      "await import('@rlvr/policy/tokenizer')",
    ],
    { cwd: PACKAGE_DIR, encoding: 'utf8' },
  );
  expect(t.status).not.toBe(0);
  expect(t.stderr).toMatch(/loaded @rlvr\/policy\/tokenizer/);
});
