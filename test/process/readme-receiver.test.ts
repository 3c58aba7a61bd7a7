/**
 * The README's 20-line webhook receiver, run as a partner would paste it (its own node process, the
 * `standardwebhooks` package), in the README's order: its registration curl first (the answer carries the secret),
 * then the receiver started with that secret, which receives and verifies real deliveries from the service; with
 * the wrong secret it answers 400 and the delivery is retried; without one it stops at once with one line.
 */
import { execFile, spawn } from "node:child_process"
import { once } from "node:events"
import { readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { promisify } from "node:util"
import { Webhook } from "standardwebhooks"
import { describe, expect, vi } from "vitest"
import { httpTest } from "../support/fixture.ts"
import type { Partner } from "../support/flows.ts"
import { repoRoot } from "../support/process.ts"

const API = "/api/integrations"
const readme = readFileSync(join(repoRoot, "README.md"), "utf8")
const receiverCode = /A receiver in 20 lines[\s\S]*?```js\n([\s\S]*?)```/.exec(readme)?.[1]
/** The README's curl that registers the receiver's URL, before the receiver's code. */
const registerCommand = /A receiver in 20 lines(?:(?!```)[\s\S])*```sh\n([\s\S]*?)```/.exec(readme)?.[1]
const file = join(repoRoot, `.readme-receiver-${process.pid}.mjs`)

const freePort = async () => {
  const { createServer } = await import("node:net")
  const server = createServer().listen(0, "127.0.0.1")
  await once(server, "listening")
  const port = (server.address() as { port: number }).port
  server.close()
  return port
}

/** Starts the README's receiver on `port` with `secret`; resolves once it answers (400 to an unsigned POST). */
const runReceiver = async (port: number, secret: string) => {
  const child = spawn(process.execPath, [file], {
    cwd: repoRoot,
    env: { ...process.env, PORT: String(port), WEBHOOK_SECRET: secret }
  })
  let out = ""
  child.once("exit", (code) => (out += `receiver exited ${code}`))
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")))
  child.stderr.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")))
  await vi.waitFor(async () => {
    const answer = await fetch(`http://127.0.0.1:${port}/`, { method: "POST", body: "{}" })
    expect(answer.status).toBe(400)
  }, { timeout: 10_000, interval: 50 })
  return { output: () => out, stop: () => child.kill("SIGKILL") }
}

const it = httpTest({ env: { WEBHOOK_RETRY_BASE_MS: "20" } })

