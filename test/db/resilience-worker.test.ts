/**
 * The background loops (job worker, webhook deliveries, sweeps, work notifications) while the database refuses
 * connections: each backs off and says so once, in one short line without a stack trace, however long the outage;
 * each says when it recovered. The outage is measured by the loops' own connection attempts at the proxy, not by
 * a timer: the assertions run after several rounds of retries have reached it.
 */
import { describe, expect } from "vitest"
import { proxiedTest, shortTimeouts } from "../support/resilience.ts"

const it = proxiedTest(shortTimeouts, { captureLogs: true })

interface LogLine {
  readonly message: string
  readonly logLevel: string
}

const LOOPS = ["job worker", "webhook deliveries", "expiry sweep", "reconciler", "work notifications"]
const loopOf = (message: string) => LOOPS.find((loop) => message.startsWith(`${loop}:`))

describe("background loops while the database is down", () => {
  it("log one short WARN line per loop for the whole outage (retrying with backoff), and log their recovery", async ({ proxied }) => {
    const from = proxied.server.logs.length
    const linesSince = () => proxied.server.logs.slice(from).map((line) => JSON.parse(line) as LogLine)
    const warnedLoops = () =>
      new Set(linesSince().filter((line) => line.logLevel === "WARN").map((line) => loopOf(line.message)))

    proxied.proxy.setMode("refuse")
    proxied.proxy.resetAll()
    await expect.poll(() => [...warnedLoops()].sort(), { timeout: 10_000 }).toEqual(
      expect.arrayContaining([...LOOPS].sort())
    )
    // Several more rounds of attempts by then-backing-off loops (work notifications retry after 1 s, 2 s, 4 s, ...).
    const attempts = proxied.proxy.accepted()
    await expect.poll(() => proxied.proxy.accepted() - attempts, { timeout: 20_000, interval: 100 })
      .toBeGreaterThanOrEqual(12)

    const warnings = linesSince().filter((line) => line.logLevel === "WARN" || line.logLevel === "ERROR")
    for (const loop of LOOPS) expect(warnings.filter((line) => loopOf(line.message) === loop), loop).toHaveLength(1)
    for (const line of warnings) {
      expect(line.message).not.toContain("\n")
      expect(line.message.length).toBeLessThan(300)
    }

    proxied.proxy.setMode("pass")
    await expect.poll(
      () => linesSince().filter((line) => line.message.includes("recovered")).map((line) => loopOf(line.message)),
      {
        timeout: 30_000
      }
    ).toEqual(expect.arrayContaining(["job worker", "webhook deliveries"]))
  })
})
