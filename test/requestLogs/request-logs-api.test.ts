/**
 * GET request-logs and request-logs/{requestId}: an integration's own requests, newest first, with the list's filters
 * and cursor pages; one by its request id; another integration's request is 404 and never in the list; the
 * request-log endpoints do not record themselves.
 */
import { RequestLog, RequestLogList } from "@cop-integrations/contracts"
import { Schema } from "effect"
import { describe, expect } from "vitest"
import { signIn, withCookie } from "../support/dashboard.ts"
import { httpTest } from "../support/fixture.ts"
import { pageAll } from "../support/flows.ts"
import { BREB, call, expectErrorBody, newAddress } from "../support/http.ts"
import type { TestServer } from "../support/server.ts"
import { rawRows, untilLogged } from "./support.ts"

const it = httpTest()

const LOGS = "/api/integrations/request-logs"
const decodeList = Schema.decodeUnknownSync(RequestLogList)
const decodeLog = Schema.decodeUnknownSync(RequestLog)

const tag = `t${Date.now().toString(36)}`
const requestIdOf = (name: string) => `${tag}-${name}`

/** Follows the list with `query` to its end, `limit` at a time; every page's items in order. */
const followList = (server: TestServer, apiKey: string, query: Record<string, string>, limit: number) =>
  pageAll(query, limit, async (page) => {
    const answer = await call(server, `${LOGS}?${new URLSearchParams(page)}`, { apiKey })
    expect(answer.status, answer.text).toBe(200)
    return decodeList(answer.body)
  })

