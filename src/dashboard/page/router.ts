/**
 * Hash routes (`#/payouts/po_…`): the server serves one page, and the address names the view, so it can be bookmarked
 * and the back button works. Hashes that are not routes (`#main`, the skip link's) leave the view as it is.
 */
import { useEffect, useState } from "preact/hooks"

export const currentRoute = () => (location.hash.startsWith("#/") ? location.hash.slice(1) : undefined)

export const useRoute = (fallback: string): string => {
  const [route, setRoute] = useState(() => currentRoute() ?? fallback)
  useEffect(() => {
    const follow = () => {
      const next = currentRoute()
      if (next !== undefined) setRoute(next)
    }
    addEventListener("hashchange", follow)
    return () => removeEventListener("hashchange", follow)
  }, [])
  return route
}

/** The parameters of `pattern` (`/payouts/:payoutId`) in `route` (its path, without `?…`), if it matches. */
export const match = (pattern: string, route: string): Record<string, string> | undefined => {
  const [path = ""] = route.split("?")
  const expected = pattern.split("/")
  const actual = path.split("/")
  if (expected.length !== actual.length) return undefined
  const params: Record<string, string> = {}
  for (const [index, part] of expected.entries()) {
    const value = actual[index] ?? ""
    if (part.startsWith(":")) {
      if (value === "") return undefined
      params[part.slice(1)] = decodeURIComponent(value)
    } else if (part !== value) return undefined
  }
  return params
}

export const href = (path: string) => `#${path}`
export const go = (path: string) => {
  location.hash = path
}
