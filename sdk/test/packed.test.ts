/**
 * The SDK as a partner installs it: `npm pack` of sdk/ (built from the contract on the way), installed alone into a
 * scratch project, the README's walkthrough and the SDK README's receiver type-checked there against the published
 * declarations and run against a started service. Offline: the tarball has no dependency to fetch.
 */
import { execFile, execFileSync, spawn } from "node:child_process"
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync
} from "node:fs"
import { createServer } from "node:net"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { repoRoot } from "../../test/support/process.ts"
import { startTestServer, type TestServer } from "../../test/support/server.ts"

const run = promisify(execFile)
/** Anything past this is a regression worth a look (it was 62 KB when the SDK was first packed). */
const MAX_TARBALL_BYTES = 150_000

const work = mkdtempSync(join(tmpdir(), "sdk-packed-"))
const scratch = join(work, "project")
let server: TestServer
let apiKey: string
let tarball: string

/** The text of the fenced block after `marker` in `file`. */
const blockAfter = (file: string, marker: string, fence: string) => {
  const text = readFileSync(join(repoRoot, file), "utf8")
  const start = text.indexOf(marker)
  const open = text.indexOf(`\`\`\`${fence}\n`, start)
  if (start < 0 || open < 0) throw new Error(`${file}: no \`\`\`${fence} block after ${marker}`)
  return text.slice(open + fence.length + 4, text.indexOf("```\n", open + 4))
}

/** npm pack of a copy of the workspace (the checkout is never written to), as `npm pack --workspace sdk` does. */
const pack = async () => {
  const stage = join(work, "workspace")
  for (const dir of ["sdk", "contracts", "scripts"]) mkdirSync(join(stage, dir), { recursive: true })
  for (const entry of ["package.json", "tsconfig.build.json", "README.md", "scripts", "src"]) {
    cpSync(join(repoRoot, "sdk", entry), join(stage, "sdk", entry), { recursive: true })
  }
  cpSync(join(repoRoot, "contracts/openapi.json"), join(stage, "contracts/openapi.json"))
  cpSync(join(repoRoot, "scripts/pack-manifest.mjs"), join(stage, "scripts/pack-manifest.mjs"))
  cpSync(join(repoRoot, "LICENSE"), join(stage, "LICENSE"))
  symlinkSync(join(repoRoot, "node_modules"), join(stage, "node_modules"))
  const { stdout } = await run("npm", ["pack", "--json", "--pack-destination", work], {
    cwd: join(stage, "sdk"),
    env: { ...process.env, npm_config_update_notifier: "false" }
  })
  const [packed] = JSON.parse(stdout.slice(stdout.indexOf("["))) as Array<
    { filename: string; files: Array<{ path: string }> }
  >
  return { file: join(work, packed!.filename), files: packed!.files.map((each) => each.path) }
}

const freePort = async () => {
  const probe = createServer().listen(0, "127.0.0.1")
  await new Promise((resolve) => probe.once("listening", resolve))
  const { port } = probe.address() as AddressInfo
  await new Promise((resolve) => probe.close(resolve))
  return port
}

beforeAll(async () => {
  const packed = await pack()
  tarball = packed.file
  expect(packed.files).toContain("dist/index.js")
  expect(packed.files).toContain("dist/index.d.ts")
  expect(packed.files).toContain("LICENSE")
  expect(packed.files.filter((path) => path.startsWith("src/") || path.startsWith("test/"))).toEqual([])
  mkdirSync(scratch)
  writeFileSync(join(scratch, "package.json"), JSON.stringify({ name: "partner", private: true, type: "module" }))
  await run("npm", ["install", "--offline", "--no-audit", "--no-fund", tarball], {
    cwd: scratch,
    env: { ...process.env, npm_config_update_notifier: "false" }
  })
  server = await startTestServer()
  apiKey = (await server.newIntegration()).apiKey
}, 240_000)
afterAll(async () => {
  await server?.close()
  rmSync(work, { recursive: true, force: true })
})

