import { selectBackend } from '../backend.js';

/**
 * Start the webgpu backend once, to learn whether the tests that need it can run here: null when
 * it starts, else ` (skipped: WHY)` to append to their names, so that a skipped test says why in
 * one line. Leaves the cpu backend selected.
 */
export async function webgpuSkip(): Promise<string | null> {
  try {
    await selectBackend({ backend: 'webgpu' });
    return null;
  } catch (e) {
    return ` (skipped: ${(e as Error).message})`;
  } finally {
    await selectBackend({ backend: 'cpu' });
  }
}
