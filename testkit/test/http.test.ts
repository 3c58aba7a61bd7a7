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

describe("a deployment whose answer has no end", () => {
  const CHUNK = Buffer.alloc(64 * 1024, 0x20)
  /** 200 and spaces: up to 64 MiB (a cap for the test's own sake) or until the kit hangs up. */
  const endless = createServer((_, response) => {
    response.writeHead(200, { "content-type": "application/json" })
    let written = 0
    const pump = () => {
      while (!response.destroyed && written < 64 * 1024 * 1024) {
        written += CHUNK.length
        if (!response.write(CHUNK)) return void response.once("drain", pump)
      }
      if (!response.destroyed) response.end()
    }
    pump()
  })
  /** 200, then a byte every 50 ms for ever: the headers came in time, the body never completes. */
  const trickling = createServer((_, response) => {
    response.writeHead(200, { "content-type": "application/json" })
    const timer = setInterval(() => response.write(" "), 50)
    response.on("close", () => clearInterval(timer))
  })
  const urls = { endless: "", trickling: "" }
  beforeAll(async () => {
    for (const [name, server] of [["endless", endless], ["trickling", trickling]] as const) {
      server.listen(0, "127.0.0.1")
      await once(server, "listening")
      urls[name] = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    }
  })
  afterAll(async () => {
    for (const server of [endless, trickling]) {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  })

  const sendTo = async (baseUrl: string, requestTimeoutMs: number) => {
    const recorded: Array<Exchange> = []
    const http = makeHttp(
      { baseUrl, apiKey: "k", secondApiKey: undefined, fetch, requestTimeoutMs },
      (exchange) => recorded.push(exchange)
    )
    const outcome = await Effect.runPromise(Effect.result(http.send({ method: "GET", path: "/x" })))
    return { outcome, recorded }
  }

  it("is read up to 8 MiB, then the scenario fails with one line naming the URL and the limit", async () => {
    const { outcome, recorded } = await sendTo(urls.endless, 60_000)
    expect(outcome._tag).toBe("Failure")
    expect(recorded).toHaveLength(1)
    expect(recorded[0]?.response).toBeUndefined()
    expect(recorded[0]?.error).toMatch(
      new RegExp(
        `^GET ${
          urls.endless.replace(/[.]/g, "\\.")
        }/x answered more than 8 MiB, the most the kit reads of an API answer: `
      )
    )
  })

  it("times out when its body does not complete within the request's time, not only its headers", async () => {
    const { recorded } = await sendTo(urls.trickling, 500)
    expect(recorded[0]?.error).toBe("request timed out")
  })
})
