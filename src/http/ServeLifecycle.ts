import type { IncomingMessage, Server, ServerResponse } from "node:http"
import type { ErrorBody } from "@cop-integrations/contracts"

export interface DrainOutcome {
  /** Requests that were in flight when draining began and finished within the grace period. */
  readonly drained: number
  /** Requests still running when the grace period ran out (their connections are closed). */
  readonly abandoned: number
}

export interface ServeLifecycle {
  readonly inFlight: () => number
  /**
   * Stops accepting connections, lets every request already received finish (including one whose body
   * is still arriving), answers it with `Connection: close`, then closes what is left.
   */
  readonly drain: (graceMs: number) => Promise<DrainOutcome>
}

const STARTING: ErrorBody = { error: "the service is starting; retry in a moment" }

const answerStarting = (response: ServerResponse) => {
  const body = JSON.stringify(STARTING)
  response.writeHead(503, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
    "retry-after": "1",
    connection: "close"
  })
  response.end(body)
}

/**
 * Start-up and shutdown around the app's request handler, on the Node server it runs on. Install it
 * before the app is served: until the app attaches its own `request` listener a request is answered
 * 503 (the port listens while the database starts), never left hanging.
 */
export const manageLifecycle = (server: Server): ServeLifecycle => {
  const listenersWithoutApp = server.listenerCount("request") + 1
  const active = new Set<ServerResponse>()
  let draining = false
  let onIdle: (() => void) | undefined

  server.prependListener("request", (_request: IncomingMessage, response: ServerResponse) => {
    active.add(response)
    response.once("close", () => {
      active.delete(response)
      if (active.size === 0) onIdle?.()
    })
    if (draining) response.setHeader("connection", "close")
    if (server.listenerCount("request") <= listenersWithoutApp) answerStarting(response)
  })

  const drain = (graceMs: number) =>
    new Promise<DrainOutcome>((resolve) => {
      draining = true
      const inFlightAtStart = active.size
      server.close()
      server.closeIdleConnections()
      const finish = () => {
        clearTimeout(timer)
        onIdle = undefined
        const abandoned = active.size
        server.closeAllConnections()
        resolve({ drained: inFlightAtStart - Math.min(abandoned, inFlightAtStart), abandoned })
      }
      const timer = setTimeout(finish, graceMs)
      onIdle = finish
      if (active.size === 0) finish()
    })

  return { inFlight: () => active.size, drain }
}
