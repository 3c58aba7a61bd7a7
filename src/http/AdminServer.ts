/**
 * The admin listener: `GET /metrics` in Prometheus's text format, on a port of its own (ADMIN_PORT, ADMIN_HOST), never
 * the public one. A plain Node server outside the public port's admission limits (src/http/ServeLifecycle.ts), so a
 * scrape is answered whatever the load; anything else is 404.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { type Config, Context, Effect, type Scope } from "effect"
import { PrometheusMetrics } from "effect/observability"
import { startProcessMetrics } from "../base/ProcessMetrics.ts"
import { configError } from "../base/StartupFailure.ts"

export const METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

/** Effect's default metric registry, where every metric of the service is (src/http/HttpMetrics.ts, src/db, ...). */
const registry = Context.empty()

export interface AdminListener {
  /** Where Prometheus scrapes, e.g. `http://127.0.0.1:9464/metrics`. */
  readonly metricsUrl: string
}

const isMetricsRequest = (request: IncomingMessage) =>
  request.method === "GET" && (request.url === "/metrics" || request.url?.startsWith("/metrics?") === true)

const answer = (response: ServerResponse, status: number, contentType: string, body: string) => {
  response.writeHead(status, { "content-type": contentType, "content-length": Buffer.byteLength(body) })
  response.end(body)
}

/** `[::1]` for an IPv6 host in a URL. */
const urlHost = (host: string) => (host.includes(":") ? `[${host}]` : host)

/** Listens on `host:port` (0: any free port) until the scope closes; a listen failure names ADMIN_PORT. */
export const serveAdmin = (options: {
  readonly host: string
  readonly port: number
}): Effect.Effect<AdminListener, Config.ConfigError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.callback<{ readonly listener: AdminListener; readonly close: () => Promise<void> }, Config.ConfigError>(
      (resume) => {
        const processMetrics = startProcessMetrics()
        const server = createServer((request, response) => {
          request.resume()
          if (!isMetricsRequest(request)) return answer(response, 404, "text/plain; charset=utf-8", "not found\n")
          processMetrics.sample()
          answer(response, 200, METRICS_CONTENT_TYPE, PrometheusMetrics.formatUnsafe(registry))
        })
        const close = () =>
          new Promise<void>((resolve) => {
            processMetrics.stop()
            server.close(() => resolve())
            server.closeAllConnections()
          })
        server.once("error", (error: Error & { readonly code?: string }) => {
          processMetrics.stop()
          resume(Effect.fail(
            configError(
              ["ADMIN_PORT"],
              `cannot listen on ${urlHost(options.host)}:${options.port} (${error.code ?? error.message})`
            )
          ))
        })
        server.listen(options.port, options.host, () => {
          const { port } = server.address() as AddressInfo
          resume(Effect.succeed({
            listener: { metricsUrl: `http://${urlHost(options.host)}:${port}/metrics` },
            close
          }))
        })
      }
    ),
    ({ close }) => Effect.promise(close)
  ).pipe(Effect.map(({ listener }) => listener))
