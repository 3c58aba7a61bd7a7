/**
 * A chunked body (no Content-Length) is read here, not by the platform: its size limit destroys the socket as soon
 * as the limit is crossed, so the client never sees the 413.
 */
import { HttpServerError, HttpServerRequest } from "@effect/platform"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import * as NodeStream from "@effect/platform-node/NodeStream"
import { Effect, Option, Stream } from "effect"
import { IncomingMessage } from "node:http"
import { MAX_BODY_BYTES } from "./BodyLimits.ts"

/**
 * Bodies without Content-Length (chunked) are read up to this much before the 413; past it, Node discards
 * the rest while the 413 is written, and a web-handler request's stream is cancelled.
 */
const MAX_DRAINED_BYTES = 1024 * 1024

/** The Node request under `request`, when it is served by Node (not through the web handler). */
const nodeRequestOf = (request: HttpServerRequest.HttpServerRequest): Option.Option<IncomingMessage> => {
  const source: unknown = NodeHttpServerRequest.toIncomingMessage(request)
  return source instanceof IncomingMessage ? Option.some(source) : Option.none()
}

/**
 * The body as a stream. On Node, stopping early must not destroy the request (that resets the connection
 * before the 413 is written): the rest is discarded instead, as Node does for a body a handler never read.
 */
const chunkedBodyStream = (request: HttpServerRequest.HttpServerRequest) =>
  Option.match(nodeRequestOf(request), {
    onNone: () => request.stream,
    onSome: (incoming) =>
      NodeStream.fromReadable<HttpServerError.RequestError, Uint8Array>(
        () => incoming,
        (cause) => new HttpServerError.RequestError({ request, reason: "Decode", cause }),
        { closeOnDone: false }
      )
  })

/** Reads and throws away what is left of a body over the limit, on Node (bounded by the server's request timeout). */
export const discardRestOfBody = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.sync(() => Option.map(nodeRequestOf(request), (incoming) => incoming.resume()))

/**
 * The request with its chunked body read: up to 64 KiB is kept and handed on as the request body (none when the
 * body is over the limit); beyond that the rest is read and discarded (see MAX_DRAINED_BYTES) so the 413 can be
 * written.
 */
export const bufferChunkedBody = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.map(
    Stream.runFoldWhile(
      chunkedBodyStream(request),
      { chunks: new Array<Uint8Array>(), bytes: 0 },
      (acc) => acc.bytes <= MAX_DRAINED_BYTES,
      (acc, chunk) => {
        acc.bytes += chunk.length
        if (acc.bytes <= MAX_BODY_BYTES) acc.chunks.push(chunk)
        return acc
      }
    ),
    ({ bytes, chunks }) => {
      if (bytes > MAX_BODY_BYTES) return Option.none()
      const body = Buffer.concat(chunks)
      const headers = new Headers()
      for (const [name, value] of Object.entries(request.headers)) {
        if (name !== "transfer-encoding") headers.set(name, value)
      }
      headers.set("content-length", String(body.length))
      const buffered = HttpServerRequest.fromWeb(
        new Request(new URL(request.url, "http://localhost"), { method: request.method, headers, body })
      )
      return Option.some(
        Option.match(request.remoteAddress, {
          onNone: () => buffered,
          onSome: (remoteAddress) => buffered.modify({ remoteAddress })
        })
      )
    }
  )
