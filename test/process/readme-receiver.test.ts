/**
 * The README's webhook receivers, run as a partner would paste them, each its own process: the 20-line Node one (the
 * `standardwebhooks` package) and the Python one (standard library only, the HMAC done by hand). The Node one in the
 * README's order: its registration curl first (the answer carries the secret), then the receiver started with that
 * secret, which receives and verifies real deliveries from the service; with the wrong secret it answers 400 and the
 * delivery is retried; without one it stops at once with one line. Both: real deliveries, and deliveries signed by
 * the service's own signing code (src/partnerEvents/Signing.ts) that a receiver must take (a rotation's two
 * signatures, a timestamp 4 minutes off) or refuse (another secret, a changed byte, a timestamp 6 minutes off, the
 * secret's text as the key instead of its base64-decoded bytes), which is what the README's two facts for receivers
 * not written in Node say. Where python3 is missing the Python receiver's tests are skipped, saying so loudly: never
 * counted as passed.
 */
import { execFile, spawn, spawnSync } from "node:child_process"
import { createHmac } from "node:crypto"
import { once } from "node:events"
import { readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { promisify } from "node:util"
import { Redacted } from "effect"
import { Webhook } from "standardwebhooks"
import { describe, expect, vi } from "vitest"
import { newSigningSecret, signatureHeaders } from "../../src/partnerEvents/Signing.ts"
import { httpTest } from "../support/fixture.ts"
import type { Partner } from "../support/flows.ts"
import { repoRoot } from "../support/process.ts"

const API = "/api/integrations"
const readme = readFileSync(join(repoRoot, "README.md"), "utf8")
const receiverCode = /A receiver in 20 lines[\s\S]*?```js\n([\s\S]*?)```/.exec(readme)?.[1]
const pythonCode = /The same receiver in Python[\s\S]*?```python\n([\s\S]*?)```/.exec(readme)?.[1]
/** The README's curl that registers the receiver's URL, before the receiver's code. */
const registerCommand = /A receiver in 20 lines(?:(?!```)[\s\S])*```sh\n([\s\S]*?)```/.exec(readme)?.[1]
const file = join(repoRoot, `.readme-receiver-${process.pid}.mjs`)
const pythonFile = join(repoRoot, `.readme-receiver-${process.pid}.py`)

const python = spawnSync("python3", ["--version"], { encoding: "utf8" })
const pythonMissing = python.error !== undefined || python.status !== 0
if (pythonMissing) {
  console.warn(
    "\n!!! test/process/readme-receiver.test.ts: the README's Python receiver was NOT run: no python3 on PATH (apt-get install python3); its tests are SKIPPED !!!\n"
  )
}

/** How each receiver of the README is started, from the file its code is written to. */
const RECEIVERS = {
  node: { command: process.execPath, file, code: () => receiverCode },
  python: { command: "python3", file: pythonFile, code: () => pythonCode }
} as const
type Language = keyof typeof RECEIVERS

const freePort = async () => {
  const { createServer } = await import("node:net")
  const server = createServer().listen(0, "127.0.0.1")
  await once(server, "listening")
  const port = (server.address() as { port: number }).port
  server.close()
  return port
}

/** Starts a README receiver on `port` with `secret`; resolves once it answers (400 to an unsigned POST). */
const runReceiver = async (port: number, secret: string, language: Language = "node") => {
  const child = spawn(RECEIVERS[language].command, [RECEIVERS[language].file], {
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
    expect(pythonCode, "README.md has no Python receiver block").toBeDefined()
    for (const receiver of Object.values(RECEIVERS)) writeFileSync(receiver.file, receiver.code()!)
  })
  it.afterAll(() => {
    for (const stop of stops) stop()
    for (const receiver of Object.values(RECEIVERS)) rmSync(receiver.file, { force: true })
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

  for (const language of ["node", "python"] as const) {
    const skip = language === "python" && pythonMissing
    const named = `${language === "node" ? "Node" : "Python"} receiver`

    it.skipIf(skip)(
      `${named}: takes what the service's signing code signs (a rotation's two signatures, 4 minutes off), refuses what it must`,
      async () => {
        const port = await freePort()
        const secret = newSigningSecret()
        const receiver = await runReceiver(port, Redacted.value(secret), language)
        stops.push(receiver.stop)
        const nowSeconds = Math.floor(Date.now() / 1000)
        let sequence = 0
        /** A payout event body of its own resource, signed with `secrets` at `timestampSeconds`; its answer. */
        const deliver = async (
          secrets: ReadonlyArray<Redacted.Redacted<string>>,
          timestampSeconds: number,
          tamper: (body: string) => string = (body) => body
        ) => {
          sequence += 1
          const eventId = `evt_readme${language}${sequence}`
          const payoutId = `po_${language}${sequence}`
          const body = JSON.stringify({
            id: eventId,
            type: "payout.completed",
            createdAt: new Date().toISOString(),
            sequence: 1,
            data: { object: { payoutId, status: "completed" } }
          })
          const headers = signatureHeaders({ eventId, timestampSeconds, body, secrets })
          const answer = await fetch(`http://127.0.0.1:${port}/hooks`, { method: "POST", body: tamper(body), headers })
          return { status: answer.status, payoutId }
        }
        const retired = newSigningSecret()
        const other = newSigningSecret()
        // the secret's text, not its base64-decoded bytes, as the HMAC key: what a hand-written receiver may get wrong
        const textAsKey = async () => {
          sequence += 1
          const eventId = `evt_readme${language}${sequence}`
          const body = JSON.stringify({ id: eventId, type: "endpoint.ping", createdAt: "", sequence: 1, data: {} })
          const signed = `${eventId}.${nowSeconds}.${body}`
          const wrong = createHmac("sha256", Redacted.value(secret)).update(signed).digest("base64")
          const answer = await fetch(`http://127.0.0.1:${port}/hooks`, {
            method: "POST",
            body,
            headers: {
              "webhook-id": eventId,
              "webhook-timestamp": String(nowSeconds),
              "webhook-signature": `v1,${wrong}`
            }
          })
          return answer.status
        }

        const taken = [
          await deliver([secret], nowSeconds),
          await deliver([retired, secret], nowSeconds), // during a rotation: the new and the old secret sign
          await deliver([secret], nowSeconds - 4 * 60),
          await deliver([secret], nowSeconds + 4 * 60)
        ]
        expect(taken.map(({ status }) => status)).toEqual([204, 204, 204, 204])
        const refused = [
          await deliver([other], nowSeconds),
          await deliver([secret], nowSeconds, (body) => body.replace("completed", "Completed")),
          await deliver([secret], nowSeconds - 6 * 60),
          await deliver([secret], nowSeconds + 6 * 60)
        ]
        expect(refused.map(({ status }) => status)).toEqual([400, 400, 400, 400])
        expect(await textAsKey()).toBe(400)
        await vi.waitFor(() => {
          for (const { payoutId } of taken) expect(receiver.output()).toContain(`payout.completed ${payoutId}\n`)
        }, { timeout: 10_000, interval: 20 })
        for (const { payoutId } of refused) expect(receiver.output()).not.toContain(payoutId)
      }
    )
  }

  it.skipIf(pythonMissing)(
    "Python receiver: logs a payout's real deliveries, once each, and skips a stale one",
    async ({ partner, user }) => {
      const port = await freePort()
      const wire = await partner.post(`${API}/webhook-endpoints`, {
        url: `http://127.0.0.1:${port}/hooks`,
        events: ["payout.created", "payout.failed", "payout.refunded"]
      })
      expect(wire.status, wire.text).toBe(201)
      const { secret } = wire.json as { secret: string }
      const receiver = await runReceiver(port, secret, "python")
      stops.push(receiver.stop)
      const payout = await partner.payout(user)
      for (const to of ["failed", "refunded"]) {
        const advanced = await partner.post(`${API}/test-helpers/payouts/${payout.payoutId}/advance`, { to })
        expect(advanced.status, advanced.text).toBe(200)
      }
      await vi.waitFor(() => expect(receiver.output()).toContain(`payout.refunded ${payout.payoutId}`), {
        timeout: 10_000,
        interval: 20
      })
      // the payout's first event again, late (a redelivery): its sequence is not above the last applied
      const listed = await partner.get(`${API}/events`, { type: "payout.created", limit: "100" })
      const first = (listed.json as { items: Array<{ id: string; data: { object: { payoutId: string } } }> }).items
        .find((event) => event.data.object.payoutId === payout.payoutId)!
      const body = JSON.stringify(first)
      const timestamp = new Date()
      const late = await fetch(`http://127.0.0.1:${port}/hooks`, {
        method: "POST",
        body,
        headers: {
          "webhook-id": first.id,
          "webhook-timestamp": String(Math.floor(timestamp.getTime() / 1000)),
          "webhook-signature": new Webhook(secret).sign(first.id, timestamp, body)
        }
      })
      expect(late.status).toBe(204)
      expect(receiver.output().split("\n").filter((line) => line.startsWith("payout."))).toEqual([
        `payout.created ${payout.payoutId}`,
        `payout.failed ${payout.payoutId}`,
        `payout.refunded ${payout.payoutId}`
      ])
    }
  )

  it.skipIf(pythonMissing)(
    "Python receiver: without WEBHOOK_SECRET stops at once with the same line as the Node one",
    async () => {
      const { WEBHOOK_SECRET: _, ...env } = process.env
      const child = spawn("python3", [pythonFile], { cwd: repoRoot, env: { ...env, PORT: String(await freePort()) } })
      let stderr = ""
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
      const [code] = (await once(child, "exit")) as [number | null]
      expect(code).toBe(1)
      expect(stderr).toBe("set WEBHOOK_SECRET to the endpoint's whsec_… secret\n")
    }
  )
})
