/**
 * `npm start` on a tree whose bundle is stale (every fresh clone's first start) builds it first. Built inside the
 * service's own process, esbuild's and tsx's modules and the build's garbage stayed in the heap the service then
 * served with (32 MB more resident at rest), and a replica on test/process/overload.test.ts's small heap died of it
 * ("JavaScript heap out of memory") under a burst its in-flight limit had admitted. Now the build runs in a process
 * of its own: a start that had to build holds what a start that did not holds.
 *
 * Memory, not time: resident memory at rest does not depend on how busy the machine is.
 */
import { readFileSync, writeFileSync } from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { rssMb } from "../../scripts/bench/proc.ts"
import { root, startService, stopService } from "../../scripts/bench/service.ts"
import { acquireTestDatabase, type TestDatabase } from "../support/database.ts"

/** The small heap of the overload test, where the difference decides whether the replica survives. */
const NODE_ARGS = ["--max-old-space-size=64", "--max-semi-space-size=16", "scripts/start.mjs"]
const FINGERPRINT = `${root}/dist/server.fingerprint`
/** Two starts on the same bundle differ by a few MB (when the collector last ran); the build left 32 MB. */
const SAME_WITHIN_MB = 16

let database: TestDatabase

beforeAll(async () => {
  database = await acquireTestDatabase()
}, 120_000)

afterAll(async () => {
  await database?.release()
})

const startAndMeasure = async () => {
  const service = await startService({ DATABASE_URL: database.url, LOG_LEVEL: "Warn" }, false, NODE_ARGS)
  try {
    return { resident: rssMb(service.pid) }
  } finally {
    await stopService(service.child)
  }
}

describe("npm start on a stale bundle", () => {
  it("builds it in a process of its own: the service then holds what a start on a built bundle holds", async () => {
    const built = await startAndMeasure()
    // A fingerprint that matches no tree: the next start rebuilds (sizes and times of the same sources, so the bundle
    // it writes is the one every other test runs).
    writeFileSync(FINGERPRINT, "stale: rebuilt by test/process/start-build.test.ts")
    const rebuilt = await startAndMeasure()
    expect(readFileSync(FINGERPRINT, "utf8"), "the start did not rebuild the bundle").not.toContain("stale")
    expect(
      rebuilt.resident,
      `resident at rest: ${rebuilt.resident} MB after building, ${built.resident} MB on a built bundle`
    ).toBeLessThan(built.resident + SAME_WITHIN_MB)
  }, 240_000)
})
