import type { IncomingMessage, Server, ServerResponse } from "node:http"
import { Server as NetServer } from "node:net"
import type { Duplex } from "node:stream"
import type { ErrorBody } from "@cop-integrations/contracts"
import { countShed } from "./HttpMetrics.ts"

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

export interface AdmissionLimits {
  readonly inFlight: number
  /** Something the requests need is too far behind (the database's queue of waiting requests). */
  readonly overloaded: () => boolean
}

export interface ServeLifecycle {
  readonly inFlight: () => number
  /**
   * Admits a request (health checks aside) only while fewer than `inFlight` are running and `overloaded` says no:
   * otherwise it is answered 503 with Retry-After at once, before its body is read into anything, and its body is
   * discarded. Until called, nothing is shed.
   */
  readonly limitAdmission: (limits: AdmissionLimits) => void
  /** Requests answered 503 by the admission limits since the start. */
  readonly shed: () => number
  /**
   * Stops accepting connections, lets every request already received finish (including one whose body is still
   * arriving) and answers it with `Connection: close`; a request that arrives meanwhile on a connection already
   * open is answered 503 with `Connection: close`. Then closes what is left; all within `graceMs`.
   */
  readonly drain: (graceMs: number) => Draining
}

const STARTING: ErrorBody = { error: "the service is starting; retry in a moment" }
const SHUTTING_DOWN: ErrorBody = { error: "the service is shutting down; retry on a new connection" }
const OVERLOADED = Buffer.from(
  JSON.stringify({ error: "the service is overloaded; retry after the Retry-After delay" })
)

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
 * The answer to a request over the admission limits, from a prepared buffer, once its body (at most 64 KiB) has been
 * read and thrown away, never parsed: answered before, a connection the client asked to close was closed with its
 * body still unread, and the kernel reset it, often before the client had read the 503 (1,342 of 16,000 requests of
 * an open loop).
 */
const shedLoad = (request: IncomingMessage, response: ServerResponse) => {
  request.once("end", () => {
    response.writeHead(503, {
      "content-type": "application/json",
      "content-length": OVERLOADED.length,
      "retry-after": "1"
    })
    response.end(OVERLOADED)
  })
  request.resume()
}

/** The health checks: answered whatever the load, so an orchestrator never restarts a replica for being busy. */
const isHealthCheck = (request: IncomingMessage) =>
  request.method === "GET" && (request.url === "/healthz" || request.url === "/readyz")

/**
 * Answered once its body has been read: closing a connection with unread data resets it, and the client can lose
 * the answer. Bodies are small (64 KiB), and Node's request timeout still bounds a slow one.
 */
const turnAway = (request: IncomingMessage, response: ServerResponse) => {
  request.once("end", () => answerUnavailable(response, SHUTTING_DOWN))
  request.resume()
}

/** How often the end of a drain looks again whether the connections left are quiet. */
const QUIET_CHECK_MS = 50

/** The share of the grace period the port may stay open for connections still arriving. */
const PORT_OPEN_SHARE_OF_GRACE = 0.25

/** Resolves after the event loop has polled for I/O at least once more (requests already sent have been read). */
const afterNextPoll = () => new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)))

/**
 * Start-up and shutdown around the app's request handler, on the Node server it runs on. Install it
 * before the app is served: until the app attaches its own `request` listener a request is answered
 * 503 (the port listens while the database starts), never left hanging.
 */
