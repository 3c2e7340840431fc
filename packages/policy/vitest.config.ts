import { defineConfig } from 'vitest/config';

// The machine running the tests is often shared; numerical tests on tfjs-cpu can take seconds.
export default defineConfig({ test: { testTimeout: 300_000, hookTimeout: 300_000 } });
