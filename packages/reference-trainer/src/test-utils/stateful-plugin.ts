import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Write a third-party plugin module into `dir` and return its path: it registers `running-baseline`
 * through the general contract (`api.defineMethod`), a stateful method: advantage = reward minus the
 * mean of every reward seen so far (this step's included), its state the count and the sum (a
 * `Float64Array`) carried from step to step. A resume that lost the state would change every later
 * advantage.
 */
export async function writeStatefulPlugin(dir: string): Promise<string> {
  const file = join(dir, 'running.mjs');
  await writeFile(
    file,
    `export function register(api) {
  api.registerEstimator(api.defineMethod({
    name: 'running-baseline',
    description: 'reward minus the running mean reward of the run',
    configSchema: api.z.strictObject({}),
    needs: [],
    compute({ batch, state }, out) {
      let n = state ? state.n : 0;
      let sum = state ? state.sum[0] : 0;
      for (let i = 0; i < batch.numRollouts; i++) sum += batch.rewards[i];
      n += batch.numRollouts;
      for (let i = 0; i < batch.numRollouts; i++)
        out.fill(batch.rewards[i] - sum / n, batch.completionOffsets[i], batch.completionOffsets[i + 1]);
      return { metrics: { running_mean: sum / n }, state: { n, sum: Float64Array.of(sum) } };
    },
  }));
}\n`,
  );
  return file;
}
