/**
 * The SDK against a started service over real HTTP: typed answers and errors, lists followed to their end, and the
 * retry rules (through a loopback stand-in that answers what a test scripts before passing requests on).
 */
import { once } from "node:events"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { approveKyc, newAddress, newTxHash, payoutBody } from "../../test/support/http.ts"
import { startTestServer, type TestServer } from "../../test/support/server.ts"
import {
  IntegrationsApiError,
  IntegrationsClient,
  IntegrationsConnectionError,
  type RetryNotice
} from "../src/index.ts"

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server.close())

const newClient = async (options: Partial<ConstructorParameters<typeof IntegrationsClient>[0]> = {}) => {
  const { apiKey } = await server.newIntegration()
  return { apiKey, client: new IntegrationsClient({ apiKey, baseUrl: server.baseUrl, ...options }) }
}

describe("typed calls", () => {
  it("a payout from quote to completed, each answer the contract's object", async () => {
    const { apiKey, client } = await newClient()
    const userAddress = newAddress()
    const quote = await client.quotes.get({ destinationCop: "250000" })
    expect(quote.display).toMatch(/^1 USD = \d+(\.\d+)? COP$/)
    const otp = await client.kyc.sendOtp({ email: "ana@example.com", userAddress })
    expect((await client.kyc.verifyOtp({ userAddress, code: otp.debugCode ?? "" })).kycStatus).toBe("approved")
    const payout = await client.payouts.create(payoutBody(userAddress))
    expect(payout.status).toBe("awaiting_deposit")
    expect((await client.payouts.confirm(payout.payoutId, { txHash: newTxHash() })).status).toBe("deposit_confirmed")
    const completed = await client.testHelpers.advancePayout(payout.payoutId, { to: "completed" })
    expect(completed.status).toBe("completed")
    expect((await client.payouts.get(payout.payoutId)).status).toBe("completed")
    expect(apiKey).toMatch(/^cop_test_pk_/)
  })

  it("an answer outside 2xx is an IntegrationsApiError with the status, errorCode, ErrorBody and request id", async () => {
    const { client } = await newClient()
    const refused = await client.payouts.create(payoutBody(newAddress())).catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(IntegrationsApiError)
    const error = refused as IntegrationsApiError
    expect(error.status).toBe(409)
    expect(error.errorCode).toBe("needs_kyc")
    expect(error.body).toEqual({ error: expect.any(String), errorCode: "needs_kyc" })
    expect(error.requestId).toMatch(/^req_/)
    expect(error.operationId).toBe("breb.createPayout")

    const invalid = await client.quotes.get({ destinationCop: "-5" }).catch((caught: unknown) => caught)
    expect((invalid as IntegrationsApiError).status).toBe(400)
    expect((invalid as IntegrationsApiError).errorCode).toBeUndefined()
    expect((invalid as IntegrationsApiError).message).toContain("destinationCop")

    const missing = await client.payouts.get("po_missing").catch((caught: unknown) => caught)
    expect((missing as IntegrationsApiError).status).toBe(404)
  })

  it("another integration's payout is 404 through the SDK as through curl", async () => {
    const owner = await newClient()
    const stranger = await newClient()
    const userAddress = newAddress()
    await approveKyc(server, owner.apiKey, userAddress)
    const payout = await owner.client.payouts.create(payoutBody(userAddress))
    const seen = await stranger.client.payouts.get(payout.payoutId).catch((caught: unknown) => caught)
    expect((seen as IntegrationsApiError).status).toBe(404)
  })
})

describe("lists", () => {
  it("for await yields every item once, in the list's order, following nextCursor page after page", async () => {
    const { apiKey, client } = await newClient()
    const userAddress = newAddress()
    await approveKyc(server, apiKey, userAddress)
    const created: Array<string> = []
    for (let index = 0; index < 5; index++) {
      created.push((await client.payouts.create(payoutBody(userAddress))).payoutId)
    }

    const seen: Array<string> = []
    for await (const payout of client.payouts.list({ limit: 2 })) seen.push(payout.payoutId)
    expect(seen).toEqual(created)

    const pages: Array<number> = []
    for await (const page of client.payouts.list({ limit: 2 }).pages()) pages.push(page.items.length)
    expect(pages).toEqual([2, 2, 1])

    const first = await client.payouts.list({ limit: 2 }).page()
    const resumed = await client.payouts.list({ limit: 2, cursor: first.nextCursor ?? "" }).toArray()
    expect(resumed.map((payout) => payout.payoutId)).toEqual(created.slice(2))
  })

  it("a report's rows arrive as objects, the CSV as text", async () => {
    const { apiKey, client } = await newClient()
    const userAddress = newAddress()
    await approveKyc(server, apiKey, userAddress)
    const payout = await client.payouts.create(payoutBody(userAddress))
    const range = {
      from: new Date(Date.now() - 3_600_000).toISOString(),
      to: new Date(Date.now() + 60_000).toISOString()
    }
    const rows = []
    for await (const row of client.reports.payoutRows(range)) rows.push(row)
    expect(rows.map((row) => row.payoutId)).toEqual([payout.payoutId])
    const csv = await client.reports.payoutsCsv(range)
    expect(csv.split("\r\n")[0]).toContain("payoutId")
    expect(csv).toContain(payout.payoutId)
  })
})

