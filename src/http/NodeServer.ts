import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { Socket } from "node:net"
import type { Duplex } from "node:stream"
import type { ErrorBody } from "@cop-integrations/contracts"

/** What Node's HTTP parser rejected, as a status and an ErrorBody message. */
const describeClientError = (code: string | undefined): { readonly status: number; readonly error: string } => {
  switch (code) {
    case "HPE_HEADER_OVERFLOW":
      return { status: 431, error: "request headers are too large" }
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return { status: 408, error: "the request was not received in time" }
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return { status: 413, error: "chunk extensions are too large" }
    default:
      return { status: 400, error: "malformed HTTP request" }
  }
}

const reasonPhrases: Record<number, string> = {
  400: "Bad Request",
  408: "Request Timeout",
  413: "Content Too Large",
  431: "Request Header Fields Too Large"
}

const rawErrorResponse = (status: number, body: ErrorBody): string => {
  const json = JSON.stringify(body)
  return [
    `HTTP/1.1 ${status} ${reasonPhrases[status]}`,
    "Content-Type: application/json",
    `Content-Length: ${Buffer.byteLength(json)}`,
    "Connection: close",
    "",
    json
  ].join("\r\n")
}

/** Sockets whose current request was answered before its body had fully arrived (e.g. a 413). */
const answeredEarly = new WeakSet<Duplex>()

/** Sockets already answered and closing: the parser reports each further chunk as another error. */
const closing = new WeakSet<Duplex>()

/** How long a closing connection keeps reading (and discarding) what the client still sends. */
const LINGER_MS = 2_000

/**
 * Half-closes after the answer and discards the rest of the request until the client closes too (or for at
 * most LINGER_MS): closing with unread data makes the kernel reset the connection, and a client can lose the
 * answer it had not read yet.
 */
const closeLingering = (socket: Duplex, answer: string | undefined) => {
  closing.add(socket)
  socket.end(answer)
  socket.once("end", () => socket.destroy())
  setTimeout(() => socket.destroy(), LINGER_MS).unref()
  socket.resume()
}

/**
 * Node answers what its parser rejects (malformed HTTP, headers over its limit, timeouts) with an empty
 * 400/431/408. This writes an ErrorBody instead, like every other non-2xx, unless a response is already
 * under way on the socket (then nothing more can be said on it), and closes the connection.
 */
const answerClientError = (error: Error & { readonly code?: string }, socket: Duplex) => {
  if (closing.has(socket)) return
  // Node's own (untyped) link from a socket to the response being written on it.
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage
  const canAnswer = socket.writable && inFlight?.headersSent !== true && !answeredEarly.has(socket)
  const { error: message, status } = describeClientError(error.code)
  closeLingering(socket, canAnswer ? rawErrorResponse(status, { error: message }) : undefined)
}

/**
 * Closes a keep-alive connection whose idle timer fired, unless a request has arrived on it meanwhile. After a busy
 * stretch Node runs the timers that fell due before it reads the sockets, so its own close (`socketOnTimeout`)
 * destroyed connections whose next request had already arrived, unread: the client got a reset instead of an answer.
 * This close waits for the loop's next read of the sockets (`setImmediate` runs after it) and keeps the connection
 * when anything was read; Node then serves the request and arms the idle timer again after answering it.
 */
const closeIdleUnlessRead = (socket: Socket) => {
  const readBefore = socket.bytesRead
  setImmediate(() => {
    if (socket.bytesRead === readBefore) socket.destroy()
  })
}

/**
 * The Node HTTP server the service runs on (pass it to `NodeHttpServer.layer`). Bodies are at most 64 KiB
 * of JSON, so a request that takes longer than 30 s to arrive (10 s for its headers) is a stalled or
 * hostile client; timeouts are checked every second instead of Node's default 30. An idle connection is closed after
 * `keepAliveTimeout` unless its next request has already arrived (closeIdleUnlessRead).
 */
export const createHttpServer = (): Server => {
  const server = createServer({
    requestTimeout: 30_000,
    headersTimeout: 10_000,
    keepAliveTimeout: 5_000,
    connectionsCheckingInterval: 1_000
  })
  server.on("clientError", answerClientError)
  // A listener here replaces Node's close of an idle connection; the server sets no other socket timeout.
  server.on("timeout", closeIdleUnlessRead)
  const noteEarlyAnswer = (request: IncomingMessage, response: ServerResponse) => {
    response.once("finish", () => {
      if (!request.complete) answeredEarly.add(request.socket)
    })
    request.once("end", () => answeredEarly.delete(request.socket))
  }
  server.on("request", noteEarlyAnswer)
  // A request with `Expect: 100-continue` is not a `request` event once the platform listens for this one.
  server.on("checkContinue", noteEarlyAnswer)
  return server
}
