/**
 * The preflight: before any scenario the kit checks that the target is the Integrations API (GET /healthz, GET
 * /openapi.json) and that the key authenticates, and refuses in one line (exit 2) saying what it found. With
 * `--base-url …/api/integrations` it used to default to mock mode and report 109 failures in 441 lines; a mistyped key
 * got the server's "not a cop_test_pk_… key".
 */
import { execFile } from "node:child_process"
import { createServer, type RequestListener, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { generateApiKey } from "../../src/auth/ApiKey.ts"
import { startTestServer, type TestServer } from "../../test/support/server.ts"
import { shownKey } from "../src/preflight.ts"

const CLI = fileURLToPath(new URL("../src/cli.ts", import.meta.url))

const cli = (args: ReadonlyArray<string>, apiKey: string) =>
  new Promise<{ readonly code: number; readonly stdout: string; readonly stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      ["--import", "tsx", CLI, ...args],
      { env: { ...process.env, NO_COLOR: "1", CONFORMANCE_API_KEY: apiKey } },
      (error, stdout, stderr) => {
        resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr })
      }
    )
  })

/** The one line a refused run prints (it fails the test when there is more than one, or anything on stdout). */
const refusal = async (baseUrl: string, apiKey: string): Promise<string> => {
  const { code, stderr, stdout } = await cli(["--base-url", baseUrl], apiKey)
  expect({ code, stdout, lines: stderr.trimEnd().split("\n").length }).toEqual({ code: 2, stdout: "", lines: 1 })
  return stderr.trimEnd()
}

/** A loopback HTTP server that is not the Integrations API. */
const startOther = async (listener: RequestListener): Promise<{ url: string; server: Server }> => {
  const server = createServer(listener)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server }
}

let service: TestServer
let apiKey = ""
const others: Array<Server> = []

beforeAll(async () => {
  service = await startTestServer()
  apiKey = (await service.newIntegration()).apiKey
}, 60_000)
afterAll(async () => {
  for (const server of others) await new Promise<void>((resolve) => server.close(() => resolve()))
  await service?.close()
})

const other = async (listener: RequestListener) => {
  const started = await startOther(listener)
  others.push(started.server)
  return started.url
}

describe.concurrent("the preflight refuses a target that is not the Integrations API, in one line", () => {
  it("a base URL with the API's path prefix: GET /healthz answered 404", async () => {
    const baseUrl = `${service.baseUrl}/api/integrations`
    expect(await refusal(baseUrl, apiKey)).toBe(
      `integrations-conformance: ${baseUrl} is not the Integrations API: GET /healthz answered 404 application/json; is --base-url the service root (without /api/integrations)?`
    )
  }, 60_000)

  it("a web server answering 200 HTML to everything", async () => {
    const url = await other((_, response) => {
      response.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end("<!doctype html><h1>Welcome</h1>")
    })
    expect(await refusal(url, apiKey)).toBe(
      `integrations-conformance: ${url} is not the Integrations API: GET /healthz answered 200 text/html <!doctype html><h1>Welcome</h1>; is --base-url the address of an Integrations API deployment?`
    )
  }, 60_000)

  it("a JSON API whose /healthz is not this API's", async () => {
    const url = await other((_, response) => {
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ healthy: true }))
    })
    expect(await refusal(url, apiKey)).toBe(
      `integrations-conformance: ${url} is not the Integrations API: GET /healthz answered 200 application/json {"healthy":true}; is --base-url the address of an Integrations API deployment?`
    )
  }, 60_000)

  it("a service with a healthz of the same shape and another OpenAPI document", async () => {
    const url = await other((request, response) => {
      const body = request.url === "/healthz"
        ? { status: "ok", mode: "mock", version: "0.1.0" }
        : { openapi: "3.1.0", info: { title: "Petstore", version: "1.0.0" }, paths: {} }
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body))
    })
    expect(await refusal(url, apiKey)).toBe(
      `integrations-conformance: ${url} is not the Integrations API: GET /openapi.json describes "Petstore" 1.0.0; is --base-url the address of an Integrations API deployment?`
    )
  }, 60_000)
})

describe.concurrent("the preflight names a key that does not authenticate, never showing it", () => {
  const last4 = (key: string) => key.slice(-4)

  it("a mistyped key (its checksum no longer matches) is unknown to this deployment", async () => {
    const typo = `${apiKey.slice(0, 20)}${apiKey[20] === "A" ? "B" : "A"}${apiKey.slice(21)}`
    const line = await refusal(service.baseUrl, typo)
    expect(line).toBe(
      `integrations-conformance: the API key cop_test_pk_…${
        last4(typo)
      } (--api-key, CONFORMANCE_API_KEY) is unknown to this deployment (never issued here, mistyped or revoked): GET /api/integrations/breb/payouts?limit=1 answered 401; no scenario was run`
    )
    expect(line).not.toContain(typo)
  }, 60_000)

  it("a well-formed key never issued here is unknown too", async () => {
    const stranger = generateApiKey("test")
    expect(await refusal(service.baseUrl, stranger)).toContain(
      `the API key cop_test_pk_…${last4(stranger)} (--api-key, CONFORMANCE_API_KEY) is unknown to this deployment`
    )
  }, 60_000)

  it("a live key against a mock deployment says which keys it accepts", async () => {
    const live = generateApiKey("live")
    expect(await refusal(service.baseUrl, live)).toContain(
      `the API key cop_live_pk_…${
        last4(live)
      } (--api-key, CONFORMANCE_API_KEY) is a live key: this mock deployment accepts only test keys (cop_test_pk_…)`
    )
  }, 60_000)

  it("something that is not a key at all", async () => {
    expect(await refusal(service.baseUrl, "sk_test_123")).toBe(
      "integrations-conformance: the API key … (--api-key, CONFORMANCE_API_KEY) is not an Integrations API key (cop_test_pk_… or cop_live_pk_… and 49 letters and digits): GET /api/integrations/breb/payouts?limit=1 answered 401; no scenario was run"
    )
  }, 60_000)
})

describe("shownKey", () => {
  it("shows a key's prefix and last 4 characters, and nothing of a short one", () => {
    const key = generateApiKey("test")
    expect(shownKey(key)).toBe(`cop_test_pk_…${key.slice(-4)}`)
    expect(shownKey("cop_test_pk_abc")).toBe("cop_test_pk_…")
    expect(shownKey("k")).toBe("…")
  })
})
