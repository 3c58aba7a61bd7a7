import type { HttpServerRequest } from "effect/http"
import { errorResponse } from "./ErrorResponse.ts"

const jsonMethods = new Set(["POST", "PUT", "PATCH"])

/** A method whose body, if any, is JSON. */
export const takesJsonBody = (request: HttpServerRequest.HttpServerRequest) => jsonMethods.has(request.method)

/** A JSON method with a Content-Type that is not application/json (none at all is let through). */
export const isUnsupportedMediaType = (request: HttpServerRequest.HttpServerRequest): boolean => {
  if (!takesJsonBody(request)) return false
  const contentType = request.headers["content-type"]
  return contentType !== undefined && !/^application\/json\s*(;|$)/i.test(contentType)
}

export const unsupportedMediaType = () => errorResponse(415, { error: "content-type must be application/json" })