describe("the README's webhook receiver", () => {
  const stops: Array<() => void> = []

  it.beforeAll(() => {
    expect(receiverCode, "README.md has no receiver block").toBeDefined()
    expect(receiverCode!.trim().split("\n").length).toBeLessThanOrEqual(25)
    writeFileSync(file, receiverCode!)
  })
  it.afterAll(() => {
    for (const stop of stops) stop()
    rmSync(file, { force: true })
  })

  /** Registers an endpoint on a free port and starts the receiver there, with its secret or another one. */
  const receiverFor = async (partner: Partner, secretOf: (secret: string) => string) => {
    const port = await freePort()
    const wire = await partner.post(`${API}/webhook-endpoints`, {
      url: `http://127.0.0.1:${port}/hooks`,
      events: ["endpoint.ping"]
    })
    expect(wire.status, wire.text).toBe(201)
    const { endpointId, secret } = wire.json as { endpointId: string; secret: string }
    const receiver = await runReceiver(port, secretOf(secret))
    stops.push(receiver.stop)
    const ping = await partner.post(`${API}/webhook-endpoints/${endpointId}/ping`, {})
    expect(ping.status, ping.text).toBe(202)
    return { receiver, eventId: (ping.json as { id: string }).id }
  }

  it("runs in the README's order: its curl registers the endpoint and shows the secret, the receiver started with it logs a payout's events", async ({ server, partner, user }) => {
    expect(registerCommand, "README.md has no registration curl before the receiver").toBeDefined()
    const port = await freePort()
    // the README's receiver listens on 4000 unless PORT says otherwise; this test's receiver on a free port
    const register = registerCommand!.replaceAll("127.0.0.1:4000", `127.0.0.1:${port}`)
    const { stdout } = await promisify(execFile)("bash", ["-euo", "pipefail", "-c", register], {
      env: { ...process.env, BASE: server.baseUrl, KEY: partner.apiKey }
    })
    const { secret } = JSON.parse(stdout) as { secret: string }
    expect(secret).toMatch(/^whsec_/)
    const receiver = await runReceiver(port, secret)
    stops.push(receiver.stop)

    const payout = await partner.payout(user)
    const advanced = await partner.post(`${API}/test-helpers/payouts/${payout.payoutId}/advance`, { to: "completed" })
    expect(advanced.status, advanced.text).toBe(200)
    await vi.waitFor(() => expect(receiver.output()).toContain(`payout.completed ${payout.payoutId}`), {
      timeout: 10_000,
      interval: 20
    })
    expect(receiver.output()).toContain(`payout.created ${payout.payoutId}`)
  })

  it("skips an event older than the last one it applied for that payout (its sequence is not above it)", async ({ partner, user }) => {
    const port = await freePort()
    // subscribed to the outcomes only: `payout.created` never reaches it, until it comes late below
    const wire = await partner.post(`${API}/webhook-endpoints`, {
      url: `http://127.0.0.1:${port}/hooks`,
      events: ["payout.failed", "payout.refunded"]
    })
    expect(wire.status, wire.text).toBe(201)
    const { secret } = wire.json as { secret: string }
    const receiver = await runReceiver(port, secret)
    stops.push(receiver.stop)
    const payout = await partner.payout(user)
    const advance = async (to: string) => {
      const advanced = await partner.post(`${API}/test-helpers/payouts/${payout.payoutId}/advance`, { to })
      expect(advanced.status, advanced.text).toBe(200)
    }
    const printed = (type: string) =>
      vi.waitFor(() => expect(receiver.output()).toContain(`${type} ${payout.payoutId}`), {
        timeout: 10_000,
        interval: 20
      })
    await advance("failed")
    await printed("payout.failed")

    // the payout's first event (sequence 1) arrives after its second, signed with the endpoint's secret
    const listed = await partner.get(`${API}/events`, { type: "payout.created", limit: "100" })
    const stale = (listed.json as { items: Array<{ id: string; data: { object: { payoutId: string } } }> }).items
      .find((event) => event.data.object.payoutId === payout.payoutId)
    expect(stale).toBeDefined()
    const body = JSON.stringify(stale)
    const timestamp = new Date()
    const late = await fetch(`http://127.0.0.1:${port}/hooks`, {
      method: "POST",
      body,
      headers: {
        "webhook-id": stale!.id,
        "webhook-timestamp": String(Math.floor(timestamp.getTime() / 1000)),
        "webhook-signature": new Webhook(secret).sign(stale!.id, timestamp, body)
      }
    })
    expect(late.status).toBe(204)

    await advance("refunded")
    await printed("payout.refunded")
    expect(receiver.output().split("\n").filter((line) => line.startsWith("payout."))).toEqual([
      `payout.failed ${payout.payoutId}`,
      `payout.refunded ${payout.payoutId}`
    ])
  })

  it("without WEBHOOK_SECRET stops at once with one line saying what to set", async () => {
    const { WEBHOOK_SECRET: _, ...env } = process.env
    const child = spawn(process.execPath, [file], { cwd: repoRoot, env: { ...env, PORT: String(await freePort()) } })
    let stderr = ""
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
    const [code] = (await once(child, "exit")) as [number | null]
    expect(code).toBe(1)
    expect(stderr).toBe("set WEBHOOK_SECRET to the endpoint's whsec_… secret\n")
  })

  it("verifies a delivery and logs its type", async ({ partner }) => {
    const { receiver } = await receiverFor(partner, (secret) => secret)
    await vi.waitFor(() => expect(receiver.output()).toContain("endpoint.ping"), { timeout: 10_000, interval: 20 })
  })

  it("with the wrong secret refuses the delivery (400), which the service records and retries", async ({ partner }) => {
    const { eventId, receiver } = await receiverFor(partner, () => `whsec_${Buffer.alloc(32, 1).toString("base64")}`)
    await vi.waitFor(async () => {
      const attempts =
        ((await partner.get(`${API}/events/${eventId}`)).json as { attempts: Array<{ responseStatus: number }> })
          .attempts
      expect(attempts.length).toBeGreaterThanOrEqual(2)
      expect(attempts.every((a) => a.responseStatus === 400)).toBe(true)
    }, { timeout: 10_000, interval: 50 })
    expect(receiver.output()).not.toContain("endpoint.ping")
  })
})
