import { defineConfig } from 'vitest/config';

// The machine running the tests is often shared; numerical tests on tfjs-cpu can take seconds.
export default defineConfig({ test: { testTimeout: 60_000, hookTimeout: 60_000 } });
