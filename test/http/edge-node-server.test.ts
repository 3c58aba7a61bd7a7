/**
 * The Node HTTP server itself (src/http/NodeServer.ts): requests Node rejects before the app sees them
 * (malformed HTTP, oversized headers) and chunked bodies far over the 64 KiB limit are answered with an
 * ErrorBody, not Node's empty 400/431 or a reset connection. The app is served on `createHttpServer()`
 * here, over raw sockets, so the wire bytes are what is checked.
 */
import { connect } from "node:net"
import { NodeHttpServer } from "@effect/platform-node"
import { ErrorBody } from "@cop-integrations/contracts"
import { ConfigProvider, Context, Effect, Exit, Layer, Option, Redacted, References, Schema, Scope } from "effect"
import { HttpServer } from "effect/http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { serverLayer } from "../../src/App.ts"
import { ApiKeyRepo } from "../../src/auth/ApiKeyRepo.ts"
import { AppConfigShape } from "../../src/config/Config.ts"
import { createHttpServer } from "../../src/http/NodeServer.ts"
import { IntegrationRepo } from "../../src/auth/IntegrationRepo.ts"
import { acquireTestDatabase, type TestDatabase } from "../support/database.ts"

const SEND_OTP = "/api/integrations/breb/kyc/otp/send"

let database: TestDatabase
let scope: Scope.Closeable
let port: number
let apiKey: string

/** The app's own server layer on `createHttpServer()`, as main.ts serves it, on a random loopback port. */
beforeAll(async () => {
  database = await acquireTestDatabase()
  const loaded = await Effect.runPromise(
    Effect.provideService(AppConfigShape, ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: {} }))
  )
  const config = { ...loaded, databaseUrl: Option.some(Redacted.make(database.url)), port: 0 }
  const layer = serverLayer(config).pipe(
    Layer.provideMerge(NodeHttpServer.layer(createHttpServer, { port: 0, host: "127.0.0.1" })),
    Layer.provide(Layer.succeed(References.MinimumLogLevel, "Warn"))
  )
  scope = Effect.runSync(Scope.make())
  const context = await Effect.runPromise(Scope.provide(Layer.build(layer), scope))
  const address = Context.get(context, HttpServer.HttpServer).address
  if (address._tag === "UnixPathAddress") throw new Error("expected a TCP address")
  port = address.port
  apiKey = await Effect.runPromise(
    Effect.gen(function*() {
      const integration = yield* Effect.flatMap(
        IntegrationRepo,
        (repo) => repo.ensure(`edge-node-server-${process.pid}`)
      )
      return (yield* Effect.flatMap(ApiKeyRepo, (keys) => keys.issue(integration.id, "test"))).key
    }).pipe(Effect.provide(context))
  )
})
afterAll(async () => {
  if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
  await database?.release()
})

interface RawResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

/** Splits what the server wrote into its responses (bodies by Content-Length). */
const parseResponses = (raw: Buffer): Array<RawResponse> => {
  const responses: Array<RawResponse> = []
  let rest = raw
  while (rest.length > 0) {
    const end = rest.indexOf("\r\n\r\n")
    if (end < 0) throw new Error(`incomplete response head: ${JSON.stringify(rest.toString("latin1").slice(0, 200))}`)
    const [statusLine = "", ...lines] = rest.subarray(0, end).toString("latin1").split("\r\n")
    const headers = Object.fromEntries(lines.map((line) => {
      const colon = line.indexOf(":")
      return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()]
    }))
    const length = Number(headers["content-length"] ?? "0")
    responses.push({
      status: Number(/^HTTP\/1\.1 (\d{3}) /.exec(statusLine)?.[1] ?? "0"),
      headers,
      body: rest.subarray(end + 4, end + 4 + length).toString("utf8")
    })
    rest = rest.subarray(end + 4 + length)
  }
  return responses
}

/** Writes `parts` on one fresh connection and collects everything the server sends until it closes. */
const exchange = (parts: ReadonlyArray<string | Buffer>): Promise<Array<RawResponse>> =>
  new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1")
    const received: Array<Buffer> = []
    socket.on("data", (chunk) => received.push(chunk))
    socket.on("error", reject)
    socket.on("close", () => {
      try {
        resolve(parseResponses(Buffer.concat(received)))
      } catch (error) {
        reject(error)
      }
    })
    socket.on("connect", () => {
      for (const part of parts) socket.write(part)
    })
  })