/** Stands in front of the service: answers `script` in turn, then passes requests on; records what it saw. */
const frontOf = async (target: string, script: Array<(response: ServerResponse) => void>) => {
  const seen: Array<{ readonly method: string; readonly url: string; readonly idempotencyKey: string | undefined }> = []
  const proxy = createServer((request: IncomingMessage, response: ServerResponse) => {
    seen.push({
      method: request.method ?? "",
      url: request.url ?? "",
      idempotencyKey: request.headers["idempotency-key"] as string | undefined
    })
    const scripted = script.shift()
    if (scripted !== undefined) {
      request.resume()
      return scripted(response)
    }
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk)).on("end", () => {
      const headers = Object.entries(request.headers).filter(([name]) => name !== "host" && name !== "content-length")
      void fetch(`${target}${request.url}`, {
        method: request.method ?? "GET",
        headers: headers as Array<[string, string]>,
        ...(chunks.length === 0 ? {} : { body: Buffer.concat(chunks) })
      }).then(async (answer) => {
        response.writeHead(answer.status, Object.fromEntries(answer.headers))
        response.end(Buffer.from(await answer.arrayBuffer()))
      })
    })
  })
  proxy.listen(0, "127.0.0.1")
  await once(proxy, "listening")
  return {
    url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    seen,
    /** One more scripted answer. */
    script: (next: (response: ServerResponse) => void) => script.push(next),
    close: () =>
      new Promise<void>((resolve) => {
        proxy.closeAllConnections()
        proxy.close(() => resolve())
      })
  }
}

const answer = (status: number, retryAfter: string) => (response: ServerResponse) => {
  response.writeHead(status, { "content-type": "application/json", "retry-after": retryAfter })
  response.end(JSON.stringify({ error: `scripted ${status}` }))
}
const hangUp = (response: ServerResponse) => response.socket?.destroy()
/** Holds the request open and never answers. */
const silent = (): undefined => undefined

