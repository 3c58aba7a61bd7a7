/**
 * `npm run live:local` as a developer runs it: anvil, the provider simulator, the e-mail capture server and the
 * service in live mode, each its own process, on the PORT it is given; it prints a usable live key by the time the
 * service answers, the partner flow it prints runs as written in a shell (the test wallet paying through
 * `npm run -s live:pay`), and the conformance kit's CLI in `--mode live --allow-live` passes against it. Ctrl-C
 * (SIGINT to the whole process group, twice) stops every process it started, the embedded PostgreSQL included.
 */
import { type ChildProcess, execFile, execFileSync, spawn } from "node:child_process"
import { once } from "node:events"
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startEmbeddedPostgres } from "../../src/db/EmbeddedPostgres.ts"
import { waitUntil } from "../simulators/support.ts"
import { processAlive as alive, repoRoot } from "../support/process.ts"

let child: ChildProcess
let output = ""
let dataDir: string
let port: number
/** Whether the key had been printed when the service first answered /healthz. */
let keyShownWhenServing: boolean

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0))
    })
  })

const healthy = async () => {
  try {
    return (await fetch(`http://127.0.0.1:${port}/healthz`)).ok
  } catch {
    return false
  }
}

/** Processes still in the process group `pgid`. */
const groupMembers = (pgid: number) =>
  execFileSync("ps", ["-e", "-o", "pid=,pgid=,args="], { encoding: "utf8" })
    .split("\n")
    .filter((line) => line.trim().split(/\s+/)[1] === String(pgid))

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
  port = await freePort()
  const { TEST_DATABASE_URL: _, DATABASE_URL: __, ...env } = process.env
  child = spawn(process.execPath, ["--import", "tsx", "scripts/live-local.ts"], {
    cwd: repoRoot,
    detached: true,
    env: {
      ...env,
      PORT: String(port),
      LIVE_LOCAL_DATA_DIR: dataDir,
      LIVE_LOCAL_STEP_DELAY_MS: "100",
      LOG_LEVEL: "warn"
    }
  })
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
  await waitUntil("the service to answer on PORT", healthy, { timeoutMs: 90_000, intervalMs: 10 })
  keyShownWhenServing = /live API key\s+cop_live_pk_/.test(output)
  await waitForOutput(/Ctrl-C stops everything/, 90_000)
}, 120_000)

afterAll(async () => {
  if (child !== undefined && child.exitCode === null) {
    const exited = once(child, "exit")
    process.kill(-child.pid!, "SIGKILL")
    await exited
  }
  const pgData = join(dataDir, "postgres")
  if (existsSync(join(pgData, "postmaster.pid"))) await (await startEmbeddedPostgres(pgData)).stop()
  rmSync(dataDir, { recursive: true, force: true })
})

const field = (pattern: RegExp) => {
  const value = pattern.exec(output)?.[1]
  if (value === undefined) throw new Error(`${pattern} not in the output:\n${output}`)
  return value
}

/** The partner flow live:local printed: its `export` line, then one command a line (comments left out). */
const printedFlow = () => {
  const block = /The partner flow[^\n]*\n([\s\S]*?)\n\n/.exec(output)?.[1]
  if (block === undefined) throw new Error(`no partner flow in the output:\n${output}`)
  const lines = block.split("\n").map((line) => line.trim()).filter((line) => !line.startsWith("#"))
  const [exports, ...commands] = lines
  expect(exports).toMatch(/^export BASE=\S+ KEY=cop_live_pk_\S+ USER_ADDRESS=0x[0-9a-fA-F]{40}$/)
  /** The printed command containing `marker`, with its `<placeholders>` filled in, run by bash after the export line. */
  const run = async (marker: string, fill: Record<string, string> = {}) => {
    const line = commands.find((command) => command.includes(marker))
    if (line === undefined) throw new Error(`no printed command with ${marker} in:\n${block}`)
    const filled = Object.entries(fill).reduce(
      (text, [placeholder, value]) => text.replaceAll(placeholder, value),
      line
    )
    expect(filled).not.toMatch(/<[a-z][^>]*>/)
    const { stdout } = await promisify(execFile)("bash", ["-euo", "pipefail", "-c", `${exports}\n${filled}`], {
      cwd: repoRoot,
      env: { ...process.env, npm_config_update_notifier: "false" }
    })
    return stdout
  }
  return { block, run }
}

