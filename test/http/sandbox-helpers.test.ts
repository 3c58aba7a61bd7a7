/**
 * A sandbox that rehearses every exception (issue #29, part 6): `advance` to `failed` or `refunded` with a documented
 * failure code (one clear 400 naming the allowed values otherwise, for the code and for `to`), and the time helpers that
 * produce `payout.expired`, `payout.delayed` and `swap.expired` on request through the sweeps' own steps, for the
 * caller's resources only. The worker's own sweeps are held off (long intervals), so what happens here is the
 * helper's doing.
 */
import { SqlClient } from "effect/sql"
import {
  EventType,
  FAILURE_CODES,
  KNOWN_FAILURE_CODES,
  type Payout,
  type SwapIntent,
  type TriggeredEvent
} from "@cop-integrations/contracts"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { call, createConfirmedPayout, createPayout, expectErrorBody, newAddress } from "../support/http.ts"
import { startTestServer, type TestServer } from "../support/server.ts"

const HELPERS = "/api/integrations/test-helpers"

let server: TestServer
let apiKey: string
let otherKey: string

beforeAll(async () => {
  server = await startTestServer({
    captureLogs: true,
    env: { MOCK_LIFECYCLE_DELAY_MS: "600000", EXPIRY_SWEEP_INTERVAL_MS: "600000" }
  })
  ;({ apiKey } = await server.newIntegration())
  ;({ apiKey: otherKey } = await server.newIntegration())
})
afterAll(() => server?.close())

const post = (path: string, body?: unknown, key = apiKey) =>
  call(server, path, { method: "POST", apiKey: key, ...(body === undefined ? {} : { body }) })

const eventTypesOf = async (resourceId: string) => {
  const rows = await server.run(Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<{ type: string }>`SELECT type FROM events WHERE resource_id = ${resourceId} ORDER BY sequence`
  ))
  return rows.map((row) => row.type)
}

const withoutAction = ({ action: _, ...reason }: (typeof FAILURE_CODES)[keyof typeof FAILURE_CODES]) => reason

describe("advance with a failure code", () => {
  it("failed with a code records that code's row of the table", async () => {
    const payout = await createConfirmedPayout(server, apiKey)
    const failed = await post(`${HELPERS}/payouts/${payout.payoutId}/advance`, {
      to: "failed",
      failureCode: "beneficiary_name_mismatch"
    })
    expect(failed.status, failed.text).toBe(200)
    const body = failed.body as Payout
    expect(body.status).toBe("failed")
    expect(body.failure).toEqual({
      code: "beneficiary_name_mismatch",
      ...withoutAction(FAILURE_CODES.beneficiary_name_mismatch),
      at: expect.any(String)
    })
    expect(await eventTypesOf(payout.payoutId)).toContain("payout.failed")
  })

  it("refunded with a code records it, and the mock's refund", async () => {
    const payout = await createConfirmedPayout(server, apiKey)
    const refunded = await post(`${HELPERS}/payouts/${payout.payoutId}/advance`, {
      to: "refunded",
      failureCode: "deposit_short"
    })
    expect(refunded.status, refunded.text).toBe(200)
    const body = refunded.body as Payout
    expect(body.failure).toMatchObject({ code: "deposit_short", category: "deposit", retryable: true })
    expect(body.refund).toMatchObject({ status: "sent", to: payout.userAddress, txHash: expect.any(String) })
  })

  it("without a code, the defaults stay as they were", async () => {
    const payout = await createConfirmedPayout(server, apiKey)
    const failed = await post(`${HELPERS}/payouts/${payout.payoutId}/advance`, { to: "failed" })
    expect((failed.body as Payout).failure).toMatchObject({ code: "provider_error" })
  })

  it("an unknown code is one 400 naming the field and every known code", async () => {
    const payout = await createConfirmedPayout(server, apiKey)
    const answer = await post(`${HELPERS}/payouts/${payout.payoutId}/advance`, { to: "failed", failureCode: "nope" })
    expect(expectErrorBody(answer, 400).error).toBe(
      `invalid request: failureCode: must be one of ${
        KNOWN_FAILURE_CODES.map((code) => `"${code}"`).join(", ")
      }, actual "nope"`
    )
  })

  it("a code with a status that records no failure is a 400", async () => {
    const payout = await createConfirmedPayout(server, apiKey)
    const answer = await post(`${HELPERS}/payouts/${payout.payoutId}/advance`, {
      to: "completed",
      failureCode: "other"
    })
    expect(expectErrorBody(answer, 400).error).toContain("failureCode")
  })

  it("an invalid `to` is one 400 naming the allowed values", async () => {
    const payout = await createConfirmedPayout(server, apiKey)
    const answer = await post(`${HELPERS}/payouts/${payout.payoutId}/advance`, { to: "expired" })
    expect(expectErrorBody(answer, 400).error).toBe(
      `invalid request: to: must be one of "processing", "completed", "failed", "refunded", actual "expired"`
    )
  })
})

