/**
 * A deployment that breaks one rule: an HTTP proxy in front of a real test server that rewrites one
 * behaviour on the way in or out. Everything it does not touch is the real service.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

export interface ProxiedRequest {
  readonly method: string
  /** Path and query, as the client sent them. */
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: Buffer
}

export interface UpstreamResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: Buffer
}

export interface Interceptor {
  /** Rewrites a request before it goes to the real service. */
  readonly request?: (request: ProxiedRequest, proxy: ProxyControl) => ProxiedRequest | Promise<ProxiedRequest>
  /** Rewrites the real service's answer. */
  readonly response?: (
    request: ProxiedRequest,
    response: UpstreamResponse,
    proxy: ProxyControl
  ) => UpstreamResponse | Promise<UpstreamResponse>
}

export interface ProxyControl {
  /** Sends a request to the real service. */
  readonly forward: (request: ProxiedRequest) => Promise<UpstreamResponse>
  /** Every Authorization header the proxy has seen, first seen first. */
  readonly authorizations: ReadonlyArray<string>
}

export interface Proxy {
  readonly baseUrl: string
  readonly close: () => Promise<void>
}

const HOP_BY_HOP = new Set(["connection", "keep-alive", "transfer-encoding", "content-length", "host"])

const readBody = async (request: IncomingMessage): Promise<Buffer> => {
  const chunks: Array<Buffer> = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

const headersOf = (entries: Iterable<[string, string | ReadonlyArray<string> | undefined]>) => {
  const out: Record<string, string> = {}
  for (const [name, value] of entries) {
    if (value !== undefined && !HOP_BY_HOP.has(name.toLowerCase())) {
      out[name.toLowerCase()] = Array.isArray(value)
        ? value.join(", ")
        : String(value)
    }
  }
  return out
}

export const startProxy = async (target: string, interceptor: Interceptor = {}): Promise<Proxy> => {
  const authorizations: Array<string> = []
  const forward = async (request: ProxiedRequest): Promise<UpstreamResponse> => {
    const response = await fetch(`${target}${request.url}`, {
      method: request.method,
      headers: request.headers,
      ...(request.body.length === 0 || request.method === "GET" ? {} : { body: new Uint8Array(request.body) }),
      redirect: "manual"
    })
    return {
      status: response.status,
      headers: headersOf(response.headers.entries()),
      body: Buffer.from(await response.arrayBuffer())
    }
  }
  const control: ProxyControl = { forward, authorizations }

  const handle = async (incoming: IncomingMessage, outgoing: ServerResponse) => {
    const original: ProxiedRequest = {
      method: incoming.method ?? "GET",
      url: incoming.url ?? "/",
      headers: headersOf(Object.entries(incoming.headers)),
      body: await readBody(incoming)
    }
    const authorization = original.headers["authorization"]
    if (authorization !== undefined && !authorizations.includes(authorization)) authorizations.push(authorization)
    const request = interceptor.request === undefined ? original : await interceptor.request(original, control)
    const upstream = await forward(request)
    const response = interceptor.response === undefined
      ? upstream
      : await interceptor.response(request, upstream, control)
    outgoing.writeHead(response.status, { ...response.headers, "content-length": String(response.body.length) })
    outgoing.end(response.body)
  }

  const server = createServer((incoming, outgoing) => {
    handle(incoming, outgoing).catch((error: unknown) => {
      outgoing.writeHead(502, { "content-type": "application/json" })
      outgoing.end(JSON.stringify({ error: `test proxy failed: ${String(error)}` }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections()
        server.close((error) => (error ? reject(error) : resolve()))
      })
  }
}

/** The JSON of a body, for rewriting. */
export const jsonOf = (body: Buffer): unknown => JSON.parse(body.toString("utf8"))

export const withJson = (response: UpstreamResponse, value: unknown, status = response.status): UpstreamResponse => ({
  status,
  headers: { ...response.headers, "content-type": "application/json" },
  body: Buffer.from(JSON.stringify(value))
})

export const requestJson = (request: ProxiedRequest, value: unknown): ProxiedRequest => ({
  ...request,
  body: Buffer.from(JSON.stringify(value))
})

/** `/api/.../payouts?limit=1` → its path and query parts. */
export const urlParts = (url: string): { readonly path: string; readonly query: URLSearchParams } => {
  const parsed = new URL(url, "http://proxy")
  return { path: parsed.pathname, query: parsed.searchParams }
}
