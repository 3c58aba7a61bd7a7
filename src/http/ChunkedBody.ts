/**
 * Request bodies the app does not read to the end: a chunked one (no Content-Length) is read here, up to the limit,
 * and whatever is left of any body is read and thrown away before the answer is written, so that the connection stays
 * usable for the client's next request.
 */
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import { Effect, Option, Stream } from "effect"
import { HttpServerRequest } from "effect/http"
import { IncomingMessage, type ServerResponse } from "node:http"
import { finished } from "node:stream"
import { MAX_BODY_BYTES } from "./BodyLimits.ts"

/** The Node request under `request`, when it is served by Node (not through the web handler). */
const nodeRequestOf = (request: HttpServerRequest.HttpServerRequest): Option.Option<IncomingMessage> => {
  const source: unknown = NodeHttpServerRequest.toIncomingMessage(request)
  return source instanceof IncomingMessage ? Option.some(source) : Option.none()
}

/**
 * Sends the `100 Continue` a client that asked for it waits for before sending its body, unless it was sent already
 * (the platform sends it when the app reads the body).
 */
const letBodyCome = (request: HttpServerRequest.HttpServerRequest, incoming: IncomingMessage) => {
  if (incoming.headers.expect?.toLowerCase() !== "100-continue") return
  // Node's own (untyped) record of a 100 Continue written on this response.
  const response = NodeHttpServerRequest.toServerResponse(request) as ServerResponse & { _sent100?: boolean }
  if (response._sent100 !== true && !response.headersSent) response.writeContinue()
}

/**
 * Reads and throws away what is left of the request body, until it has all arrived (bounded by the server's request
 * timeout), on Node; through the web handler there is nothing to do. Run before an answer is written: the platform's
 * Node server reads at most 256 KiB of a body left unread after the answer and then closes the connection (Effect 3's
 * let Node read it all and kept the connection open, and so does this).
 */
export const discardRestOfBody = (request: HttpServerRequest.HttpServerRequest): Effect.Effect<void> =>
  Option.match(nodeRequestOf(request), {
    onNone: () => Effect.void,
    onSome: (incoming) =>
      incoming.complete || incoming.destroyed || incoming.readableEnded
        ? Effect.void
        : Effect.callback<void>((resume) => {
          const stop = finished(incoming, { readable: true, writable: false }, () => {
            stop()
            resume(Effect.void)
          })
          letBodyCome(request, incoming)
          incoming.resume()
          return Effect.sync(stop)
        })
  })

/**
 * The request with its chunked body read and handed on as the request body, or none when the body is over the
 * limit (then reading stops there; the rest is discarded before the 413 is written).
 */
export const bufferChunkedBody = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.suspend(() => {
    const read = { chunks: new Array<Uint8Array>(), bytes: 0 }
    return Effect.map(
      Stream.runForEachWhile(request.stream, (chunk) =>
        Effect.sync(() => {
          read.bytes += chunk.length
          if (read.bytes <= MAX_BODY_BYTES) read.chunks.push(chunk)
          return read.bytes <= MAX_BODY_BYTES
        })),
      () => {
        if (read.bytes > MAX_BODY_BYTES) return Option.none()
        const body = Buffer.concat(read.chunks)
        const headers = new Headers()
        for (const [name, value] of Object.entries(request.headers)) {
          if (name !== "transfer-encoding") headers.set(name, value)
        }
        headers.set("content-length", String(body.length))
        const buffered = HttpServerRequest.fromWeb(
          new Request(new URL(request.url, "http://localhost"), { method: request.method, headers, body })
        )
        return Option.some(buffered.modify({ remoteAddress: request.remoteAddress }))
      }
    )
  })
