/**
 * The dashboard's sign-in over HTTP: a one-time link made with a key (valid five minutes: expired here by moving its
 * row's expires_at, never by waiting), the session cookie it sets (its attributes on loopback and behind another
 * Host), the cookie as a way to call the API (CSRF token for changes, never mixed with a key, one integration only),
 * sign-out on the server, and no token in the logs.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { describe, expect } from "vitest"
import { hashToken } from "../../src/dashboard/Tokens.ts"
import {
  openLink,
  raw,
  SESSION,
  sessionCookieOf,
  signIn,
  signInLink,
  SESSIONS,
  withCookie
} from "../support/dashboard.ts"
import { httpTest } from "../support/fixture.ts"
import { newPartner, PAYOUTS } from "../support/flows.ts"
import type { TestServer } from "../support/server.ts"

const it = httpTest({ captureLogs: true })

const sql = <A extends object>(
  server: TestServer,
  run: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<A>, unknown>
) => server.run(Effect.flatMap(SqlClient.SqlClient, run))

/** An ErrorBody with exactly `{ error }` at `status`; its text. */
const errorText = (answer: { status: number; json: any; text: string }, status: number): string => {
  expect(answer.status, answer.text).toBe(status)
  expect(Object.keys(answer.json ?? {})).toEqual(["error"])
  return answer.json.error as string
}

describe("a sign-in link", () => {
  it("is made with a key for five minutes, signs in once (303 to /dashboard with the cookie), then is 410", async ({ server, partner }) => {
    const link = await signInLink(server, partner.apiKey)
    expect(link.url).toMatch(new RegExp(`^${server.baseUrl}/dashboard/sign-in\\?token=[A-Za-z0-9_-]{43}$`))
    const [row] = await sql<{ minutes: number; integration_id: string; used: boolean }>(
      server,
      (sql) =>
        sql`SELECT extract(epoch FROM expires_at - created_at) / 60 AS minutes, integration_id, used_at IS NOT NULL AS used
            FROM dashboard_sign_in_links WHERE token_hash = ${hashToken(link.token)}`
    )
    expect(row).toMatchObject({ integration_id: partner.integrationId, used: false })
    expect(Number(row!.minutes)).toBe(5)
    expect(new Date(link.expiresAt).toISOString()).toBe(link.expiresAt)

    const opened = await openLink(server, link.url)
    expect(opened.status, opened.text).toBe(303)
    expect(opened.headers["location"]).toBe("/dashboard")
    expect(opened.headers["referrer-policy"]).toBe("no-referrer")
    expect(opened.headers["cache-control"]).toBe("no-store")
    const setCookie = [opened.headers["set-cookie"]].flat().join("\n")
    // On loopback no Secure (browsers keep it over plain http there); HttpOnly, SameSite=Strict, the session's 12 h.
    expect(setCookie).toMatch(
      /^cop_dashboard=[A-Za-z0-9_-]{43}; Max-Age=(43199|43200); Path=\/; HttpOnly; SameSite=Strict$/
    )

    const again = await openLink(server, link.url)
    expect(again.status).toBe(410)
    expect(again.headers["content-type"]).toMatch(/^text\/html/)
    expect(again.text).toContain("used already")
    expect(sessionCookieOf(again)).toBeUndefined()
  })

  it("past its five minutes is 410 and sets no cookie; an unknown or malformed token is 401", async ({ server, partner }) => {
    const link = await signInLink(server, partner.apiKey)
    await sql(server, (sql) =>
      sql`UPDATE dashboard_sign_in_links SET expires_at = now() - interval '1 millisecond'
          WHERE token_hash = ${hashToken(link.token)}`)
    const expired = await openLink(server, link.url)
    expect(expired.status).toBe(410)
    expect(expired.text).toContain("expired")
    expect(sessionCookieOf(expired)).toBeUndefined()
    expect(expired.headers["content-security-policy"]).toContain("default-src 'none'")

    const unknown = await raw(server, `/dashboard/sign-in?token=${"A".repeat(43)}`)
    expect(unknown.status).toBe(401)
    expect(sessionCookieOf(unknown)).toBeUndefined()
    expect((await raw(server, "/dashboard/sign-in?token=short")).status).toBe(401)
    expect((await raw(server, "/dashboard/sign-in")).status).toBe(401)
  })

  it("behind another Host names that host over https, and its cookie is Secure", async ({ server, partner }) => {
    const link = await signInLink(server, partner.apiKey, { host: "dash.example.com" })
    expect(link.url).toMatch(/^https:\/\/dash\.example\.com\/dashboard\/sign-in\?token=/)
    const opened = await openLink(server, link.url, "dash.example.com")
    expect(opened.status).toBe(303)
    expect([opened.headers["set-cookie"]].flat().join("\n")).toMatch(
      /^cop_dashboard=[A-Za-z0-9_-]{43}; Max-Age=\d+; Path=\/; HttpOnly; Secure; SameSite=Strict$/
    )
  })

  it("is made with a key only: a session asking for one is 403, and a key has no session (404)", async ({ server, partner }) => {
    const { cookie, csrfToken } = await signIn(server, partner.apiKey)
    const fromSession = await withCookie(server, cookie, SESSIONS, { method: "POST", csrfToken })
    expect(errorText(fromSession, 403)).toContain("API key")
    const withKey = await raw(server, SESSION, { headers: { authorization: `Bearer ${partner.apiKey}` } })
    expect(errorText(withKey, 404)).toContain("API key")
    const signOutWithKey = await raw(server, SESSION, {
      method: "DELETE",
      headers: { authorization: `Bearer ${partner.apiKey}` }
    })
    expect(signOutWithKey.status).toBe(404)
  })
})