describe("request logs over the API", () => {
  it("lists, filters, pages and reads one; another integration's are 404 and never listed", async ({ server }) => {
    const mine = await server.newIntegration()
    const theirs = await server.newIntegration()
    const as = (apiKey: string, name: string, path: string, options: Parameters<typeof call>[2] = {}) =>
      call(server, path, { apiKey, ...options, headers: { ...options.headers, "x-request-id": requestIdOf(name) } })

    const startedAt = new Date().toISOString()
    expect((await as(mine.apiKey, "quote", `${BREB}/quote`)).status).toBe(200)
    expectErrorBody(await as(mine.apiKey, "missing", `${BREB}/payouts/po_doesnotexist`), 404)
    expectErrorBody(await as(mine.apiKey, "bad-body", `${BREB}/payouts`, { body: { destinationCop: "1" } }), 400)
    const user = newAddress()
    expect(
      (await as(mine.apiKey, "otp-send", `${BREB}/kyc/otp/send`, {
        body: { email: "ana@example.com", userAddress: user }
      })).status
    ).toBe(200)
    expectErrorBody(
      await as(mine.apiKey, "otp-wrong", `${BREB}/kyc/otp/verify`, { body: { userAddress: user, code: "000000" } }),
      400,
      "otp_invalid"
    )
    expect((await as(mine.apiKey, "swaps", `${BREB}/payouts?limit=3`)).status).toBe(200)
    expect((await as(theirs.apiKey, "theirs", `${BREB}/quote`)).status).toBe(200)
    const names = ["quote", "missing", "bad-body", "otp-send", "otp-wrong", "swaps", "theirs"]
    await untilLogged(server, names.map(requestIdOf))

    // the whole list: mine only, newest first, each once, through pages of 2
    const all = await followList(server, mine.apiKey, {}, 2)
    const listed = all.map((log) => log.requestId)
    expect(listed).toEqual(names.filter((name) => name !== "theirs").reverse().map(requestIdOf))
    const times = all.map((log) => log.createdAt)
    expect([...times].sort().reverse()).toEqual(times)

    // one, as stored
    const one = await call(server, `${LOGS}/${requestIdOf("otp-wrong")}`, { apiKey: mine.apiKey })
    expect(one.status, one.text).toBe(200)
    const log = decodeLog(one.body)
    expect(log).toMatchObject({
      requestId: requestIdOf("otp-wrong"),
      method: "POST",
      path: `${BREB}/kyc/otp/verify`,
      status: 400,
      errorCode: "otp_invalid",
      keyLast4: mine.apiKey.slice(-4),
      clientAddress: "127.0.0.1",
      request: { query: {}, headers: { "content-type": "application/json" }, body: { code: "[redacted]" } },
      response: { body: { errorCode: "otp_invalid" } }
    })
    expect(log.error).toMatch(/code/)
    expect(log.keyId).toMatch(/^key_/)
    expect(log.durationMs).toBeGreaterThanOrEqual(0)
    expect(log.createdAt >= startedAt).toBe(true)
    const quote = decodeLog((await call(server, `${LOGS}/${requestIdOf("quote")}`, { apiKey: mine.apiKey })).body)
    expect(quote).toMatchObject({ status: 200, errorCode: null, error: null, request: { body: null } })

    // filters
    const ids = async (query: Record<string, string>) =>
      (await followList(server, mine.apiKey, query, 50)).map((item) => item.requestId)
    expect(await ids({ statusClass: "4xx" })).toEqual(["otp-wrong", "bad-body", "missing"].map(requestIdOf))
    expect(await ids({ statusClass: "5xx" })).toEqual([])
    expect(await ids({ path: `${BREB}/payouts` })).toEqual(["swaps", "bad-body", "missing"].map(requestIdOf))
    expect(await ids({ errorCode: "otp_invalid" })).toEqual([requestIdOf("otp-wrong")])
    expect(await ids({ requestId: requestIdOf("quote") })).toEqual([requestIdOf("quote")])
    const otpSent = all.find((item) => item.requestId === requestIdOf("otp-send"))!.createdAt
    expect(await ids({ createdFrom: otpSent })).toEqual(["swaps", "otp-wrong", "otp-send"].map(requestIdOf))
    expect(await ids({ createdTo: otpSent })).toEqual(["bad-body", "missing", "quote"].map(requestIdOf))
    expect(await ids({ statusClass: "4xx", path: `${BREB}/kyc` })).toEqual([requestIdOf("otp-wrong")])

    // bad input is a 400 naming the parameter
    expect(expectErrorBody(await call(server, `${LOGS}?statusClass=6xx`, { apiKey: mine.apiKey }), 400).error)
      .toContain("statusClass")
    expect(expectErrorBody(await call(server, `${LOGS}?cursor=nope`, { apiKey: mine.apiKey }), 400).error)
      .toContain("cursor")
    expect(expectErrorBody(await call(server, `${LOGS}?path=payouts`, { apiKey: mine.apiKey }), 400).error)
      .toContain("path")

    // another integration's request: 404, and never in the list (the other way round too)
    expectErrorBody(await call(server, `${LOGS}/${requestIdOf("theirs")}`, { apiKey: mine.apiKey }), 404)
    expectErrorBody(await call(server, `${LOGS}/${requestIdOf("quote")}`, { apiKey: theirs.apiKey }), 404)
    expect(await ids({ requestId: requestIdOf("theirs") })).toEqual([])
    const theirList = await followList(server, theirs.apiKey, {}, 50)
    expect(theirList.map((item) => item.requestId)).toEqual([requestIdOf("theirs")])

    // the request-log endpoints did not record themselves: a request after them is, and they are not
    expect((await as(mine.apiKey, "after", `${BREB}/quote`)).status).toBe(200)
    await untilLogged(server, [requestIdOf("after")])
    expect((await rawRows(server)).filter((row) => row.includes(LOGS))).toEqual([])
  })

  it("names the dashboard session a request was made with, as the key that made the session", async ({ server, partner }) => {
    const signedIn = await signIn(server, partner.apiKey)
    const id = `${tag}-session`
    const listed = await withCookie(server, signedIn.cookie, `${BREB}/payouts?limit=1`, {
      headers: { "x-request-id": id }
    })
    expect(listed.status, listed.text).toBe(200)
    const keyed = `${tag}-keyed`
    expect((await call(server, `${BREB}/quote`, { apiKey: partner.apiKey, headers: { "x-request-id": keyed } })).status)
      .toBe(200)
    await untilLogged(server, [id, keyed])
    const logOf = async (requestId: string) =>
      decodeLog((await call(server, `${LOGS}/${requestId}`, { apiKey: partner.apiKey })).body)
    expect(await logOf(id)).toMatchObject({
      keyLast4: partner.apiKey.slice(-4),
      dashboardSessionId: signedIn.session.sessionId
    })
    expect(signedIn.session.sessionId).toMatch(/^ds_/)
    expect((await logOf(keyed)).dashboardSessionId).toBeNull()
  })

  it("the latest request answers for a request id sent twice", async ({ server, partner }) => {
    const id = `${tag}-twice`
    const first = await call(server, `${BREB}/payouts/po_first`, {
      apiKey: partner.apiKey,
      headers: { "x-request-id": id }
    })
    expect(first.status).toBe(404)
    await untilLogged(server, [id])
    expect((await call(server, `${BREB}/quote`, { apiKey: partner.apiKey, headers: { "x-request-id": id } })).status)
      .toBe(200)
    await expect.poll(async () => (await call(server, `${LOGS}/${id}`, { apiKey: partner.apiKey })).body?.status, {
      timeout: 20_000
    }).toBe(200)
  })
})
