import { execFileSync } from 'node:child_process';

/** The child's environment: cpu backend, and no FORCE_COLOR (set by test runners and CI), which would colour console.log's numbers. */
function plainEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, RLVR_TFJS_BACKEND: 'cpu', NO_COLOR: '1' };
  delete env.FORCE_COLOR;
  return env;
}
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const PKG = fileURLToPath(new URL('..', import.meta.url));
const built = existsSync(join(PKG, 'dist', 'index.js'));

// Plain Node (not vitest's resolver) against the built package: the README example must run as
// published, and tfjs gradients must be registered under Node's ESM loader. Needs `tsc -b` first
// (nx builds before test); skipped, and says so, without a build.
describe.skipIf(!built)('README example through the built package in plain Node', () => {
  it('runs and prints the loss, gradient count and the embedding-gradient shape', () => {
    const readme = readFileSync(join(PKG, 'README.md'), 'utf8');
    const code = /```ts\n([\s\S]*?)```/.exec(readme)![1].replace(/ as tf\.Tensor3D/g, '');
    // Inside the package, so that '@rlvr/policy' resolves through the workspace link.
    const dir = mkdtempSync(join(PKG, '.readme-'));
    const file = join(dir, 'example.mjs');
    writeFileSync(file, code);
    let out: string;
    try {
      out = execFileSync(process.execPath, [file], { encoding: 'utf8', env: plainEnv(), cwd: PKG });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const lines = out.trim().split('\n');
    expect(lines[0]).toMatch(/^tfjs backend: cpu/);
    const [loss, n] = lines[1].split(' ').map(Number);
    expect(Math.abs(loss - Math.log(257))).toBeLessThan(0.5); // a random model is near uniform over its ~260 tokens
    expect(n).toBe(2 + 2 * 11 + 1); // embed + final norm + lm_head + 2 layers x 11
    expect(lines[2]).toBe('[ 1, 7, 64 ]'); // "1 + 1 = 2" is 7 cl100k tokens
  });
});
