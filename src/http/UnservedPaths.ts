/**
 * Paths a deployment does not serve at all: everything under one is the same 404 ErrorBody before any other check
 * (src/http/RequestMiddleware.ts), whatever the method, body, content type or key, so no other answer tells a prober that
 * a route is there. A live deployment's test helpers are one (src/http/TestHelpersHttp.ts).
 */
import type { HttpServerRequest } from "effect/http"
import { Context } from "effect"

/** A path this deployment does not serve, with everything below it, and the 404 message for it. */
export interface UnservedPath {
  readonly prefix: string
  readonly error: string
}

/** The paths this deployment does not serve; none by default. */
export const UnservedPaths = Context.Reference<ReadonlyArray<UnservedPath>>("UnservedPaths", {
  defaultValue: () => []
})

/**
 * The path as the router matches it (find-my-way: an absolute URL's scheme and host dropped, duplicate slashes
 * collapsed, cut at `?`, `;` or `#`, percent-decoded, any letter case), so that no spelling of an unserved path
 * reaches its route.
 */
const routedPath = (url: string): string => {
  const path = url.replace(/^https?:\/\/.*?\//i, "/").replace(/\/\/+/g, "/").split(/[?;#]/, 1)[0] ?? "/"
  try {
    return decodeURI(path).toLowerCase()
  } catch {
    return path.toLowerCase()
  }
}

/** The path as URL resolves it (dot segments too). */
const resolvedPath = (url: string): string => new URL(url, "http://localhost").pathname.toLowerCase()

/** The unserved path `request` is under, if any. */
export const unservedAt = (
  unserved: ReadonlyArray<UnservedPath>,
  request: HttpServerRequest.HttpServerRequest
): UnservedPath | undefined => {
  if (unserved.length === 0) return undefined
  const paths = [resolvedPath(request.url), routedPath(request.url)]
  return unserved.find(({ prefix }) => {
    const under = prefix.toLowerCase()
    return paths.some((path) => path === under || path.startsWith(`${under}/`))
  })
}
