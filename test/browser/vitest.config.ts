import { defineConfig } from 'vitest/config';

// Timeouts only catch hangs: no test asserts a timing, and CI machines are shared and slow.
export default defineConfig({
  test: { testTimeout: 300_000, hookTimeout: 300_000 },
});