describe("the session cookie", () => {
  it("reads the API as the integration, and GET dashboard/session names it with its CSRF token", async ({ server, partner, user }) => {
    const payout = await partner.payout(user)
    const { cookie, session } = await signIn(server, partner.apiKey)
    expect(session).toEqual({
      sessionId: expect.stringMatching(/^ds_/),
      integrationId: partner.integrationId,
      mode: "mock",
      expiresAt: expect.stringMatching(/Z$/),
      csrfToken: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/)
    })
    const read = await withCookie(server, cookie, `${PAYOUTS}/${payout.payoutId}`)
    expect(read.status, read.text).toBe(200)
    expect(read.json.payoutId).toBe(payout.payoutId)
    expect(read.json.sourceAmount).toBe(payout.sourceAmount)
  })

  it("needs the CSRF token for every change (403 naming the header), not for reads", async ({ server, partner }) => {
    const { cookie, csrfToken } = await signIn(server, partner.apiKey)
    const body = { url: "http://127.0.0.1:9/hook" }
    const missing = await withCookie(server, cookie, "/api/integrations/webhook-endpoints", { method: "POST", body })
    expect(errorText(missing, 403)).toContain("X-CSRF-Token")
    const wrong = await withCookie(server, cookie, "/api/integrations/webhook-endpoints", {
      method: "POST",
      body,
      csrfToken: `${csrfToken.slice(0, -1)}${csrfToken.endsWith("A") ? "B" : "A"}`
    })
    expect(errorText(wrong, 403)).toContain("X-CSRF-Token")
    const signOut = await withCookie(server, cookie, SESSION, { method: "DELETE" })
    expect(errorText(signOut, 403)).toContain("X-CSRF-Token")
    const created = await withCookie(server, cookie, "/api/integrations/webhook-endpoints", {
      method: "POST",
      body,
      csrfToken
    })
    expect(created.status, created.text).toBe(201)
    const removed = await withCookie(server, cookie, `/api/integrations/webhook-endpoints/${created.json.endpointId}`, {
      method: "DELETE",
      csrfToken
    })
    expect(removed.status, removed.text).toBe(204)
    expect((await withCookie(server, cookie, "/api/integrations/webhook-endpoints")).status).toBe(200)
  })

  it("ends on the server at sign-out: the same cookie is 401 after, and the browser is told to drop it", async ({ server, partner }) => {
    const { cookie, csrfToken } = await signIn(server, partner.apiKey)
    const signedOut = await withCookie(server, cookie, SESSION, { method: "DELETE", csrfToken })
    expect(signedOut.status, signedOut.text).toBe(204)
    expect([signedOut.headers["set-cookie"]].flat().join("\n")).toMatch(
      /^cop_dashboard=; Max-Age=0; Path=\/; HttpOnly; SameSite=Strict$/
    )
    expect(errorText(await withCookie(server, cookie, PAYOUTS), 401)).toContain("ended")
    expect(errorText(await withCookie(server, cookie, SESSION), 401)).toContain("ended")
  })

  it("past its end is 401, and so is one whose key was revoked", async ({ server }) => {
    const owner = await newPartner(server)
    const { cookie } = await signIn(server, owner.apiKey)
    const sessionHash = hashToken(cookie.slice("cop_dashboard=".length))
    await sql(
      server,
      (sql) =>
        sql`UPDATE dashboard_sessions SET expires_at = now() - interval '1 millisecond' WHERE token_hash = ${sessionHash}`
    )
    expect(errorText(await withCookie(server, cookie, PAYOUTS), 401)).toContain("expired")

    const revoked = await signIn(server, owner.apiKey)
    expect((await withCookie(server, revoked.cookie, PAYOUTS)).status).toBe(200)
    await sql(
      server,
      (sql) => sql`UPDATE api_keys SET revoked_at = now() WHERE integration_id = ${owner.integrationId}`
    )
    expect(errorText(await withCookie(server, revoked.cookie, PAYOUTS), 401)).toContain("expired")
  })

  it("of one integration never reaches another's data (404), and a key sent with it decides alone", async ({ server, partner, user }) => {
    const payout = await partner.payout(user)
    const other = await newPartner(server)
    const otherUser = await other.approvedUser()
    const otherPayout = await other.payout(otherUser)
    const { cookie } = await signIn(server, other.apiKey)
    expect(errorText(await withCookie(server, cookie, `${PAYOUTS}/${payout.payoutId}`), 404)).toBeTruthy()
    expect((await withCookie(server, cookie, `${PAYOUTS}/${otherPayout.payoutId}`)).status).toBe(200)
    const listed = await withCookie(server, cookie, PAYOUTS)
    expect(listed.json.integrationId).toBe(other.integrationId)
    expect(listed.json.items.map((item: { payoutId: string }) => item.payoutId)).toEqual([otherPayout.payoutId])

    // The other integration's cookie beside this integration's key: the key alone is used.
    const mixed = await withCookie(server, cookie, `${PAYOUTS}/${payout.payoutId}`, {
      headers: { authorization: `Bearer ${partner.apiKey}` }
    })
    expect(mixed.status).toBe(200)
    expect(
      (await withCookie(server, cookie, `${PAYOUTS}/${otherPayout.payoutId}`, {
        headers: { authorization: `Bearer ${partner.apiKey}` }
      })).status
    ).toBe(404)
    // A bad key is refused even with a good cookie.
    const badKey = await withCookie(server, cookie, PAYOUTS, { headers: { authorization: "Bearer nope" } })
    expect(badKey.status).toBe(401)
    // A cookie naming no session is 401.
    expect(errorText(await withCookie(server, `cop_dashboard=${"B".repeat(43)}`, PAYOUTS), 401)).toContain("unknown")
    expect((await withCookie(server, "cop_dashboard=forged", PAYOUTS)).status).toBe(401)
  })
})

describe("logs", () => {
  it("never carry a link's token, a session's token or its CSRF token", async ({ server, partner }) => {
    const { cookie, csrfToken, link } = await signIn(server, partner.apiKey)
    await withCookie(server, cookie, PAYOUTS)
    await withCookie(server, cookie, SESSION, { method: "DELETE", csrfToken })
    await openLink(server, link.url) // used: 410
    const secrets = [link.token, cookie.slice("cop_dashboard=".length), csrfToken]
    expect(server.logs.length).toBeGreaterThan(0)
    expect(server.logs.some((line) => line.includes("/dashboard/sign-in"))).toBe(true)
    for (const secret of secrets) expect(server.logs.filter((line) => line.includes(secret))).toEqual([])
  })
})
