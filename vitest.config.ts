import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "testkit/test/**/*.test.ts", "sdk/test/**/*.test.ts"],
    globalSetup: ["test/support/globalSetup.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    // One worker process runs many files: effect, the app and the contract are imported once per worker,
    // not once per file (the suite's collect time fell from ~80 s to ~7 s). Files share no mutable rows:
    // each gets its own database.
    isolate: false,
    // vitest 4 dropped `minWorkers`: workers start on demand, up to this many.
    maxWorkers: 2
  }
})