describe("the packed SDK", () => {
  it("is small and installs alone: no dependency, nothing but the package in node_modules", () => {
    const size = statSync(tarball).size
    console.log(`sdk: ${tarball.split("/").pop()} is ${(size / 1000).toFixed(1)} KB packed`)
    expect(size).toBeLessThan(MAX_TARBALL_BYTES)
    const manifest = JSON.parse(readFileSync(join(scratch, "node_modules/@cop-integrations/sdk/package.json"), "utf8"))
    expect(manifest.dependencies ?? {}).toEqual({})
    expect(manifest.exports["."]).toEqual({ types: "./dist/index.d.ts", default: "./dist/index.js" })
    expect(readdirSync(join(scratch, "node_modules")).filter((name) => !name.startsWith("."))).toEqual([
      "@cop-integrations"
    ])
  })

  it(
    "the README's walkthrough and the SDK README's receiver type-check against its declarations (skipLibCheck off)",
    async () => {
      writeFileSync(join(scratch, "walkthrough.ts"), blockAfter("README.md", "<!-- sdk-walkthrough:start -->", "ts"))
      writeFileSync(join(scratch, "receiver.ts"), blockAfter("sdk/README.md", "before any JSON parsing", "ts"))
      const tsc = join(repoRoot, "node_modules/typescript/bin/tsc")
      const checked = await run(process.execPath, [
        tsc,
        "--noEmit",
        "--strict",
        "--exactOptionalPropertyTypes",
        "--target",
        "es2022",
        "--module",
        "nodenext",
        "--moduleResolution",
        "nodenext",
        "--allowImportingTsExtensions",
        "--skipLibCheck",
        "false",
        "--typeRoots",
        join(repoRoot, "node_modules/@types"),
        "--types",
        "node",
        "walkthrough.ts",
        "receiver.ts"
      ], { cwd: scratch }).catch((error: { stdout: string }) => ({ stdout: error.stdout, failed: true }))
      expect(checked.stdout).toBe("")
    },
    120_000
  )

  it("runs the README's walkthrough against a started service, from its tarball", async () => {
    writeFileSync(join(scratch, "walkthrough.ts"), blockAfter("README.md", "<!-- sdk-walkthrough:start -->", "ts"))
    const { stdout } = await run(process.execPath, ["--disable-warning=ExperimentalWarning", "walkthrough.ts"], {
      cwd: scratch,
      env: { ...process.env, KEY: apiKey, BASE: server.baseUrl },
      timeout: 90_000
    })
    expect(stdout).toMatch(/^1 USD = \d+(\.\d+)? COP costs \d+(\.\d+)? USDC$/m)
    expect(stdout).toContain("kyc: approved")
    expect(stdout).toMatch(/^payout po_\w+ awaiting_deposit sign: 0x[0-9a-fA-F]{40}$/m)
    expect(stdout).toContain("status: completed")
    expect(stdout).toMatch(/^listed: po_\w+ completed$/m)
    expect(stdout).toContain("payouts listed: 1")
    expect(stdout).toMatch(
      /^failure: returned_by_bank refund: (sent|verified) to 0x52908400098527886E0F7030069857D2E4169EE7$/m
    )
    expect(stdout).toContain("canceled: expired")
    expect(stdout).toMatch(/^refused: 409 needs_kyc req_\w+ breb\.createPayout: 409 KYC is not approved/m)
  }, 120_000)

  it.skipIf(olderNode === undefined)(
    `runs on the machine's older Node too (${olderNode?.version ?? "none on PATH"}): calls, a list, a v1 verify`,
    async () => {
      writeFileSync(join(scratch, "smoke.mjs"), SMOKE)
      const { stdout } = await run(olderNode!.path, ["smoke.mjs"], {
        cwd: scratch,
        env: { ...process.env, KEY: apiKey, BASE: server.baseUrl }
      })
      expect(stdout.trim()).toMatch(
        new RegExp(`^${olderNode!.version} 1 USD = \\d+(\\.\\d+)? COP \\d+ endpoint\\.ping$`)
      )
    }
  )

  it("the SDK README's receiver verifies a real delivery, and refuses a forged one", async () => {
    const port = await freePort()
    const { IntegrationsClient } = await import("../src/index.ts")
    const client = new IntegrationsClient({ apiKey, baseUrl: server.baseUrl })
    const { secret } = await client.webhookEndpoints.create({ url: `http://127.0.0.1:${port}/hooks` })
    const receiver = spawn(process.execPath, ["--disable-warning=ExperimentalWarning", "receiver.ts"], {
      cwd: scratch,
      env: { ...process.env, PORT: String(port), WEBHOOK_SECRET: secret }
    })
    let out = ""
    receiver.stdout.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")))
    receiver.stderr.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")))
    try {
      const listening = await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/`, { method: "POST" })).status)
      expect(listening).toBe(400) // no signature headers
      const { eventId } = await client.testHelpers.triggerEvent({ type: "payout.created" })
      await waitFor(() => out.includes(`payout.created ${eventId}`) ? true : undefined)
      const event = await client.events.get(eventId)
      expect(event.attempts.map((attempt) => attempt.responseStatus)).toContain(204)
      const forged = await fetch(`http://127.0.0.1:${port}/hooks`, {
        method: "POST",
        headers: {
          "webhook-id": eventId,
          "webhook-timestamp": String(Math.floor(Date.now() / 1000)),
          "webhook-signature": `v1,${btoa("not the service's signature, 32b")}`
        },
        body: JSON.stringify({ id: eventId, type: "payout.completed" })
      })
      expect(forged.status).toBe(400)
      expect(out).not.toContain("payout.completed")
    } finally {
      receiver.kill()
    }
  }, 60_000)
})

/** A node older than the one running the tests on PATH (the machine's own, under npm's Node 24), if there is one. */
const olderNode = (() => {
  for (const dir of (process.env["PATH"] ?? "").split(":")) {
    const candidate = join(dir, "node")
    try {
      const version = execFileSync(candidate, ["--version"], { encoding: "utf8" }).trim()
      const major = Number(/^v(\d+)/.exec(version)?.[1])
      if (major >= 18 && major < 22) return { path: candidate, version }
    } catch {
      // not there
    }
  }
  return undefined
})()

const SMOKE = `
import { createHmac } from "node:crypto"
import { IntegrationsClient, verifyWebhook } from "@cop-integrations/sdk"
const client = new IntegrationsClient({ apiKey: process.env.KEY, baseUrl: process.env.BASE })
const quote = await client.quotes.get({ destinationCop: "250000" })
const events = await client.events.list({ limit: 2 }).toArray()
const secret = "whsec_" + Buffer.alloc(32, 7).toString("base64")
const body = JSON.stringify({ id: "evt_1", type: "endpoint.ping" }), timestamp = Math.floor(Date.now() / 1000)
const signature = createHmac("sha256", Buffer.alloc(32, 7)).update("evt_1." + timestamp + "." + body).digest("base64")
const event = await verifyWebhook(body, { "webhook-id": "evt_1", "webhook-timestamp": String(timestamp), "webhook-signature": "v1," + signature }, secret)
console.log(process.version, quote.display, events.length, event.type)
`

/** Polls `check` until it gives a value (a failed fetch counts as none yet), for at most 30 s. */
const waitFor = async <A>(check: () => A | undefined | Promise<A | undefined>): Promise<A> => {
  const deadline = Date.now() + 30_000
  for (;;) {
    const value = await Promise.resolve().then(check).catch(() => undefined)
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`not there within 30 s`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}
