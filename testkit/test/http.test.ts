/** The kit's HTTP layer: a deployment's rate limit is waited out, and what the scenario expects is left alone. */
import { spawn } from "node:child_process"
import { once } from "node:events"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Exchange, makeHttp } from "../src/http.ts"

let calls = 0
/** 429 with Retry-After: 0 on every odd call, 200 on every even one. */
const server = createServer((_, response) => {
  calls++
  if (calls % 2 === 1) {
    response.writeHead(429, { "content-type": "application/json", "retry-after": "0" }).end(
      JSON.stringify({ error: "slow down" })
    )
  } else response.writeHead(200, { "content-type": "application/json" }).end("{}")
})
let baseUrl = ""

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

const send = async (retryOn429: boolean) => {
  const recorded: Array<Exchange> = []
  const http = makeHttp(
    { baseUrl, apiKey: "k", secondApiKey: undefined, fetch, requestTimeoutMs: 5000 },
    (exchange) => recorded.push(exchange)
  )
  const answered = await Effect.runPromise(http.send({ method: "GET", path: "/x", retryOn429 }))
  return { status: answered.response.status, recorded: recorded.map((exchange) => exchange.response?.status) }
}

describe("a 429 with Retry-After", () => {
  it("is waited out and the request retried, both exchanges recorded", async () => {
    calls = 0
    expect(await send(true)).toEqual({ status: 200, recorded: [429, 200] })
  })

  it("is answered as is when the scenario expects it", async () => {
    calls = 0
    expect(await send(false)).toEqual({ status: 429, recorded: [429] })
  })
})

describe("a deployment that never answers", () => {
  const hanging = createServer(() => undefined)
  let hangingUrl = ""
  beforeAll(async () => {
    hanging.listen(0, "127.0.0.1")
    await once(hanging, "listening")
    hangingUrl = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}`
  })
  afterAll(() => {
    hanging.closeAllConnections()
    return new Promise<void>((resolve) => hanging.close(() => resolve()))
  })

  // On Node 20 a signal made by AbortSignal.any([…, AbortSignal.timeout(ms)]) can be garbage-collected while the
  // request waits, and then the request never times out: the kit runs in a node with --expose-gc, collecting.
  it("times the request out although garbage is collected while it waits", async () => {
    const script = fileURLToPath(new URL("./support/requestUnderGc.ts", import.meta.url))
    const child = spawn(process.execPath, ["--expose-gc", "--import", "tsx", script, hangingUrl, "300"])
    let out = ""
    child.stdout.on("data", (chunk: Buffer) => void (out += chunk.toString("utf8")))
    // generous: the timeout is 300 ms; this only bounds a request that never ends
    const deadline = setTimeout(() => child.kill("SIGKILL"), 20_000)
    const [code] = await once(child, "exit")
    clearTimeout(deadline)
    expect(code, "the request ended within 20 s").toBe(0)
    expect(JSON.parse(out)).toMatchObject({ error: "request timed out" })
  })
})