describe("time helpers", () => {
  it("expire: a payout awaiting its deposit expires now, through the sweep", async () => {
    const payout = await createPayout(server, apiKey)
    expectErrorBody(await post(`${HELPERS}/payouts/${payout.payoutId}/expire`, undefined, otherKey), 404)
    const expired = await post(`${HELPERS}/payouts/${payout.payoutId}/expire`)
    expect(expired.status, expired.text).toBe(200)
    const body = expired.body as Payout
    expect(body.status).toBe("expired")
    expect(body.timeline.map((hop) => hop.status)).toContain("expired")
    expect(await eventTypesOf(payout.payoutId)).toEqual(["payout.created", "payout.expired"])
    // once: it no longer awaits a deposit
    expectErrorBody(await post(`${HELPERS}/payouts/${payout.payoutId}/expire`), 409)
  })

  it("delay: a payout in flight is reported delayed once, through the sweep", async () => {
    const payout = await createConfirmedPayout(server, apiKey)
    expectErrorBody(await post(`${HELPERS}/payouts/${payout.payoutId}/delay`, undefined, otherKey), 404)
    const delayed = await post(`${HELPERS}/payouts/${payout.payoutId}/delay`)
    expect(delayed.status, delayed.text).toBe(200)
    expect((delayed.body as Payout).timeline.map((hop) => hop.status)).toContain("delayed")
    expect((await eventTypesOf(payout.payoutId)).filter((type) => type === "payout.delayed")).toHaveLength(1)
    expectErrorBody(await post(`${HELPERS}/payouts/${payout.payoutId}/delay`), 409)
  })

  it("delay: a payout awaiting its deposit is not stuck (409)", async () => {
    const payout = await createPayout(server, apiKey)
    expectErrorBody(await post(`${HELPERS}/payouts/${payout.payoutId}/delay`), 409)
  })

  it("expire: a prepared swap expires now, through the sweep", async () => {
    const prepared = await post("/api/integrations/swaps", {
      userAddress: newAddress(),
      fromToken: "USDC",
      toToken: "COPm",
      amountIn: "10"
    })
    expect(prepared.status, prepared.text).toBe(201)
    const { intentId } = prepared.body as SwapIntent
    expectErrorBody(await post(`${HELPERS}/swaps/${intentId}/expire`, undefined, otherKey), 404)
    const expired = await post(`${HELPERS}/swaps/${intentId}/expire`)
    expect(expired.status, expired.text).toBe(200)
    expect((expired.body as SwapIntent).status).toBe("expired")
    expect(await eventTypesOf(intentId)).toEqual(["swap.expired"])
    expectErrorBody(await post(`${HELPERS}/swaps/${intentId}/expire`), 409)
  })

  it("an unknown payout is 404", async () => {
    expectErrorBody(await post(`${HELPERS}/payouts/po_nope/expire`), 404)
    expectErrorBody(await post(`${HELPERS}/payouts/po_nope/delay`), 404)
    expectErrorBody(await post(`${HELPERS}/swaps/sw_nope/expire`), 404)
  })
})

describe("trigger", () => {
  const TRIGGER = `${HELPERS}/events/trigger`
  const produced = EventType.literals.filter((type) => type !== "endpoint.ping")

  it.each(produced)("%s: one event of that type, listed under it", async (type) => {
    const answer = await post(TRIGGER, { type })
    expect(answer.status, answer.text).toBe(200)
    const triggered = answer.body as TriggeredEvent
    expect(triggered).toEqual({ type, eventId: expect.stringMatching(/^evt_/), resourceId: expect.any(String) })
    const event = await call(server, `/api/integrations/events/${triggered.eventId}`, { apiKey })
    expect(event.status, event.text).toBe(200)
    expect(event.body).toMatchObject({ id: triggered.eventId, type })
    const listed = await call(server, `/api/integrations/events?type=${type}&limit=100`, { apiKey })
    expect(listed.status, listed.text).toBe(200)
    expect((listed.body.items as ReadonlyArray<{ id: string }>).map((item) => item.id)).toContain(triggered.eventId)
    // the caller's alone
    expect((await call(server, `/api/integrations/events/${triggered.eventId}`, { apiKey: otherKey })).status).toBe(404)
  })

  it("endpoint.ping pings the integration's endpoint, and needs one", async () => {
    const { apiKey: lonely } = await server.newIntegration()
    expectErrorBody(await post(TRIGGER, { type: "endpoint.ping" }, lonely), 409)
    const registered = await post("/api/integrations/webhook-endpoints", { url: "https://example.com/hooks" }, lonely)
    expect(registered.status, registered.text).toBe(201)
    const answer = await post(TRIGGER, { type: "endpoint.ping" }, lonely)
    expect(answer.status, answer.text).toBe(200)
    expect(answer.body).toMatchObject({ type: "endpoint.ping", resourceId: registered.body.endpointId })
  })

  it("an unknown type is one 400 naming every type", async () => {
    const answer = await post(TRIGGER, { type: "payout.exploded" })
    expect(expectErrorBody(answer, 400).error).toBe(
      `invalid request: type: must be one of ${
        EventType.literals.map((type) => `"${type}"`).join(", ")
      }, actual "payout.exploded"`
    )
  })
})
