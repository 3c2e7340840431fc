import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { composeEstimator, defineMethod, registerBaseline, registerEstimator, registerWeighting } from '@rlvr/advantages';
import { defineBackend, saliencyBackends } from '@rlvr/saliency';
import { z } from 'zod';
import { ReferenceTrainerError } from '../errors.js';

/**
 * What a plugin's `register` (or default) export receives: the registries of the `@rlvr/advantages`
 * and `@rlvr/saliency` instances this trainer uses, so that a plugin with its own copy of the
 * packages still registers where `rlvr train` looks, the builders of both contracts (`defineMethod`,
 * `defineBackend`), and the trainer's `zod` for config schemas.
 */
export const PLUGIN_API = {
  registerEstimator,
  registerWeighting,
  registerBaseline,
  composeEstimator,
  defineMethod,
  saliencyBackends,
  defineBackend,
  z,
} as const;
export type PluginApi = typeof PLUGIN_API;

/** Plugin files this process has loaded: loading one again is a no-op (its estimators are registered). */
const loaded = new Set<string>();

/**
 * Import each plugin module (a path, relative to `cwd`), once per process. A module registers estimators when
 * imported, or exports `register(api)` / a default function that is called with `PLUGIN_API`.
 * A missing file or a module that throws is one `ReferenceTrainerError` naming the file.
 */
export async function loadPlugins(paths: readonly string[], cwd = process.cwd()): Promise<void> {
  for (const p of paths) {
    const file = resolve(cwd, p);
    if (loaded.has(file)) continue;
    if (!existsSync(file)) throw new ReferenceTrainerError('missing_file', `plugin not found: ${p}`, { file, field: 'plugins' });
    let mod: Record<string, unknown>;
    try {
      mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
      const register = typeof mod.register === 'function' ? mod.register : typeof mod.default === 'function' ? mod.default : undefined;
      if (register !== undefined) await (register as (api: PluginApi) => unknown)(PLUGIN_API);
      loaded.add(file);
    } catch (err) {
      throw new ReferenceTrainerError(
        'invalid_config',
        `plugin failed to load: ${(err as Error).message}`,
        { file, field: 'plugins' },
        { cause: err },
      );
    }
  }
}
