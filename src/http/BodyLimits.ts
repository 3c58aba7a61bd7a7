import type { HttpServerError, HttpServerRequest } from "effect/http"
import { errorResponse } from "./ErrorResponse.ts"

export const MAX_BODY_BYTES = 64 * 1024

/** A body that declares (Content-Length) more than the limit: answered 413 before it is read. */
export const declaresTooLargeBody = (request: HttpServerRequest.HttpServerRequest) =>
  Number(request.headers["content-length"] ?? "0") > MAX_BODY_BYTES

/** The platform's read of a body failed on the limit (`HttpIncomingMessage.MaxBodySize`). */
export const isBodyTooLarge = (error: HttpServerError.HttpServerError) =>
  error.reason._tag === "RequestParseError" && error.reason.reason === "BodyTooLarge"

export const tooLarge = () => errorResponse(413, { error: `request body exceeds ${MAX_BODY_BYTES} bytes` })