describe("npm run live:local", () => {
  it("serves live mode on PORT and has printed a live key that works by the time the service answers", async () => {
    expect(keyShownWhenServing, output).toBe(true)
    const base = field(/service\s+(http:\/\/127\.0\.0\.1:\d+)/)
    expect(base).toBe(`http://127.0.0.1:${port}`)
    const key = field(/live API key\s+(cop_live_pk_\S+)/)
    expect(await (await fetch(`${base}/healthz`)).json()).toMatchObject({ mode: "live" })
    const quote = await fetch(`${base}/api/integrations/breb/quote?destinationCop=250000`, {
      headers: { authorization: `Bearer ${key}` }
    })
    expect(quote.status).toBe(200)
  })

  it(
    "prints a partner flow that runs as written, the test wallet paying the payout with npm run -s live:pay",
    async () => {
      const flow = printedFlow()
      expect(flow.block).not.toMatch(/\bUSER=|\$USER\b/) // the shell's own $USER stays untouched
      expect(flow.block).not.toContain("cast ")
      await flow.run("kyc/otp/send")
      const mail = await flow.run("__mail/messages/latest")
      const code = /\b([0-9]{6})\b/.exec(mail)?.[1] ?? ""
      const verified = JSON.parse(await flow.run("kyc/otp/verify", { "<code>": code })) as { kycUrl: string }
      const linkId = verified.kycUrl.split("/").at(-1) ?? ""
      const link = await flow.run("v0/kyc_links", { "<link id: the end of kycUrl>": linkId })
      const customerId = (JSON.parse(link) as { customer_id: string }).customer_id
      await flow.run("/approve", { "<customer_id>": customerId })
      // the provider's approval reaches the service as a signed webhook: until then the payout is refused (needs_kyc)
      const payout = await waitUntil("the payout created once KYC is approved", async () => {
        const answer = JSON.parse(await flow.run("breb/payouts -H")) as { payoutId?: string; status?: string }
        return answer.payoutId === undefined ? undefined : answer
      }, { timeoutMs: 20_000, intervalMs: 200 })
      expect(payout.status).toBe("awaiting_deposit")

      const paid = await flow.run("live:pay", { "<payoutId>": payout.payoutId! })
      expect(paid).toMatch(/transaction \(the deposit\) 0x[0-9a-f]{64} mined in block \d+/)
      expect(paid).toMatch(/feeTransaction \(the service fee\) 0x[0-9a-f]{64} mined in block \d+/)
      // the provider watches the chain too: by the time the confirm answers it may have moved the payout on
      expect(paid).toMatch(
        new RegExp(`confirmed: payout ${payout.payoutId!} is (deposit_confirmed|processing|completed);`)
      )
      await waitUntil("the payout completed by the provider", async () => {
        const current = JSON.parse(await flow.run("payouts/<payoutId> -H", { "<payoutId>": payout.payoutId! })) as {
          status: string
        }
        return current.status === "completed"
      }, { timeoutMs: 30_000, intervalMs: 200 })
    },
    120_000
  )

  it("passes the conformance kit in --mode live --allow-live", async () => {
    const base = field(/service\s+(http:\/\/127\.0\.0\.1:\d+)/)
    const key = field(/live API key\s+(cop_live_pk_\S+)/)
    const kit = spawn(process.execPath, [
      "--import",
      "tsx",
      "testkit/src/cli.ts",
      "--base-url",
      base,
      "--api-key",
      key,
      "--mode",
      "live",
      "--allow-live"
    ], { cwd: repoRoot })
    let report = ""
    kit.stdout.on("data", (chunk: Buffer) => (report += chunk.toString("utf8")))
    kit.stderr.on("data", (chunk: Buffer) => (report += chunk.toString("utf8")))
    const [code] = (await once(kit, "exit")) as [number | null]
    expect(code, report).toBe(0)
    expect(report).toMatch(/conformance: \d+ passed, 0 failed/)
    // the swap scenarios that need no mock ran against the live router (the local 0x-style aggregator on anvil)
    for (const id of ["SWAP-001", "SWAP-002", "SWAP-003", "SWAP-005", "SWAP-006"]) {
      expect(report).toMatch(new RegExp(`✓ ${id} `))
    }
    // the batch endpoints' contract, without moving money
    expect(report).toMatch(/✓ BATCH-004 /)
  })

  it(
    "Ctrl-C (SIGINT to the process group, twice) stops every process it started and the embedded PostgreSQL",
    async () => {
      const pgid = child.pid!
      const postmaster = Number.parseInt(
        readFileSync(join(dataDir, "postgres", "postmaster.pid"), "utf8").split("\n")[0]!,
        10
      )
      expect(alive(postmaster)).toBe(true)
      const exited = once(child, "exit")
      process.kill(-pgid, "SIGINT")
      // Signals sent back to back can merge into one; a second one once the first has stopped the service's listener cannot.
      await waitUntil("the service to stop listening", async () => !(await healthy()), { timeoutMs: 30_000 })
      process.kill(-pgid, "SIGINT")
      await exited
      await waitUntil("every process of the group gone", () => groupMembers(pgid).length === 0, { timeoutMs: 30_000 })
      await waitUntil("the embedded PostgreSQL stopped", () => !alive(postmaster), { timeoutMs: 30_000 })
    },
    90_000
  )
})
