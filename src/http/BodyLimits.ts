import type { HttpServerError, HttpServerRequest } from "@effect/platform"
import { errorResponse } from "./ErrorResponse.ts"

export const MAX_BODY_BYTES = 64 * 1024

/** A body that declares (Content-Length) more than the limit: answered 413 before it is read. */
export const declaresTooLargeBody = (request: HttpServerRequest.HttpServerRequest) =>
  Number(request.headers["content-length"] ?? "0") > MAX_BODY_BYTES

/** The platform's read of a body failed on the limit (`withMaxBodySize`). */
export const isBodyTooLarge = (error: HttpServerError.RequestError) =>
  error.cause instanceof Error && error.cause.message.includes("maxBytes")

export const tooLarge = () => errorResponse(413, { error: `request body exceeds ${MAX_BODY_BYTES} bytes` })
