/**
 * The curl a failure prints is copy-pasteable: run by bash (as a person would paste it) against a
 * server that echoes what it got, it sends the same method, path, headers and bytes, with the key read
 * from the environment variable the command names.
 */
import { execFile } from "node:child_process"
import { createServer, type IncomingMessage } from "node:http"
import type { AddressInfo } from "node:net"
import { promisify } from "node:util"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Exchange, makeHttp } from "../src/http.ts"

interface Received {
  readonly method: string
  readonly url: string
  readonly authorization: string | undefined
  readonly contentType: string | undefined
  readonly body: Buffer
}

const received: Array<Received> = []
const server = createServer((request: IncomingMessage, response) => {
  const chunks: Array<Buffer> = []
  request.on("data", (chunk: Buffer) => chunks.push(chunk))
  request.on("end", () => {
    received.push({
      method: request.method ?? "",
      url: request.url ?? "",
      authorization: request.headers["authorization"],
      contentType: request.headers["content-type"],
      body: Buffer.concat(chunks)
    })
    response.writeHead(200, { "content-type": "application/json" }).end("{}")
  })
})
let baseUrl = ""

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

const KEY = "cop_test_pk_kitCurlTestKey0000000000000000000000000000000000"

const recordOne = async (request: Parameters<ReturnType<typeof makeHttp>["send"]>[0]): Promise<Exchange> => {
  const recorded: Array<Exchange> = []
  const http = makeHttp(
    { baseUrl, apiKey: KEY, secondApiKey: undefined, fetch, requestTimeoutMs: 5000 },
    (exchange) => recorded.push(exchange)
  )
  await Effect.runPromise(http.send(request))
  received.length = 0
  return recorded[0]!
}

const runInBash = (curl: string) =>
  promisify(execFile)("bash", ["-c", curl], { env: { ...process.env, CONFORMANCE_API_KEY: KEY }, maxBuffer: 1 << 20 })

describe("the curl of a recorded request", () => {
  it("never contains the key, only the variable that holds it", async () => {
    const exchange = await recordOne({ method: "GET", path: "/api/integrations/breb/quote?destinationCop=100000" })
    expect(exchange.curl).not.toContain(KEY)
    expect(exchange.curl).toContain("$CONFORMANCE_API_KEY")
    expect(JSON.stringify(exchange.request)).not.toContain(KEY)
  })

  const bodies: ReadonlyArray<readonly [string, string | Uint8Array]> = [
    ["JSON with quotes and unicode", JSON.stringify({ accountOwnerName: "O'Brien \"Ñandú\" 💸", breBKey: "@a" })],
    ["bytes that are not UTF-8", Uint8Array.of(0x7b, 0x22, 0xff, 0xfe, 0x27, 0x5c, 0x00, 0x22, 0x7d)],
    ["a 70 KB body", JSON.stringify({ accountOwnerName: "a".repeat(70_000) })]
  ]
  for (const [name, body] of bodies) {
    it(`reproduces ${name} byte for byte when pasted into bash`, async () => {
      const exchange = await recordOne({
        method: "POST",
        path: "/api/integrations/breb/payouts",
        body,
        headers: { "Content-Type": "application/json" }
      })
      expect(exchange.curl.length).toBeLessThan(2000)
      await runInBash(exchange.curl)
      expect(received).toHaveLength(1)
      const [request] = received
      expect(request?.method).toBe("POST")
      expect(request?.url).toBe("/api/integrations/breb/payouts")
      expect(request?.authorization).toBe(`Bearer ${KEY}`)
      expect(request?.contentType).toBe("application/json")
      expect(request?.body.equals(Buffer.from(typeof body === "string" ? Buffer.from(body) : body))).toBe(true)
    })
  }
})
