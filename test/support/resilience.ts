/**
 * The app behind a TCP proxy to its database (./tcpProxy.ts), and HTTP calls that must answer within a
 * bound: a call that hangs fails the test instead of hanging it.
 */
import { Layer } from "effect"
import { test } from "vitest"
import { DatabaseTimeouts, type DatabaseTimeoutsShape } from "../../src/db/Database.ts"
import { startTcpProxy, targetOf, type TcpProxy } from "./tcpProxy.ts"
import { startTestServer, type TestServer, type TestServerOptions } from "./server.ts"

export interface ProxiedServer {
  readonly server: TestServer
  readonly proxy: TcpProxy
  readonly close: () => Promise<void>
}

/** The app behind a proxy, with `overrides` (default: short database timeouts) and `options` of startTestServer. */
export const startProxiedServer = async (
  overrides: Layer.Layer<never> = shortTimeouts,
  options: Pick<TestServerOptions, "captureLogs" | "env"> = {}
): Promise<ProxiedServer> => {
  const proxies: Array<TcpProxy> = []
  const server = await startTestServer({
    appDatabaseUrl: async (url) => {
      const proxy = await startTcpProxy(targetOf(url))
      proxies.push(proxy)
      return proxy.urlFor(url)
    },
    overrides,
    ...options
  }).catch(async (error: unknown) => {
    await Promise.all(proxies.map((proxy) => proxy.close()))
    throw error
  })
  const proxy = proxies[0]
  if (proxy === undefined) throw new Error("the proxy was not started")
  return {
    server,
    proxy,
    close: async () => {
      proxy.setMode("pass")
      await server.close()
      await proxy.close()
    }
  }
}

/**
 * vitest's `test` with a file-scoped `proxied` fixture: the app behind its proxy (`startProxiedServer(overrides,
 * options)`), started the first time a test of the file asks for it and closed after the file.
 */
export const proxiedTest = (
  overrides: Layer.Layer<never> = shortTimeouts,
  options: Pick<TestServerOptions, "captureLogs" | "env"> = {}
) =>
  // vitest reads a fixture's first parameter for the fixtures it uses: an empty pattern says none.
  // eslint-disable-next-line no-empty-pattern
  test.extend("proxied", { scope: "file" }, async ({}, { onCleanup }) => {
    const proxied = await startProxiedServer(overrides, options)
    onCleanup(() => proxied.close())
    return proxied
  })

export interface TimedAnswer {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  readonly json: unknown
  readonly elapsedMs: number
}

export interface TimedCall {
  readonly apiKey?: string
  readonly body?: unknown
  readonly headers?: Record<string, string>
  /** The call fails if no answer arrives within this many milliseconds. */
  readonly boundMs: number
}

export const timedCall = async (baseUrl: string, path: string, call: TimedCall): Promise<TimedAnswer> => {
  const started = performance.now()
  const headers: Record<string, string> = { ...call.headers }
  if (call.apiKey !== undefined) headers["authorization"] = `Bearer ${call.apiKey}`
  if (call.body !== undefined) headers["content-type"] = "application/json"
  let response: Response
  try {
    response = await fetch(`${baseUrl}${path}`, {
      method: call.body === undefined ? "GET" : "POST",
      headers,
      signal: AbortSignal.timeout(call.boundMs),
      ...(call.body === undefined ? {} : { body: JSON.stringify(call.body) })
    })
  } catch (error) {
    throw new Error(`${path}: no answer within ${call.boundMs} ms (${String(error)})`, { cause: error })
  }
  const text = await response.text()
  let json: unknown = undefined
  try {
    json = JSON.parse(text)
  } catch {
    // not JSON: assertions on `json` fail
  }
  return { status: response.status, headers: response.headers, text, json, elapsedMs: performance.now() - started }
}

/** Short database timeouts, so the tests of a failing database run in seconds. */
export const SHORT_TIMEOUTS: DatabaseTimeoutsShape = {
  connect: "2 seconds",
  statement: "2 seconds",
  lock: "1 second",
  idleInTransaction: "5 seconds",
  query: "3 seconds",
  keepAliveDelay: "1 second"
}

export const shortTimeouts = Layer.succeed(DatabaseTimeouts, SHORT_TIMEOUTS)
