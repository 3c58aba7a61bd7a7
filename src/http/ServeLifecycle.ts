import type { IncomingMessage, Server, ServerResponse } from "node:http"
import { Server as NetServer } from "node:net"
import type { ErrorBody } from "@cop-integrations/contracts"

export interface DrainOutcome {
  /** Requests that were in flight when draining began and finished within the grace period. */
  readonly drained: number
  /** Requests still running when the grace period ran out (their connections are closed). */
  readonly abandoned: number
  /** Requests that arrived during the drain on a connection already open, answered 503 with `Connection: close`. */
  readonly turnedAway: number
}

export interface Draining {
  /** Resolves once the port is closed: from then on a new connection is refused. */
  readonly stoppedAccepting: Promise<void>
  readonly outcome: Promise<DrainOutcome>
}

export interface ServeLifecycle {
  readonly inFlight: () => number
  /**
   * Stops accepting connections, lets every request already received finish (including one whose body is still
   * arriving) and answers it with `Connection: close`; a request that arrives meanwhile on a connection already
   * open is answered 503 with `Connection: close`. Then closes what is left; all within `graceMs`.
   */
  readonly drain: (graceMs: number) => Draining
}

const STARTING: ErrorBody = { error: "the service is starting; retry in a moment" }
const SHUTTING_DOWN: ErrorBody = { error: "the service is shutting down; retry on a new connection" }

const answerUnavailable = (response: ServerResponse, body: ErrorBody) => {
  const json = JSON.stringify(body)
  response.writeHead(503, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(json),
    "retry-after": "1",
    connection: "close"
  })
  response.end(json)
}

/**
 * Answered once its body has been read: closing a connection with unread data resets it, and the client can lose
 * the answer. Bodies are small (64 KiB), and Node's request timeout still bounds a slow one.
 */
const turnAway = (request: IncomingMessage, response: ServerResponse) => {
  request.once("end", () => answerUnavailable(response, SHUTTING_DOWN))
  request.resume()
}

/** Resolves after the event loop has polled for I/O at least once more (requests already sent have been read). */
const afterNextPoll = () => new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)))

/**
 * Start-up and shutdown around the app's request handler, on the Node server it runs on. Install it
 * before the app is served: until the app attaches its own `request` listener a request is answered
 * 503 (the port listens while the database starts), never left hanging.
 */
export const manageLifecycle = (server: Server): ServeLifecycle => {
  const listenersWithoutApp = server.listenerCount("request") + 1
  const active = new Set<ServerResponse>()
  let draining = false
  let requestsSeen = 0
  let connectionsSeen = 0
  let turnedAway = 0
  let onIdle: (() => void) | undefined

  const onRequest = (request: IncomingMessage, response: ServerResponse) => {
    requestsSeen += 1
    active.add(response)
    response.once("close", () => {
      active.delete(response)
      if (active.size === 0) onIdle?.()
    })
    if (draining) {
      turnedAway += 1
      turnAway(request, response)
    } else if (server.listenerCount("request") <= listenersWithoutApp) answerUnavailable(response, STARTING)
  }
  /**
   * A request with `Expect: 100-continue` arrives here instead of as a `request` once anyone listens for it (the
   * platform's Node server does, and sends the 100 when the app reads the body). Starting or draining, nothing else
   * will: the 100 is sent, as Node does for a server with no such listener, and the request is taken as any other.
   */
  const onCheckContinue = (request: IncomingMessage, response: ServerResponse) => {
    if (draining || server.listenerCount("request") <= listenersWithoutApp) response.writeContinue()
    onRequest(request, response)
  }
  server.prependListener("request", onRequest)
  server.prependListener("checkContinue", onCheckContinue)
  server.on("connection", () => (connectionsSeen += 1))

  const idle = () =>
    new Promise<void>((resolve) => {
      if (active.size === 0) return resolve()
      onIdle = () => {
        onIdle = undefined
        resolve()
      }
    })

  /**
   * Connections the kernel has already completed wait in its accept queue, and closing the port resets them: the
   * port stays open until a poll of the event loop takes in no new connection (Node takes in one per poll, so a
   * busy process needs many), at most until `deadline`, and what they send is answered 503. Not `server.close()`:
   * since Node 19 that also destroys every connection with no request under way, including one whose request is
   * already sent but not yet read, so its client gets a reset instead of an answer.
   */
  const closePort = async (deadline: number) => {
    for (;;) {
      const seen = connectionsSeen
      await afterNextPoll()
      if (connectionsSeen === seen || performance.now() > deadline) break
    }
    NetServer.prototype.close.call(server)
  }

  /**
   * Until nothing is running and one more poll brought no new request (one already sent on an open connection), or
   * until `deadline`; then every connection left is closed.
   */
  const finish = async (deadline: number, inFlightAtStart: number): Promise<DrainOutcome> => {
    let expired = false
    const timer = setTimeout(() => {
      expired = true
      onIdle?.()
    }, Math.max(0, deadline - performance.now()))
    while (!expired) {
      await idle()
      const seen = requestsSeen
      await afterNextPoll()
      if (active.size === 0 && requestsSeen === seen) break
    }
    clearTimeout(timer)
    onIdle = undefined
    const abandoned = active.size
    server.closeAllConnections()
    return { drained: inFlightAtStart - Math.min(abandoned, inFlightAtStart), abandoned, turnedAway }
  }

  const drain = (graceMs: number): Draining => {
    const deadline = performance.now() + graceMs
    draining = true
    const inFlightAtStart = active.size
    // Node writes keep-alive unless told otherwise; a request in flight is the last on its connection.
    for (const response of active) if (!response.headersSent) response.setHeader("connection", "close")
    // From now on only this lifecycle answers new requests (503); the app finishes what it has.
    for (const [event, own] of [["request", onRequest], ["checkContinue", onCheckContinue]] as const) {
      for (const listener of server.listeners(event)) {
        // `listeners` answers Function[]; they were added as listeners of this event.
        if (listener !== own) server.removeListener(event, listener as (...args: Array<unknown>) => void)
      }
    }
    const stoppedAccepting = closePort(deadline)
    return { stoppedAccepting, outcome: stoppedAccepting.then(() => finish(deadline, inFlightAtStart)) }
  }

  return { inFlight: () => active.size, drain }
}