/** Writes `parts` on a fresh connection and resolves with the first whole response, without waiting for more. */
const firstResponse = (parts: ReadonlyArray<string | Buffer>): Promise<RawResponse> =>
  new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1")
    let received = Buffer.alloc(0)
    socket.on("data", (chunk) => {
      received = Buffer.concat([received, chunk])
      const end = received.indexOf("\r\n\r\n")
      const length = Number(
        /\r\ncontent-length: *(\d+)/i.exec(received.subarray(0, end).toString("latin1"))?.[1] ?? "0"
      )
      if (end < 0 || received.length < end + 4 + length) return
      socket.destroy()
      resolve(parseResponses(received.subarray(0, end + 4 + length))[0]!)
    })
    socket.on("error", reject)
    socket.on("close", () => reject(new Error(`closed before a whole response: ${received.toString("latin1")}`)))
    socket.on("connect", () => {
      for (const part of parts) socket.write(part)
    })
  })

const expectErrorBody = (response: RawResponse, status: number) => {
  expect({ status: response.status, body: response.body }).toMatchObject({ status })
  expect(response.headers["content-type"]).toMatch(/^application\/json/)
  const body = JSON.parse(response.body) as unknown
  expect(Schema.is(ErrorBody)(body), response.body).toBe(true)
  expect(Object.keys(body as object)).toEqual(["error"])
  return (body as ErrorBody).error
}

const chunk = (data: string | Buffer) => {
  const bytes = typeof data === "string" ? Buffer.from(data) : data
  return Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes, Buffer.from("\r\n")])
}

describe("requests Node rejects before the app", () => {
  it("answers a malformed request line with 400 ErrorBody and closes the connection", async () => {
    for (
      const request of [
        "GARBAGE\r\n\r\n",
        "GET / HTTP/9.9.9\r\n\r\n",
        "GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n"
      ]
    ) {
      const [response, ...others] = await exchange([request])
      expect(others).toEqual([])
      expectErrorBody(response!, 400)
      expect(response!.headers["connection"]).toBe("close")
    }
  })

  it("answers a malformed chunked body with 400 ErrorBody", async () => {
    const head =
      `POST ${SEND_OTP} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${apiKey}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`
    const [response] = await exchange([head, "ZZ\r\n{}\r\n0\r\n\r\n"])
    expectErrorBody(response!, 400)
  })

  it("answers headers over Node's limit with 431 ErrorBody", async () => {
    const [response] = await exchange([
      `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Padding: ${"a".repeat(32 * 1024)}\r\n\r\n`
    ])
    expect(expectErrorBody(response!, 431)).toMatch(/header/i)
    expect(response!.headers["connection"]).toBe("close")
  })

  it("still serves well-formed requests normally", async () => {
    const [response] = await exchange(["GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"])
    expect(response!.status).toBe(200)
    expect(JSON.parse(response!.body)).toMatchObject({ status: "ok" })
  })
})

describe("a Content-Length over the 64 KiB limit", () => {
  // Answered before the body comes: waiting for a body it will refuse held the connection until Node's request
  // timeout (30 s) and then answered 408, on a route that needs no key.
  it("is answered 413 ErrorBody at once, before any of the body has arrived", async () => {
    for (const path of [SEND_OTP, "/api/integrations/webhooks/provider"]) {
      const response = await firstResponse([
        `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${1024 * 1024}\r\n\r\n`
      ])
      expect(expectErrorBody(response, 413)).toContain("65536")
    }
  })
})

describe("chunked bodies over the 64 KiB limit", () => {
  const oversizedUpload = (bytes: number) => {
    const head =
      `POST ${SEND_OTP} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${apiKey}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`
    const piece = chunk(Buffer.alloc(64 * 1024, " "))
    const pieces = Array.from({ length: Math.ceil(bytes / (64 * 1024)) }, () => piece)
    return [head, chunk("{"), ...pieces, "0\r\n\r\n"]
  }

  it("answers 413 ErrorBody to a 2 MiB and an 8 MiB chunked upload instead of resetting the connection", async () => {
    for (const size of [2, 8]) {
      const [response] = await exchange([
        ...oversizedUpload(size * 1024 * 1024),
        "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
      ])
      expect(expectErrorBody(response!, 413)).toContain("65536")
    }
  })

  it("keeps the connection usable after the 413: the next request on it is answered", async () => {
    const responses = await exchange([
      ...oversizedUpload(2 * 1024 * 1024),
      `POST ${SEND_OTP} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${apiKey}\r\nContent-Type: application/json\r\nConnection: close\r\n` +
      `Content-Length: ${JSON.stringify({ email: "ana@example.com", userAddress: "0x" }).length}\r\n\r\n`,
      JSON.stringify({ email: "ana@example.com", userAddress: "0x" })
    ])
    expect(responses.map((response) => response.status)).toEqual([413, 400])
    expect(expectErrorBody(responses[1]!, 400)).toContain("userAddress")
  })
})
