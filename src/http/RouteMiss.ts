import type { HttpServerRequest } from "effect/http"
import { errorResponse, pathOf } from "./ErrorResponse.ts"
import { allowedMethods } from "./Routes.ts"

const isDecodablePath = (path: string) => {
  try {
    decodeURIComponent(path)
    return true
  } catch {
    return false
  }
}

/** The answer when no route matched: 400 for an undecodable path, 405 (with Allow) for a known path, else 404. */
export const routeMiss = (request: HttpServerRequest.HttpServerRequest) => {
  const path = pathOf(request)
  if (!isDecodablePath(path)) return errorResponse(400, { error: "request path is not valid percent-encoded UTF-8" })
  const allowed = allowedMethods(path)
  // A route that allows this very method but did not match (e.g. an undecodable parameter) is not a 405.
  return allowed.length > 0 && !allowed.includes(request.method)
    ? errorResponse(405, {
      error: `method ${request.method} is not allowed on ${path}; allowed: ${allowed.join(", ")}`
    }, {
      allow: allowed.join(", ")
    })
    : errorResponse(404, { error: `no such endpoint: ${request.method} ${path}` })
}