describe("retries", () => {
  it("a 503 then a 429 are retried after their Retry-After, with the call's one Idempotency-Key: one payout made", async () => {
    const { apiKey } = await newClient()
    const userAddress = newAddress()
    await approveKyc(server, apiKey, userAddress)
    const front = await frontOf(server.baseUrl, [answer(503, "1"), answer(429, "1")])
    const notices: Array<RetryNotice> = []
    try {
      const client = new IntegrationsClient({ apiKey, baseUrl: front.url, onRetry: (notice) => notices.push(notice) })
      const payout = await client.payouts.create(payoutBody(userAddress))
      expect(front.seen.map((request) => request.method)).toEqual(["POST", "POST", "POST"])
      const keys = new Set(front.seen.map((request) => request.idempotencyKey))
      expect(keys.size).toBe(1)
      expect([...keys][0]).toMatch(/^[0-9a-f-]{36}$/)
      expect(notices.map(({ retry, status, delayMs }) => ({ retry, status, delayMs }))).toEqual([
        { retry: 1, status: 503, delayMs: 1000 },
        { retry: 2, status: 429, delayMs: 1000 }
      ])
      const direct = new IntegrationsClient({ apiKey, baseUrl: server.baseUrl })
      expect((await direct.payouts.list().toArray()).map((each) => each.payoutId)).toEqual([payout.payoutId])
    } finally {
      await front.close()
    }
  })

  it("each logical call has its own key; a key passed in is the one sent", async () => {
    const { apiKey } = await newClient()
    const userAddress = newAddress()
    await approveKyc(server, apiKey, userAddress)
    const front = await frontOf(server.baseUrl, [])
    try {
      const client = new IntegrationsClient({ apiKey, baseUrl: front.url })
      const first = await client.payouts.create(payoutBody(userAddress))
      const second = await client.payouts.create(payoutBody(userAddress))
      const third = await client.payouts.create(payoutBody(userAddress), { idempotencyKey: "order-1" })
      const again = await client.payouts.create(payoutBody(userAddress), { idempotencyKey: "order-1" })
      expect(new Set([first.payoutId, second.payoutId, third.payoutId]).size).toBe(3)
      expect(again.payoutId).toBe(third.payoutId)
      const [a, b, c, d] = front.seen.map((request) => request.idempotencyKey)
      expect(a).not.toBe(b)
      expect([c, d]).toEqual(["order-1", "order-1"])
    } finally {
      await front.close()
    }
  })

  it("a Retry-After past maxRetryDelayMs is not waited for: the error says how long to wait", async () => {
    const { apiKey } = await newClient()
    const front = await frontOf(server.baseUrl, [answer(503, "120")])
    try {
      const client = new IntegrationsClient({ apiKey, baseUrl: front.url, maxRetryDelayMs: 5000 })
      const error = await client.quotes.get().catch((caught: unknown) => caught)
      expect(error).toBeInstanceOf(IntegrationsApiError)
      expect((error as IntegrationsApiError).retryAfterSeconds).toBe(120)
      expect(front.seen).toHaveLength(1)
    } finally {
      await front.close()
    }
  })

  it("retries stop after maxRetries; a 409 is never retried", async () => {
    const { apiKey } = await newClient()
    const front = await frontOf(server.baseUrl, [answer(503, "0"), answer(503, "0"), answer(503, "0")])
    try {
      const client = new IntegrationsClient({ apiKey, baseUrl: front.url, maxRetries: 2 })
      const error = await client.quotes.get().catch((caught: unknown) => caught)
      expect((error as IntegrationsApiError).status).toBe(503)
      expect(front.seen).toHaveLength(3)
      const conflict = await client.payouts.create(payoutBody(newAddress())).catch((caught: unknown) => caught)
      expect((conflict as IntegrationsApiError).errorCode).toBe("needs_kyc")
      expect(front.seen).toHaveLength(4) // the 409 once
    } finally {
      await front.close()
    }
  })

  it("an attempt without an answer within timeoutMs is abandoned and, for a GET, sent again; the caller's signal stops it all", async () => {
    const { apiKey } = await newClient()
    const front = await frontOf(server.baseUrl, [silent, silent])
    const notices: Array<RetryNotice> = []
    try {
      const client = new IntegrationsClient({
        apiKey,
        baseUrl: front.url,
        timeoutMs: 300,
        maxRetries: 1,
        onRetry: (notice) => notices.push(notice)
      })
      const error = await client.quotes.get().catch((caught: unknown) => caught)
      expect(error).toBeInstanceOf(IntegrationsConnectionError)
      expect(front.seen).toHaveLength(2)
      expect(notices.map((notice) => notice.status)).toEqual([undefined])

      front.script(silent)
      const caller = new AbortController()
      const patient = new IntegrationsClient({ apiKey, baseUrl: front.url, timeoutMs: 60_000 })
      const stopped = patient.quotes.get({}, { signal: caller.signal }).catch((caught: unknown) => caught)
      await vi.waitFor(() => expect(front.seen).toHaveLength(3))
      caller.abort(new Error("the caller gave up"))
      expect(await stopped).toEqual(new Error("the caller gave up"))
    } finally {
      await front.close()
    }
  })

  it("no answer: a GET is sent again, a confirm (no Idempotency-Key) is not", async () => {
    const { apiKey } = await newClient()
    const userAddress = newAddress()
    await approveKyc(server, apiKey, userAddress)
    const direct = new IntegrationsClient({ apiKey, baseUrl: server.baseUrl })
    const payout = await direct.payouts.create(payoutBody(userAddress))
    const front = await frontOf(server.baseUrl, [hangUp])
    try {
      const client = new IntegrationsClient({ apiKey, baseUrl: front.url })
      expect((await client.payouts.get(payout.payoutId)).payoutId).toBe(payout.payoutId)
      expect(front.seen.map((request) => request.method)).toEqual(["GET", "GET"])
      front.script(hangUp)
      const error = await client.payouts.confirm(payout.payoutId, { txHash: newTxHash() }).catch((caught) => caught)
      expect(error).toBeInstanceOf(IntegrationsConnectionError)
      expect(front.seen.map((request) => request.method)).toEqual(["GET", "GET", "POST"])
    } finally {
      await front.close()
    }
  })
})
