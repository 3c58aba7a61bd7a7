/**
 * A delivery attempt's `responseExcerpt` (issue #31, the dashboard's deliveries): the first ≤ 256 characters of the
 * receiver's body as text, control characters stripped, stored with the attempt and answered by `GET events/{id}`.
 * Reading stays bounded: at most 1 KiB of the body is kept, no more than 64 KiB is read (a body that never ends does
 * not hold the attempt), and a body that stalls ends the attempt at its timeout with what came. Attempts recorded
 * before the field existed answer null.
 */
import { once } from "node:events"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { EventWithAttempts } from "@cop-integrations/contracts"
import { Effect, Schema } from "effect"
import { afterAll, beforeAll, describe, expect, vi } from "vitest"
import { excerptOf, postWebhook, type SendOutcome } from "../../src/partnerEvents/Sender.ts"
import { httpTest } from "../support/fixture.ts"
import { sql } from "../support/flows.ts"

const API = "/api/integrations"
const TIMEOUT_MS = 500

/** A receiver whose answer each test scripts; it counts what it wrote and whether its connection was closed. */
interface Scripted {
  readonly url: string
  answer: (request: IncomingMessage, response: ServerResponse) => void
  readonly close: () => Promise<void>
}

const startScripted = async (): Promise<Scripted> => {
  const scripted: Scripted = {
    url: "",
    answer: (_, response) => response.end(),
    close: async () => {
      server.closeAllConnections()
      server.close()
      await once(server, "close")
    }
  }
  const server: Server = createServer((request, response) => {
    request.resume()
    request.on("end", () => scripted.answer(request, response))
  })
  server.listen(0, "127.0.0.1")
  await once(server, "listening")
  ;(scripted as { url: string }).url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`
  return scripted
}

const send = (url: string, timeoutMs = TIMEOUT_MS): Promise<SendOutcome> =>
  Effect.runPromise(postWebhook({ url: new URL(url), headers: {}, body: "{}", timeoutMs, lookup: undefined }))

describe("excerptOf", () => {
  const excerpt = (text: string | Buffer) => excerptOf(typeof text === "string" ? Buffer.from(text) : text)

  it("keeps printable text, line breaks and tabs as a space, other control characters removed", () => {
    expect(excerpt("{\"received\":true}")).toBe("{\"received\":true}")
    expect(excerpt("ok\u0000\u0007\r\nline 2\tand\u001b[31m red\u007f\u0085 \u202eevil\u2066")).toBe(
      "ok line 2 and[31m red evil"
    )
    expect(excerpt("  \r\n padded \n ")).toBe("padded")
  })

  it("is at most 256 characters, counted as characters (not UTF-16 units or bytes)", () => {
    expect(excerpt("a".repeat(1024))).toBe("a".repeat(256))
    expect(excerpt("é".repeat(300))).toBe("é".repeat(256))
    expect(excerpt("😀".repeat(256))).toBe("😀".repeat(256))
  })

  it("leaves out a character cut at the end of the bytes kept, and reads invalid bytes as U+FFFD", () => {
    const cut = Buffer.concat([Buffer.from("abc"), Buffer.from("é").subarray(0, 1)])
    expect(excerpt(cut)).toBe("abc")
    expect(excerpt(Buffer.from([0x61, 0xff, 0x62]))).toBe("a\ufffdb")
  })

  it("is null for no text", () => {
    expect(excerpt("")).toBeNull()
    expect(excerpt("\u0000\r\n\t ")).toBeNull()
  })
})

describe("postWebhook reads a bounded excerpt of the receiver's body", () => {
  let receiver: Scripted
  beforeAll(async () => {
    receiver = await startScripted()
  })
  afterAll(() => receiver?.close())

  it("answers the body's start with the outcome, delivered or not", async () => {
    receiver.answer = (_, response) => response.writeHead(200).end("{\"received\":true}")
    expect(await send(receiver.url)).toEqual({ ok: true, status: 200, responseExcerpt: "{\"received\":true}" })
    receiver.answer = (_, response) => response.writeHead(500, { "content-type": "text/html" }).end("<h1>boom</h1>\n")
    expect(await send(receiver.url)).toEqual({
      ok: false,
      status: 500,
      error: "answered HTTP 500",
      responseExcerpt: "<h1>boom</h1>"
    })
    receiver.answer = (_, response) => response.writeHead(204).end()
    expect(await send(receiver.url)).toEqual({ ok: true, status: 204, responseExcerpt: null })
  })

  it("keeps 256 characters of a large body, and stops reading a body that never ends", async () => {
    receiver.answer = (_, response) => response.writeHead(200).end("x".repeat(200_000))
    expect(await send(receiver.url, 10_000)).toEqual({ ok: true, status: 200, responseExcerpt: "x".repeat(256) })

    let written = 0
    let closed = false
    receiver.answer = (_, response) => {
      response.writeHead(200)
      const chunk = Buffer.alloc(16 * 1024, "y")
      const more = () => {
        if (closed) return
        written += chunk.length
        if (response.write(chunk)) setImmediate(more)
        else response.once("drain", more)
      }
      response.on("close", () => void (closed = true))
      more()
    }
    // A generous timeout: the attempt must end because the reading stopped, not because time ran out.
    const outcome = await send(receiver.url, 60_000)
    expect(outcome).toEqual({ ok: true, status: 200, responseExcerpt: "y".repeat(256) })
    await vi.waitFor(() => expect(closed, "the sender closed the connection").toBe(true), { timeout: 15_000 })
    console.info(`endless body: the sender stopped after the receiver wrote ${written} bytes`)
  })

  it("does not wait for a body that stalls past the timeout: what came is the excerpt", async () => {
    receiver.answer = (_, response) => {
      response.writeHead(200)
      response.write("partial answer")
    }
    expect(await send(receiver.url)).toEqual({
      ok: false,
      status: null,
      error: `timed out after ${TIMEOUT_MS} ms`,
      responseExcerpt: "partial answer"
    })
  })
})

const it = httpTest({ env: { WEBHOOK_RETRY_BASE_MS: "3600000", WEBHOOK_TIMEOUT_MS: "2000" } })

describe("GET events/{eventId}: each attempt's responseExcerpt", () => {
  let receiver: Scripted
  it.beforeAll(async () => {
    receiver = await startScripted()
  })
  it.afterAll(() => receiver?.close())

  const attemptsOf = async (
    partner: { get: (path: string) => Promise<{ status: number; text: string; json: unknown }> },
    eventId: string
  ) => {
    const wire = await partner.get(`${API}/events/${eventId}`)
    expect(wire.status, wire.text).toBe(200)
    return Schema.decodeUnknownSync(EventWithAttempts)(wire.json).attempts
  }

  it("is stored when the attempt is recorded, and null for attempts recorded before it existed", async ({ server, partner }) => {
    receiver.answer = (_, response) =>
      response.writeHead(503, { "content-type": "text/plain" }).end(`busy\r\n\u0000try later ${"z".repeat(400)}`)
    const created = await partner.post(`${API}/webhook-endpoints`, { url: receiver.url, events: ["endpoint.ping"] })
    expect(created.status, created.text).toBe(201)
    const { endpointId } = created.json as { endpointId: string }
    const ping = await partner.post(`${API}/webhook-endpoints/${endpointId}/ping`, {})
    expect(ping.status, ping.text).toBe(202)
    const eventId = (ping.json as { id: string }).id
    const attempts = await vi.waitFor(async () => {
      const found = await attemptsOf(partner, eventId)
      expect(found).toHaveLength(1)
      return found
    }, { timeout: 15_000, interval: 20 })
    expect(attempts[0]).toMatchObject({
      endpointId,
      outcome: "failed",
      responseStatus: 503,
      responseExcerpt: `busy try later ${"z".repeat(256 - "busy try later ".length)}`
    })
    expect(attempts[0]!.responseExcerpt).toHaveLength(256)

    // An attempt row as migrations before 0024 left it: no excerpt column value.
    await sql(
      server,
      (q) =>
        q`INSERT INTO event_delivery_attempts (event_id, endpoint_id, attempted_at, duration_ms, response_status, error, succeeded)
        VALUES (${eventId}, ${endpointId}, now(), 12, 200, NULL, true) RETURNING id`
    )
    const both = await attemptsOf(partner, eventId)
    expect(both).toHaveLength(2)
    expect(both[1]).toMatchObject({ outcome: "succeeded", responseStatus: 200, responseExcerpt: null })
  })
})
