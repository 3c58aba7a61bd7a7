/** The CLI as a process: help, listing, and the runs it refuses to start (exit code 2). */
import { execFile } from "node:child_process"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const CLI = fileURLToPath(new URL("../src/cli.ts", import.meta.url))

const cli = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  new Promise<{ readonly code: number; readonly stdout: string; readonly stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      ["--import", "tsx", CLI, ...args],
      { env: { ...process.env, NO_COLOR: "1", ...env } },
      (error, stdout, stderr) => {
        resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr })
      }
    )
  })

/** A deployment that only says it is live (and serves the contract's title in /openapi.json, for the preflight). */
const liveHealth = createServer((request, response) => {
  const body = request.url === "/openapi.json"
    ? { openapi: "3.1.0", info: { title: "Integrations API", version: "0.1.0" }, paths: {} }
    : { status: "ok", mode: "live", version: "0.1.0" }
  response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body))
})
let liveUrl = ""

beforeAll(async () => {
  await new Promise<void>((resolve) => liveHealth.listen(0, "127.0.0.1", resolve))
  liveUrl = `http://127.0.0.1:${(liveHealth.address() as AddressInfo).port}`
})
afterAll(() => new Promise<void>((resolve) => liveHealth.close(() => resolve())))

describe.concurrent("integrations-conformance", () => {
  it("--help explains every option and exits 0", async () => {
    const { code, stdout } = await cli(["--help"])
    expect(code).toBe(0)
    for (
      const option of [
        "--base-url",
        "--api-key",
        "--second-api-key",
        "--mode",
        "--grep",
        "--reporter",
        "--out",
        "--allow-live",
        "--timeout",
        "--seed"
      ]
    ) {
      expect(stdout).toContain(option)
    }
  })

  it("--list --grep PAYOUT-CONFIRM lists the confirmation scenarios", async () => {
    const { code, stdout } = await cli(["--list", "--grep", "PAYOUT-CONFIRM"])
    expect(code).toBe(0)
    expect(stdout.match(/^PAYOUT-CONFIRM-\d{3}/gm)).toHaveLength(10)
  })

  const refusals: ReadonlyArray<readonly [string, ReadonlyArray<string>, RegExp]> = [
    ["without a base URL", ["--api-key", "k"], /--base-url <url> is required/],
    ["with an unknown option", ["--base-url", "http://127.0.0.1:9", "--api-key", "k", "--verbose"], /Unknown option/],
    [
      "with an unknown reporter",
      ["--base-url", "http://127.0.0.1:9", "--api-key", "k", "--reporter", "xml"],
      /unknown reporter xml/
    ],
    ["with a grep that selects nothing", [
      "--base-url",
      "http://127.0.0.1:9",
      "--api-key",
      "k",
      "--grep",
      "NOTHING-999"
    ], /no scenario matches/],
    ["when the deployment cannot be reached", ["--base-url", "http://127.0.0.1:9", "--api-key", "k"], /cannot reach/]
  ]
  for (const [when, args, says] of refusals) {
    it(`exits 2 ${when}`, async () => {
      const { code, stderr } = await cli(args)
      expect(code).toBe(2)
      expect(stderr).toMatch(says)
    })
  }

  it("a base URL without its scheme: one line saying so, with the two URLs it may mean", async () => {
    for (const given of ["localhost:3000", "127.0.0.1:8787", "sandbox.example.com"]) {
      const { code, stderr, stdout } = await cli(["--base-url", given, "--api-key", "k"])
      expect({ code, stdout, stderr }).toEqual({
        code: 2,
        stdout: "",
        stderr:
          `integrations-conformance: --base-url ${given}: a base URL needs a scheme: http://${given} or https://${given}\n`
      })
    }
    const env = await cli(["--api-key", "k"], { CONFORMANCE_BASE_URL: "localhost:3000" })
    expect(env.stderr).toMatch(/a base URL needs a scheme/)
  })

  it("https:// to a port that speaks plain HTTP: one line saying so and what to use", async () => {
    const tls = liveUrl.replace("http://", "https://")
    const { code, stderr, stdout } = await cli(["--base-url", tls, "--api-key", "k"])
    expect({ code, stdout, stderr }).toEqual({
      code: 2,
      stdout: "",
      stderr: `integrations-conformance: ${new URL(tls).origin} speaks plain HTTP, not HTTPS: use ${liveUrl}\n`
    })
  })

  it("refuses --mode mock against a deployment that says it is live", async () => {
    const { code, stderr } = await cli(["--base-url", liveUrl, "--api-key", "cop_live_pk_x", "--mode", "mock"])
    expect(code).toBe(2)
    expect(stderr).toMatch(/says it is in live mode/)
  })
})
