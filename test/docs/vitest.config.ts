import { defineConfig } from 'vitest/config';

// Timeouts only catch hangs: no test asserts a timing. A block may train, evaluate or benchmark (with the short
// settings its marker gives), several processes each, on a busy shared machine.
export default defineConfig({
  test: { testTimeout: 600_000, hookTimeout: 600_000 },
});
