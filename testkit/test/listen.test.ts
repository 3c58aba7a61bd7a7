/**
 * `integrations-conformance listen` as a developer runs it: the CLI as a child process following a real service (mock
 * mode, fresh database), forwarding to a receiver on 127.0.0.1 that checks every request with the `standardwebhooks`
 * package. Waiting is on the child's output lines and the receiver's deliveries (test/support/webhookReceiver.ts),
 * never on sleeps.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process"
import { once } from "node:events"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { Webhook, WebhookVerificationError } from "standardwebhooks"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { BREB, newAddress, newPartner, type Partner } from "../../test/support/flows.ts"
import { startTestServer, type TestServer } from "../../test/support/server.ts"
import { startReceiver } from "../../test/support/webhookReceiver.ts"
import { itemBytes } from "../src/listen.ts"

const CLI = fileURLToPath(new URL("../src/cli.ts", import.meta.url))
const API = "/api/integrations"
const EVENTS = `${API}/events`
const WAIT_MS = 20_000

// ------------------------------------------------------------------------------------------- the child

interface Listener {
  readonly stdout: Array<string>
  readonly stderr: Array<string>
  /** Resolves with the first line (stdout or stderr, already written or coming) matching `pattern`. */
  readonly line: (pattern: RegExp) => Promise<string>
  /** Ctrl-C: resolves with the exit code. */
  readonly interrupt: () => Promise<number | null>
}

const children = new Set<ChildProcess>()

/** The environment without a WEBHOOK_SECRET of the machine's (listen would take it), with `env` on top. */
const environment = (env: Record<string, string>) => {
  const { WEBHOOK_SECRET: _, ...rest } = process.env
  return { ...rest, NO_COLOR: "1", ...env }
}

const startListen = (args: ReadonlyArray<string>, env: Record<string, string> = {}): Listener => {
  const child = spawn(process.execPath, ["--import", "tsx", CLI, "listen", ...args], {
    env: environment(env),
    stdio: ["ignore", "pipe", "pipe"]
  })
  children.add(child)
  const exited = once(child, "exit").then(([code]) => code as number | null)
  void exited.then(() => children.delete(child))
  const stdout: Array<string> = []
  const stderr: Array<string> = []
  const waiters = new Set<() => void>()
  const collect = (stream: NodeJS.ReadableStream, into: Array<string>) =>
    createInterface({ input: stream }).on("line", (text) => {
      into.push(text)
      for (const waiter of [...waiters]) waiter()
    })
  collect(child.stdout, stdout)
  collect(child.stderr, stderr)
  return {
    stdout,
    stderr,
    line: (pattern) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const found = [...stdout, ...stderr].find((text) => pattern.test(text))
          if (found === undefined) return false
          waiters.delete(check)
          clearTimeout(timer)
          resolve(found)
          return true
        }
        const timer = setTimeout(() => {
          waiters.delete(check)
          reject(new Error(`no line matching ${pattern}; stdout:\n${stdout.join("\n")}\nstderr:\n${stderr.join("\n")}`))
        }, WAIT_MS)
        if (!check()) waiters.add(check)
      }),
    interrupt: () => {
      child.kill("SIGINT")
      return exited
    }
  }
}

/** The secret listen printed at start. */
const printedSecret = async (listener: Listener) =>
  (await listener.line(/signing secret: whsec_/)).match(/whsec_[A-Za-z0-9+/]+={0,2}/)?.[0] ?? ""

const runListen = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  new Promise<{ readonly code: number; readonly stdout: string; readonly stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      ["--import", "tsx", CLI, "listen", ...args],
      { timeout: WAIT_MS, env: environment(env) },
      (error, stdout, stderr) => {
        resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr })
      }
    )
  })

// ----------------------------------------------------------------------------------------------- tests

let server: TestServer

beforeAll(async () => {
  server = await startTestServer()
})
afterAll(async () => {
  for (const child of children) child.kill("SIGKILL")
  await server.close()
})

const eventsOf = async (partner: Partner, type: string) => {
  const listed = await partner.get(EVENTS, { type })
  expect(listed.status, listed.text).toBe(200)
  return (listed.json as { items: ReadonlyArray<{ id: string }> }).items
}

