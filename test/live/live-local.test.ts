/**
 * `npm run live:local` as a developer runs it: anvil, the provider simulator, the e-mail capture server and the
 * service in live mode, each its own process; it prints a usable live key, and the conformance kit's CLI in
 * `--mode live --allow-live` passes against it. SIGINT stops every process it started.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { once } from "node:events"
import { chmodSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { repoRoot } from "../support/process.ts"

let child: ChildProcess
let output = ""
let dataDir: string

const waitForOutput = (pattern: RegExp, timeoutMs: number) =>
  new Promise<RegExpExecArray>((resolve, reject) => {
    const check = () => {
      const match = pattern.exec(output)
      if (match === null) return false
      clearTimeout(timer)
      child.stdout?.off("data", check)
      resolve(match)
      return true
    }
    const timer = setTimeout(() => reject(new Error(`no ${pattern} within ${timeoutMs} ms:\n${output}`)), timeoutMs)
    if (!check()) child.stdout?.on("data", check)
    child.once("exit", (code) => reject(new Error(`live:local exited ${code}:\n${output}`)))
  })

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "live-local-"))
  chmodSync(dataDir, 0o755)
  const { TEST_DATABASE_URL: _, DATABASE_URL: __, ...env } = process.env
  child = spawn(process.execPath, ["--import", "tsx", "scripts/live-local.ts"], {
    cwd: repoRoot,
    env: { ...env, LIVE_LOCAL_PORT: "0", LIVE_LOCAL_DATA_DIR: dataDir, LIVE_LOCAL_STEP_DELAY_MS: "100", LOG_LEVEL: "warn" }
  })
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
  await waitForOutput(/Ctrl-C stops everything/, 90_000)
}, 120_000)

afterAll(async () => {
  if (child !== undefined && child.exitCode === null) {
    const exited = once(child, "exit")
    child.kill("SIGINT")
    await exited
  }
  rmSync(dataDir, { recursive: true, force: true })
})

const field = (pattern: RegExp) => {
  const value = pattern.exec(output)?.[1]
  if (value === undefined) throw new Error(`${pattern} not in the output:\n${output}`)
  return value
}

describe("npm run live:local", () => {
  it("serves live mode and prints a live key that works", async () => {
    const base = field(/service\s+(http:\/\/127\.0\.0\.1:\d+)/)
    const key = field(/live API key\s+(cop_live_pk_\S+)/)
    expect(await (await fetch(`${base}/healthz`)).json()).toMatchObject({ mode: "live" })
    const quote = await fetch(`${base}/api/integrations/breb/quote?destinationCop=250000`, { headers: { authorization: `Bearer ${key}` } })
    expect(quote.status).toBe(200)
  })

  it("passes the conformance kit in --mode live --allow-live", async () => {
    const base = field(/service\s+(http:\/\/127\.0\.0\.1:\d+)/)
    const key = field(/live API key\s+(cop_live_pk_\S+)/)
    const kit = spawn(process.execPath, ["--import", "tsx", "testkit/src/cli.ts", "--base-url", base, "--api-key", key, "--mode", "live", "--allow-live"], { cwd: repoRoot })
    let report = ""
    kit.stdout.on("data", (chunk: Buffer) => (report += chunk.toString("utf8")))
    kit.stderr.on("data", (chunk: Buffer) => (report += chunk.toString("utf8")))
    const [code] = (await once(kit, "exit")) as [number | null]
    expect(code, report).toBe(0)
    expect(report).toMatch(/conformance: \d+ passed, 0 failed/)
    // the swap scenarios that need no mock ran against the live router (the local 0x-style aggregator on anvil)
    for (const id of ["SWAP-001", "SWAP-002", "SWAP-003", "SWAP-005", "SWAP-006"]) expect(report).toMatch(new RegExp(`✓ ${id} `))
  })
})
