import { defineConfig } from 'vitest/config';

// Property tests and child-process tests: give a busy CI machine room.
export default defineConfig({
  test: { testTimeout: 30_000 },
});