describe("listen", () => {
  it("forwards each new event with the bytes the deployment delivers, signed with the secret it printed", async () => {
    const partner = await newPartner(server)
    // the deployment's own deliveries, to compare bytes with
    const direct = await startReceiver()
    const registered = await partner.post(`${API}/webhook-endpoints`, { url: direct.url })
    expect(registered.status, registered.text).toBe(201)
    const endpointSecret = (registered.json as { secret: string }).secret
    // an event from before listen starts: not forwarded
    const before = await partner.approvedUser()
    const [earlier] = await eventsOf(partner, "kyc.approved")

    const local = await startReceiver()
    // the first attempt of payout.created fails: listen says so and retries
    let failedOnce = false
    local.answer = (arrival) => {
      if (failedOnce || arrival.event.type !== "payout.created") return 204
      failedOnce = true
      return 500
    }
    const listener = startListen([
      "--base-url",
      server.baseUrl,
      "--api-key",
      partner.apiKey,
      "--forward-to",
      local.url,
      "--interval",
      "0.1"
    ])
    const secret = await printedSecret(listener)
    await listener.line(/ready: new events are forwarded/)

    const payout = await partner.payout(before)
    const forwarded = await local.next((a) => a.answered === 204 && a.event.type === "payout.created", WAIT_MS)
    const eventId = forwarded.id
    const delivered = await direct.next((d) => d.id === eventId)

    // the exact bytes the deployment's webhook delivered, and what GET events/{id} reports before its attempts
    expect(forwarded.body).toBe(delivered.body)
    const got = await partner.get(`${EVENTS}/${eventId}`)
    expect(got.text.startsWith(`${forwarded.body.slice(0, -1)},"attempts":[`)).toBe(true)
    expect(forwarded.event).toMatchObject({
      id: eventId,
      type: "payout.created",
      data: { object: { payoutId: payout.payoutId } }
    })

    // Standard Webhooks, checked by the reference package: with listen's secret it verifies; a tampered secret or
    // body does not (the check can fail)
    expect(new Webhook(secret).verify(forwarded.body, forwarded.headers)).toMatchObject({ id: eventId })
    expect(new Webhook(endpointSecret).verify(delivered.body, delivered.headers)).toMatchObject({ id: eventId })
    expect(() => new Webhook(endpointSecret).verify(forwarded.body, forwarded.headers)).toThrow(
      WebhookVerificationError
    )
    const key = Buffer.from(secret.slice("whsec_".length), "base64")
    key.writeUInt8((key[0] ?? 0) ^ 1, 0)
    const tamperedSecret = `whsec_${key.toString("base64")}`
    expect(() => new Webhook(tamperedSecret).verify(forwarded.body, forwarded.headers)).toThrow(
      WebhookVerificationError
    )
    const tamperedBody = forwarded.body.replace(eventId, `${eventId}x`)
    expect(() => new Webhook(secret).verify(tamperedBody, forwarded.headers)).toThrow(WebhookVerificationError)

    // the failed attempt was reported and retried; one line per attempt
    await listener.line(new RegExp(`^→ payout\\.created ${eventId} 204 in \\d+ ms$`))
    expect(listener.stdout).toContainEqual(
      expect.stringMatching(new RegExp(`^→ payout\\.created ${eventId} 500 in \\d+ ms; retrying in 1 s \\(1/3\\)$`))
    )
    // events are forwarded in list order, so the earlier event would have come before payout.created: it did not
    expect(local.deliveries.map((a) => a.id)).not.toContain(earlier?.id)
    expect(local.deliveries.map((a) => a.event.type)).toEqual(["payout.created", "payout.created"])

    expect(await listener.interrupt()).toBe(0)
    expect(listener.stderr.at(-1)).toBe("listen: stopped: 1 delivered, 0 skipped")
    expect([...listener.stdout, ...listener.stderr].join("\n")).not.toContain(partner.apiKey)
    await Promise.all([local.close(), direct.close()])
  })

  it("--since <event id> replays from that event on, signed with the --secret given", async () => {
    const partner = await newPartner(server)
    await partner.approvedUser()
    const address = await partner.approvedUser(newAddress())
    await partner.payout(address)
    const approvals = await eventsOf(partner, "kyc.approved")
    const second = approvals[1]?.id ?? ""
    const [created] = await eventsOf(partner, "payout.created")

    const local = await startReceiver()
    const secret = `whsec_${Buffer.from("a stable secret of 32 bytes.....").toString("base64")}`
    const listener = startListen([
      "--base-url",
      server.baseUrl,
      "--api-key",
      partner.apiKey,
      "--forward-to",
      local.url,
      "--secret",
      secret,
      "--since",
      second,
      "--interval",
      "0.1"
    ])
    await local.next((a) => a.id === created?.id, WAIT_MS)
    expect(local.deliveries.map((a) => a.id)).toEqual([second, created?.id])
    for (const arrival of local.deliveries) {
      expect(new Webhook(secret).verify(arrival.body, arrival.headers)).toMatchObject({
        id: arrival.headers["webhook-id"]
      })
    }
    expect(await listener.interrupt()).toBe(0)
    expect(listener.stderr.join("\n")).not.toContain(secret)
    await local.close()
  })

  it("takes its secret from WEBHOOK_SECRET, kept off the command line (ps shows argv), and never prints it", async () => {
    const partner = await newPartner(server)
    await partner.approvedUser()
    const [approved] = await eventsOf(partner, "kyc.approved")
    const local = await startReceiver()
    const secret = `whsec_${Buffer.from("the secret a receiver reads......").toString("base64")}`
    const args = ["--base-url", server.baseUrl, "--api-key", partner.apiKey, "--forward-to", local.url]
    const listener = startListen([...args, "--since", approved!.id, "--interval", "0.1"], { WEBHOOK_SECRET: secret })
    const arrival = await local.next((a) => a.id === approved!.id, WAIT_MS)
    expect(new Webhook(secret).verify(arrival.body, arrival.headers)).toMatchObject({ id: approved!.id })
    expect(listener.stderr).toContainEqual(`listen: signing with the secret in WEBHOOK_SECRET (…${secret.slice(-4)})`)
    expect(await listener.interrupt()).toBe(0)
    expect([...listener.stdout, ...listener.stderr].join("\n")).not.toContain(secret)
    await local.close()

    const invalid = await runListen(args, { WEBHOOK_SECRET: "not-a-secret" })
    expect({ code: invalid.code, stderr: invalid.stderr }).toEqual({
      code: 2,
      stderr: "listen: WEBHOOK_SECRET must be whsec_ followed by base64 (the key bytes) (see listen --help)\n"
    })
  })

  it("says in one line what is wrong with a URL without its scheme, or https:// to a port speaking plain HTTP", async () => {
    const key = (await server.newIntegration()).apiKey
    const port = new URL(server.baseUrl).port
    const [noScheme, tls] = await Promise.all([
      runListen(["--base-url", `localhost:${port}`, "--api-key", key, "--forward-to", "http://127.0.0.1:9/hooks"]),
      runListen([
        "--base-url",
        server.baseUrl.replace("http://", "https://"),
        "--api-key",
        key,
        "--forward-to",
        "http://127.0.0.1:9/hooks"
      ])
    ])
    expect({ code: noScheme.code, stderr: noScheme.stderr }).toEqual({
      code: 2,
      stderr:
        `listen: --base-url localhost:${port}: a base URL needs a scheme: http://localhost:${port} or https://localhost:${port} (see listen --help)\n`
    })
    expect(tls.code).toBe(2)
    expect(tls.stderr.trimEnd().split("\n").at(-1)).toBe(
      `listen: --base-url: https://127.0.0.1:${port} speaks plain HTTP, not HTTPS: use http://127.0.0.1:${port}`
    )
  })

  it("refuses, in one line and exit 2, what cannot work: an unknown key, a wrong base path, a server that is not this API", async () => {
    const forward = ["--forward-to", "http://127.0.0.1:9/hooks"]
    const unknownKey = "cop_test_pk_0000000000000000000000000000"
    const notTheApi = createServer((_, response) =>
      response.writeHead(200, { "content-type": "text/html" }).end("<html>")
    )
    notTheApi.listen(0, "127.0.0.1")
    await once(notTheApi, "listening")
    const notTheApiUrl = `http://127.0.0.1:${(notTheApi.address() as AddressInfo).port}`
    const [badKey, badPath, otherServer, noTarget, help] = await Promise.all([
      runListen(["--base-url", server.baseUrl, "--api-key", unknownKey, ...forward]),
      runListen([
        "--base-url",
        `${server.baseUrl}${BREB}`,
        "--api-key",
        (await server.newIntegration()).apiKey,
        ...forward
      ]),
      runListen(["--base-url", notTheApiUrl, "--api-key", unknownKey, ...forward]),
      runListen(["--base-url", server.baseUrl, "--api-key", unknownKey]),
      runListen(["--help"])
    ])
    expect(badKey.code).toBe(2)
    expect(badKey.stderr).toMatch(/listen: the key cop_test_pk_…0000 does not authenticate \(401: /)
    expect(badKey.stderr).not.toContain(unknownKey)
    expect(badPath.code).toBe(2)
    expect(badPath.stderr).toMatch(/answered 404: is --base-url the deployment's root/)
    expect(otherServer.code).toBe(2)
    expect(otherServer.stderr).toMatch(/did not answer an events page \(.*\): is --base-url this API\?/)
    notTheApi.close()
    expect(noTarget.code).toBe(2)
    expect(noTarget.stderr).toMatch(/--forward-to <url> is required/)
    expect(help.code).toBe(0)
    for (const option of ["--base-url", "--api-key", "--forward-to", "--secret", "--since", "--interval"]) {
      expect(help.stdout).toContain(option)
    }
  })

  it("against a deployment that rate limits and commits an event late: waits as told, forwards each event once, as listed", async () => {
    // what the fake deployment lists, filtered by createdFrom, in the order recorded (as the API lists events); bodies
    // written unlike JSON.stringify would write them
    const listed: Array<{ readonly createdAt: string; readonly body: string }> = []
    const publish = (id: string, createdAtMs: number) => {
      const createdAt = new Date(createdAtMs).toISOString()
      const body =
        `{ "id": "${id}", "type": "payout.created", "createdAt": "${createdAt}", "data": {"object": {"name": "Pe\\u00f1a €"}} }`
      listed.push({ createdAt, body })
      return body
    }
    let newer = ""
    const polls: Array<{ readonly at: number; readonly status: number; readonly createdFrom: string }> = []
    const fake = createServer((request, response) => {
      const url = new URL(request.url ?? "/", "http://fake")
      if (url.pathname !== EVENTS) return response.writeHead(404).end()
      const createdFrom = url.searchParams.get("createdFrom")
      if (createdFrom !== null) {
        // the first poll after start is rate limited (1 s); the next lists a new event; the one after finds an event
        // created 0.5 s before it but recorded after it (its transaction committed late), and a new one
        const status = polls.length === 1 ? 429 : 200
        polls.push({ at: performance.now(), status, createdFrom })
        if (status === 429) return response.writeHead(429, { "retry-after": "1" }).end("{\"error\":\"slow down\"}")
        if (polls.length === 3) newer = publish("evt_newer", Date.now())
        if (polls.length === 4) {
          publish("evt_late", Date.parse(JSON.parse(newer).createdAt) - 500)
          publish("evt_marker", Date.now())
        }
      }
      const items = listed.filter((event) => createdFrom === null || event.createdAt >= createdFrom)
      response.writeHead(200, { "content-type": "application/json" }).end(
        `{"integrationId":"int_fake","items":[${items.map((event) => event.body).join(",")}],"nextCursor":null}`
      )
    })
    fake.listen(0, "127.0.0.1")
    await once(fake, "listening")
    const local = await startReceiver()
    const listener = startListen([
      "--base-url",
      `http://127.0.0.1:${(fake.address() as AddressInfo).port}`,
      "--api-key",
      "cop_test_pk_fake0000000000000000",
      "--forward-to",
      local.url,
      "--interval",
      "0.05"
    ])
    const secret = await printedSecret(listener)
    await local.next((a) => a.id === "evt_marker", WAIT_MS)

    // the late event comes after evt_newer, as listed; evt_newer, on the last page read again, is not sent twice
    expect(local.deliveries.map((a) => a.id)).toEqual(["evt_newer", "evt_late", "evt_marker"])
    const [first] = local.deliveries
    expect(first?.body).toBe(newer)
    for (const arrival of local.deliveries) {
      expect(new Webhook(secret).verify(arrival.body, arrival.headers)).toMatchObject({
        id: arrival.headers["webhook-id"]
      })
    }
    await listener.line(/listen: rate limited; waiting 1 s/)
    const [, limited, after] = polls
    expect(limited?.status).toBe(429)
    expect((after?.at ?? 0) - (limited?.at ?? 0)).toBeGreaterThanOrEqual(1000)
    expect(await listener.interrupt()).toBe(0)
    fake.closeAllConnections()
    await Promise.all([local.close(), new Promise((resolve) => fake.close(resolve))])
  })

  it("cuts each listed event out of the page byte for byte, whatever its strings hold", () => {
    // spacing and escapes JSON.stringify would not write: only the bytes as given are the bytes that were signed
    const items = [
      `{"id":"evt_1","s":"]}\\"{[\\\\"}`,
      `{ "id": "evt_2", "name": "Pe\\u00f1a €", "items": [1, {"a": []}] }`
    ]
    const page = Buffer.from(`{"integrationId":"int_1", "items" : [${items.join(" , ")}],"nextCursor":null}`)
    expect(itemBytes(page).map((item) => item.toString("utf8"))).toEqual(items)
  })
})