export const manageLifecycle = (server: Server): ServeLifecycle => {
  const listenersWithoutApp = server.listenerCount("request")
  const active = new Set<ServerResponse>()
  let draining = false
  let requestsSeen = 0
  let connectionsSeen = 0
  let turnedAway = 0
  let limits: AdmissionLimits = { inFlight: Number.POSITIVE_INFINITY, overloaded: () => false }
  let shed = 0
  let onIdle: (() => void) | undefined

  const appListening = () => server.listenerCount("request") > listenersWithoutApp

  /**
   * Whether the app gets this request: not while starting (503), draining (503 once its body is read) or over the
   * admission limits (503 at once, health checks aside). `expectsContinue`: a request with `Expect: 100-continue`,
   * which Node hands to `checkContinue` listeners, who send the 100 when they read the body; answered here, it gets
   * the 100 as Node sends it for a server that does not listen (a shed one does not: it is answered before its body).
   */
  const admit = (request: IncomingMessage, response: ServerResponse, expectsContinue: boolean): boolean => {
    requestsSeen += 1
    noteActivity(request.socket)
    const starting = !appListening()
    const tooMany = active.size >= limits.inFlight
    const overLimit = tooMany || limits.overloaded()
    if (overLimit && !draining && !starting && !isHealthCheck(request)) {
      shed += 1
      countShed(tooMany ? "in_flight_limit" : "database_queue")
      if (expectsContinue) response.setHeader("connection", "close")
      shedLoad(request, response)
      return false
    }
    active.add(response)
    response.once("close", () => {
      noteActivity(request.socket)
      active.delete(response)
      if (active.size === 0) onIdle?.()
    })
    if (!draining && !starting) return true
    if (expectsContinue) response.writeContinue()
    if (draining) {
      turnedAway += 1
      countShed("shutting_down")
      turnAway(request, response)
    } else {
      countShed("starting")
      answerUnavailable(response, STARTING)
    }
    return false
  }

  // Every request passes `admit` before any listener sees it: a request it answers never reaches the app.
  const emit = server.emit.bind(server) as (event: string | symbol, ...args: Array<unknown>) => boolean
  server.emit = ((event: string | symbol, ...args: Array<unknown>) => {
    if (event === "request" || event === "checkContinue") {
      const [request, response] = args as [IncomingMessage, ServerResponse]
      if (!admit(request, response, event === "checkContinue")) return true
    }
    return emit(event, ...args)
  }) as typeof server.emit
  // When each open connection last began or ended a request (or was accepted).
  const lastActivity = new Map<Duplex, number>()
  const noteActivity = (socket: Duplex) => {
    if (lastActivity.has(socket)) lastActivity.set(socket, performance.now())
  }
  server.on("connection", (socket: Duplex) => {
    connectionsSeen += 1
    lastActivity.set(socket, performance.now())
    socket.once("close", () => lastActivity.delete(socket))
  })
  /**
   * Every open connection has been quiet (no request begun or answered, not just accepted) for the server's keep-alive
   * timeout: as long as Node itself leaves an idle connection open, so the drain closes none sooner than it would, and
   * a client that keeps its connection busy (however slowly its machine lets it) is never cut off between requests.
   */
  const connectionsQuiet = () => {
    const now = performance.now()
    for (const since of lastActivity.values()) if (now - since < server.keepAliveTimeout) return false
    return true
  }

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
   * busy process needs many), at most until `closeBy`, and what they send is answered 503. Clients that reconnect at
   * once after each 503 keep bringing new connections: `closeBy` leaves the rest of the grace period to the requests
   * in flight and the connections left open, and what is still in the accept queue then is reset by the kernel (take
   * the replica out of the load balancer first). Not `server.close()`:
   * since Node 19 that also destroys every connection with no request under way, including one whose request is
   * already sent but not yet read, so its client gets a reset instead of an answer.
   */
  const closePort = async (closeBy: number) => {
    for (;;) {
      const seen = connectionsSeen
      await afterNextPoll()
      if (connectionsSeen === seen || performance.now() > closeBy) break
    }
    NetServer.prototype.close.call(server)
  }

  /**
   * Until nothing is running, one more poll brought no new request (one already sent on an open connection) and every
   * connection left is quiet (`connectionsQuiet`), or until `deadline`; then every connection left is closed. Closing a connection a client has just used (or just opened) races its next request, which would be reset;
   * one answered during the drain was told `Connection: close` and is closed by Node once answered.
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
      if (active.size > 0 || requestsSeen !== seen) continue
      if (connectionsQuiet()) break
      await new Promise((resolve) => setTimeout(resolve, QUIET_CHECK_MS))
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
    // From now on `admit` answers new requests (503); the app finishes what it has.
    const stoppedAccepting = closePort(performance.now() + graceMs * PORT_OPEN_SHARE_OF_GRACE)
    return { stoppedAccepting, outcome: stoppedAccepting.then(() => finish(deadline, inFlightAtStart)) }
  }

  return {
    inFlight: () => active.size,
    limitAdmission: (next) => (limits = next),
    shed: () => shed,
    drain
  }
}
