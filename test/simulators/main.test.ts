/**
 * The provider simulator as a process (scripts/simulators/provider/main.ts, run like `npm start` runs the
 * service: node with tsx's loader): configured from the environment, prints its URL and public key, keeps its
 * signing key in a file across restarts, refuses bad configuration, and stops on SIGTERM.
 */
import { spawn } from "node:child_process"
import { once } from "node:events"
import { createPublicKey } from "node:crypto"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { request, waitUntil } from "./support.ts"

const repoRoot = fileURLToPath(new URL("../..", import.meta.url))
const dir = mkdtempSync(join(tmpdir(), "provider-sim-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const run = (env: Record<string, string>) => {
  const child = spawn(process.execPath, ["--import", "tsx", "scripts/simulators/provider/main.ts"], {
    cwd: repoRoot,
    env: { ...process.env, PROVIDER_SIM_PORT: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()))
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()))
  const exited = once(child, "exit") as Promise<[number | null, NodeJS.Signals | null]>
  return { child, output: () => output, exited }
}

describe("provider simulator process", () => {
  it("starts from the environment, prints its URL and public key, keeps its key file, and stops on SIGTERM", async () => {
    const keyFile = join(dir, "webhook-key.pem")
    const sim = run({
      PROVIDER_SIM_API_KEY: "sk-test-main",
      PROVIDER_SIM_SELL_RATE: "3999.50",
      PROVIDER_SIM_PRIVATE_KEY_FILE: keyFile
    })
    try {
      const printed = await waitUntil("the banner", () => {
        const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(sim.output())?.[1]
        const pem = /(-----BEGIN PUBLIC KEY-----[\s\S]+?-----END PUBLIC KEY-----)/.exec(sim.output())?.[1]
        return url !== undefined && pem !== undefined ? { url, pem } : undefined
      }, { timeoutMs: 15_000 })
      const client = { url: printed.url, apiKey: "sk-test-main" }
      expect((await request(client, "/__sim/public-key")).text.trim()).toBe(printed.pem)
      expect((await request(client, "/v0/exchange_rates?from=usd&to=cop")).body.sell_rate).toBe("3999.50")
      expect((await request(client, "/v0/exchange_rates?from=usd&to=cop", { apiKey: "sk-test-simulator" })).status)
        .toBe(401)
      expect(existsSync(keyFile)).toBe(true)
      const fromFile = createPublicKey(readFileSync(keyFile, "utf8")).export({ type: "spki", format: "pem" }).toString()
      expect(fromFile.trim()).toBe(printed.pem)
    } finally {
      sim.child.kill("SIGTERM")
    }
    const [code] = await sim.exited
    expect(code).toBe(0)
  })

  it("refuses a malformed rate with exit code 2", async () => {
    const sim = run({ PROVIDER_SIM_SELL_RATE: "3,960" })
    const [code] = await sim.exited
    expect(code).toBe(2)
    expect(sim.output()).toContain("PROVIDER_SIM_SELL_RATE must be a plain decimal string")
  })
})
