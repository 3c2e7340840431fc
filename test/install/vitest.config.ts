import { defineConfig } from 'vitest/config';

// Timeouts only catch hangs: no test asserts a timing, and CI machines are shared and slow (packing 11
// packages and starting a process per bin takes minutes under load).
export default defineConfig({
  test: { testTimeout: 600_000, hookTimeout: 600_000 },
});
