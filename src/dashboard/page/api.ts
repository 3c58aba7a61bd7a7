/**
 * The page's only way out: the public API of this very origin (`/api/integrations/…`), authenticated by the session
 * cookie the browser sends by itself (HttpOnly: this code never sees it). Every change carries the session's CSRF
 * token. Answers are used as the API gives them: amounts stay the decimal strings they are.
 */
import type { DashboardSession } from "@cop-integrations/contracts"

const API = "/api/integrations"

/** A non-2xx answer: its status and the ErrorBody's `error`. */
export class ApiError extends Error {
  constructor(readonly status: number, message: string) {
    super(message)
  }
}

let csrfToken = ""
let signedOut: () => void = () => {}

/** What to do when the API says the session is over (401): the page shows the signed-out screen. */
export const onSignedOut = (handler: () => void) => {
  signedOut = handler
}

/** Query parameters; one left undefined or empty is not sent. */
export type Query = Readonly<Record<string, string | undefined>>

const urlOf = (path: string, query: Query = {}) => {
  const url = new URL(`${API}${path}`, location.origin)
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== "") url.searchParams.set(name, value)
  }
  return url
}

const send = async <A>(
  method: "GET" | "POST" | "PATCH" | "DELETE",
  path: string,
  query?: Query,
  body?: unknown
): Promise<A> => {
  const headers: Record<string, string> = { accept: "application/json" }
  if (method !== "GET") headers["x-csrf-token"] = csrfToken
  if (body !== undefined) headers["content-type"] = "application/json"
  const response = await fetch(urlOf(path, query), {
    method,
    headers,
    credentials: "same-origin",
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  if (response.status === 204) return undefined as A
  const text = await response.text()
  let json: unknown = undefined
  try {
    json = JSON.parse(text)
  } catch {
    // not JSON: reported below by status
  }
  if (response.ok) return json as A
  const message = typeof json === "object" && json !== null && "error" in json && typeof json.error === "string"
    ? json.error
    : `HTTP ${response.status}`
  if (response.status === 401) signedOut()
  throw new ApiError(response.status, message)
}

export const get = <A>(path: string, query?: Query) => send<A>("GET", path, query)
export const post = <A>(path: string, body?: unknown) => send<A>("POST", path, undefined, body)
export const patch = <A>(path: string, body: unknown) => send<A>("PATCH", path, undefined, body)
export const del = (path: string) => send<void>("DELETE", path)

/** The session this page runs in (its CSRF token kept for the changes), or 401 when there is none. */
export const loadSession = async (): Promise<DashboardSession> => {
  const session = await get<DashboardSession>("/dashboard/session")
  csrfToken = session.csrfToken
  return session
}

export const signOut = () => del("/dashboard/session")
