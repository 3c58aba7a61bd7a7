/**
 * The dashboard's sign-in from a test: a link made with a key, opened over raw HTTP (so the Host header can be any and
 * the answer's Set-Cookie is read as sent), and API calls made with the session cookie instead of a key.
 */
import { request } from "node:http"
import { expect } from "vitest"
import type { TestServer } from "./server.ts"

export const SESSIONS = "/api/integrations/dashboard/sessions"
export const SESSION = "/api/integrations/dashboard/session"

export interface RawAnswer {
  readonly status: number
  readonly headers: Record<string, string | Array<string> | undefined>
  readonly text: string
  readonly json: any
}

/** One request to the server as sent, with whatever Host header is given (fetch would not send another host's). */
export const raw = (
  server: Pick<TestServer, "baseUrl">,
  path: string,
  options: { readonly method?: string; readonly headers?: Record<string, string>; readonly body?: string } = {}
): Promise<RawAnswer> =>
  new Promise((resolve, reject) => {
    const base = new URL(server.baseUrl)
    const outgoing = request({
      host: base.hostname,
      port: base.port,
      path,
      method: options.method ?? "GET",
      headers: { ...options.headers, ...(options.body === undefined ? {} : { "content-type": "application/json" }) }
    }, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8")
        let json: unknown = undefined
        try {
          json = JSON.parse(text)
        } catch {
          // not JSON
        }
        resolve({ status: response.statusCode ?? 0, headers: response.headers, text, json })
      })
      response.on("error", reject)
    })
    outgoing.on("error", reject)
    outgoing.end(options.body)
  })

/** A sign-in link made with `apiKey` (201), as the API answers it. */
export const signInLink = async (
  server: Pick<TestServer, "baseUrl">,
  apiKey: string,
  headers: Record<string, string> = {}
): Promise<{ readonly url: string; readonly expiresAt: string; readonly token: string }> => {
  const answer = await raw(server, SESSIONS, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, ...headers }
  })
  expect(answer.status, answer.text).toBe(201)
  const { expiresAt, url } = answer.json as { url: string; expiresAt: string }
  return { url, expiresAt, token: new URL(url).searchParams.get("token") ?? "" }
}

/** The session cookie's `name=value` from a Set-Cookie list, if one sets it. */
export const sessionCookieOf = (answer: RawAnswer): string | undefined => {
  const setCookie = answer.headers["set-cookie"] ?? []
  const line = (Array.isArray(setCookie) ? setCookie : [setCookie]).find((cookie) =>
    cookie.startsWith("cop_dashboard=")
  )
  return line?.split(";")[0]
}

/** Opens a sign-in link (its path and query, on this server, with `host` as the Host header if given). */
export const openLink = (server: Pick<TestServer, "baseUrl">, url: string, host?: string) => {
  const { pathname, search } = new URL(url)
  return raw(server, `${pathname}${search}`, host === undefined ? {} : { headers: { host } })
}

/** A signed-in session: its cookie (`cop_dashboard=…`) and its CSRF token. */
export const signIn = async (server: Pick<TestServer, "baseUrl">, apiKey: string) => {
  const link = await signInLink(server, apiKey)
  const opened = await openLink(server, link.url)
  expect(opened.status, opened.text).toBe(303)
  const cookie = sessionCookieOf(opened)
  expect(cookie).toBeDefined()
  const session = await raw(server, SESSION, { headers: { cookie: cookie! } })
  expect(session.status, session.text).toBe(200)
  return { cookie: cookie!, csrfToken: session.json.csrfToken as string, session: session.json, link }
}

/** An API call with the session cookie (and the CSRF token, when given). */
export const withCookie = (
  server: Pick<TestServer, "baseUrl">,
  cookie: string,
  path: string,
  options: {
    readonly method?: string
    readonly csrfToken?: string
    readonly body?: unknown
    readonly headers?: Record<string, string>
  } = {}
) =>
  raw(server, path, {
    method: options.method ?? "GET",
    headers: {
      cookie,
      ...(options.csrfToken === undefined ? {} : { "x-csrf-token": options.csrfToken }),
      ...options.headers
    },
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) })
  })
