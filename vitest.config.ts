import { defineConfig } from 'vitest/config'

/**
 * Three tiers, runnable separately (`npm run test:unit`, `test:integration`, `test:e2e`) and all
 * together by `npm test`. Only the integration tier starts the Firestore and Pub/Sub emulators
 * (once for the run); the end-to-end tier starts whole local suites of its own.
 */
/** Unit files that bound their own memory growth (see the `unit-memory` project). */
const MEASURE_OWN_MEMORY = ['test/unit/domain/variants/synthetic.test.ts', 'test/unit/emulators/storage-server.test.ts']

export default defineConfig({
  test: {
    // Two cores, but the tests mostly wait (on the emulators, on processes they start): three files
    // at a time when one tier runs alone (`npm run test:unit`, …). `npm test` sets its own counts,
    // four unit and integration files beside two end-to-end ones (scripts/test.mjs). Each file has
    // its own Google Cloud project id on the shared emulators.
    pool: 'forks',
    maxWorkers: 3,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    teardownTimeout: 30_000,
    projects: [
      // The unit files share their worker's loaded modules, but for those that bound their own memory
      // growth (the 100,000-record VCF stream, the storage server's 1 GiB transfer): a heap grown by
      // the files before them in a shared worker would blur it, so each of those has a fresh process.
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'], exclude: MEASURE_OWN_MEMORY, isolate: false } },
      { extends: true, test: { name: 'unit-memory', include: MEASURE_OWN_MEMORY } },
      // The integration files share their worker's loaded modules (the Firestore client, the services):
      // importing them again for each file cost about a minute of CPU in every run.
      {
        extends: true,
        test: { name: 'integration', include: ['test/integration/**/*.test.ts'], globalSetup: ['test/support/global-setup.ts'], isolate: false },
      },
      // Each end-to-end file starts whole local suites of its own (two emulator JVMs, every service), on
      // ports of its own: `npm test` runs two files at a time.
      { extends: true, test: { name: 'e2e', include: ['test/e2e/**/*.test.ts'] } },
    ],
  },
})
