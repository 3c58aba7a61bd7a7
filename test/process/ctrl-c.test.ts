/**
 * Ctrl-C in a terminal sends SIGINT to the whole foreground process group: npm and node both get it, and npm then
 * forwards its own copy to node. Whatever number of signals arrive, the embedded PostgreSQL the service started must
 * not outlive it (issue #18: 3 of 3 Ctrl-Cs left it running, because the second signal exited at once).
 */
import { once } from "node:events"
import { request } from "node:http"
import { existsSync, readFileSync } from "node:fs"
import { chmod, mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startEmbeddedPostgres } from "../../src/db/EmbeddedPostgres.ts"
import { waitUntil } from "../simulators/support.ts"
import { processAlive as alive, startServiceProcess } from "../support/process.ts"

/** The postmaster's pid, from the first line of `postmaster.pid`. */
const postmasterPid = (dataDir: string) =>
  Number.parseInt(readFileSync(join(dataDir, "postmaster.pid"), "utf8").split("\n")[0]!, 10)

let root: string
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "ctrl-c-"))
  await chmod(root, 0o755)
})
afterAll(async () => {
  // a server left by a failing run: adopt it (its starter is gone) and stop it
  for (const dataDir of [join(root, "once"), join(root, "twice")]) {
    if (existsSync(join(dataDir, "postmaster.pid"))) await (await startEmbeddedPostgres(dataDir)).stop()
  }
  await rm(root, { recursive: true, force: true })
})

describe("Ctrl-C on npm start (SIGINT to the process group, twice)", () => {
  it("stops the service and the embedded PostgreSQL it started", async () => {
    const dataDir = join(root, "once")
    const service = await startServiceProcess({ DATABASE_URL: "", EMBEDDED_DATA_DIR: dataDir }, {
      via: "npm",
      detached: true
    })
    const pid = postmasterPid(dataDir)
    expect(alive(pid)).toBe(true)

    const exited = once(service.child, "exit")
    process.kill(-service.child.pid!, "SIGINT")
    // Signals sent back to back can merge into one; a second one once the first is being handled cannot.
    await waitUntil("the service to begin its shutdown", () => service.stdout().includes("SIGINT: shutting down"), {
      timeoutMs: 30_000
    })
    process.kill(-service.child.pid!, "SIGINT")
    await exited

    await waitUntil("the embedded PostgreSQL stopped", () => (alive(pid) ? undefined : true), { timeoutMs: 30_000 })
    expect(existsSync(join(dataDir, "postmaster.pid"))).toBe(false)
  }, 120_000)
})

describe("a second Ctrl-C while requests are still draining", () => {
  it("cuts them off, stops the embedded PostgreSQL and exits 1", async () => {
    const dataDir = join(root, "twice")
    const service = await startServiceProcess(
      { DATABASE_URL: "", EMBEDDED_DATA_DIR: dataDir, SHUTDOWN_GRACE_MS: "600000" },
      { via: "npm", detached: true }
    )
    const pid = postmasterPid(dataDir)
    // A request whose body never finishes arriving: without the second Ctrl-C, the drain would wait 10 minutes for it.
    const port = Number(new URL(service.baseUrl).port)
    const key = /(cop_test_pk_[0-9A-Za-z]+)/.exec(service.stdout())![1]!
    const headers = {
      authorization: `Bearer ${key}`,
      "content-type": "application/json",
      "content-length": "100",
      expect: "100-continue"
    }
    const stuck = request({
      host: "127.0.0.1",
      port,
      method: "POST",
      path: "/api/integrations/breb/payouts",
      agent: false,
      headers
    })
    const stuckOutcome = new Promise<string>((resolve) => {
      stuck.on("response", (response) => resolve(`answered ${response.statusCode}`))
      stuck.on("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? "error"))
    })
    stuck.flushHeaders()
    await once(stuck, "continue")

    const exited = once(service.child, "exit")
    const firstAt = Date.now()
    process.kill(-service.child.pid!, "SIGINT")
    await waitUntil("the service to begin draining", () => service.stdout().includes("draining 1 in-flight"), {
      timeoutMs: 30_000
    })
      .catch((error) => Promise.reject(new Error(`${error}\n${service.stdout()}`)))
    // The person presses Ctrl-C again a little later (a repeat within a second is the same Ctrl-C, npm's copy of it).
    await waitUntil("a second to pass since the first Ctrl-C", () => Date.now() - firstAt > 1_100, { timeoutMs: 5_000 })
    process.kill(-service.child.pid!, "SIGINT")
    const [code] = (await exited) as [number | null]

    expect(code).toBe(1)
    expect(await stuckOutcome).toBe("ECONNRESET")
    expect(service.stdout()).toContain("SIGINT again: cutting off 1 in-flight requests")
    await waitUntil("the embedded PostgreSQL stopped", () => (alive(pid) ? undefined : true), { timeoutMs: 30_000 })
    expect(existsSync(join(dataDir, "postmaster.pid"))).toBe(false)
  }, 120_000)
})
