import { Headers, type HttpServerRequest } from "effect/http"
import { errorResponse } from "./ErrorResponse.ts"

const jsonMethods = new Set(["POST", "PUT", "PATCH"])

/** A method whose body, if any, is JSON. */
export const takesJsonBody = (request: HttpServerRequest.HttpServerRequest) => jsonMethods.has(request.method)

/**
 * A body declared empty (`Content-Length: 0`). It needs no content type, and `fetch` labels an empty string body
 * `text/plain;charset=UTF-8`, so its content type says nothing.
 */
const declaresEmptyBody = (request: HttpServerRequest.HttpServerRequest) =>
  request.headers["content-length"]?.trim() === "0"

/** A JSON method with a body whose Content-Type is not application/json (none at all, or an empty body, passes). */
export const isUnsupportedMediaType = (request: HttpServerRequest.HttpServerRequest): boolean => {
  if (!takesJsonBody(request) || declaresEmptyBody(request)) return false
  const contentType = request.headers["content-type"]
  return contentType !== undefined && !/^application\/json\s*(;|$)/i.test(contentType)
}

/** The request as if it had no Content-Type when its body is declared empty: answered as one sent without a type. */
export const withoutTypeOfEmptyBody = (
  request: HttpServerRequest.HttpServerRequest
): HttpServerRequest.HttpServerRequest =>
  declaresEmptyBody(request) && request.headers["content-type"] !== undefined
    ? request.modify({ headers: Headers.remove(request.headers, "content-type") })
    : request

export const unsupportedMediaType = () => errorResponse(415, { error: "content-type must be application/json" })
