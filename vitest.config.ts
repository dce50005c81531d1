import { defineConfig } from 'vitest/config'

/**
 * Three tiers, runnable separately (`npm run test:unit`, `test:integration`, `test:e2e`) and all
 * together by `npm test`. Only the integration tier starts the Firestore and Pub/Sub emulators
 * (once for the run); the end-to-end tier starts whole local suites of its own.
 */
export default defineConfig({
  test: {
    // Two cores, but the tests mostly wait (on the emulators, on processes they start): three files
    // at a time keep both cores busy. Each has its own Google Cloud project id on the shared emulators.
    pool: 'forks',
    maxWorkers: 3,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    teardownTimeout: 30_000,
    projects: [
      // Each unit file in a fresh process: some measure their own heap growth (the 100,000-record VCF
      // stream), which a heap grown by the files before it in a shared worker would blur.
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'] } },
      // The integration files share their worker's loaded modules (the Firestore client, the services):
      // importing them again for each file cost about a minute of CPU in every run.
      {
        extends: true,
        test: { name: 'integration', include: ['test/integration/**/*.test.ts'], globalSetup: ['test/support/global-setup.ts'], isolate: false },
      },
      // Each end-to-end file starts whole local suites (two emulator JVMs, every service): one at a time.
      { extends: true, test: { name: 'e2e', include: ['test/e2e/**/*.test.ts'], fileParallelism: false } },
    ],
  },
})
