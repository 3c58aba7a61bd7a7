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
import { describe, expect } from "vitest"
import { httpTest } from "../support/fixture.ts"
import { call, createConfirmedPayout, createPayout, expectErrorBody, newAddress } from "../support/http.ts"
import type { TestServer } from "../support/server.ts"

const HELPERS = "/api/integrations/test-helpers"

const it = httpTest({
  captureLogs: true,
  env: { MOCK_LIFECYCLE_DELAY_MS: "600000", EXPIRY_SWEEP_INTERVAL_MS: "600000" }
})

/** Another integration's key: the helpers act on the caller's resources only. */
let otherKey: string
it.beforeAll(async ({ server }) => {
  ;({ apiKey: otherKey } = await server.newIntegration())
})

const post = (server: TestServer, key: string, path: string, body?: unknown) =>
  call(server, path, { method: "POST", apiKey: key, ...(body === undefined ? {} : { body }) })

const eventTypesOf = async (server: TestServer, resourceId: string) => {
  const rows = await server.run(Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<{ type: string }>`SELECT type FROM events WHERE resource_id = ${resourceId} ORDER BY sequence`
  ))
  return rows.map((row) => row.type)
}

const withoutAction = ({ action: _, ...reason }: (typeof FAILURE_CODES)[keyof typeof FAILURE_CODES]) => reason

describe("advance with a failure code", () => {
  it("failed with a code records that code's row of the table", async ({ server, partner }) => {
    const payout = await createConfirmedPayout(server, partner.apiKey)
    const failed = await post(server, partner.apiKey, `${HELPERS}/payouts/${payout.payoutId}/advance`, {
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
    expect(await eventTypesOf(server, payout.payoutId)).toContain("payout.failed")
  })

  it("refunded with a code records it, and the mock's refund", async ({ server, partner }) => {
    const payout = await createConfirmedPayout(server, partner.apiKey)
    const refunded = await post(server, partner.apiKey, `${HELPERS}/payouts/${payout.payoutId}/advance`, {
      to: "refunded",
      failureCode: "deposit_short"
    })
    expect(refunded.status, refunded.text).toBe(200)
    const body = refunded.body as Payout
    expect(body.failure).toMatchObject({ code: "deposit_short", category: "deposit", retryable: true })
    expect(body.refund).toMatchObject({ status: "sent", to: payout.userAddress, txHash: expect.any(String) })
  })

  it("without a code, the defaults stay as they were", async ({ server, partner }) => {
    const payout = await createConfirmedPayout(server, partner.apiKey)
    const failed = await post(server, partner.apiKey, `${HELPERS}/payouts/${payout.payoutId}/advance`, { to: "failed" })
    expect((failed.body as Payout).failure).toMatchObject({ code: "provider_error" })
  })

  it("an unknown code is one 400 naming the field and every known code", async ({ server, partner }) => {
    const payout = await createConfirmedPayout(server, partner.apiKey)
    const answer = await post(server, partner.apiKey, `${HELPERS}/payouts/${payout.payoutId}/advance`, {
      to: "failed",
      failureCode: "nope"
    })
    expect(expectErrorBody(answer, 400).error).toBe(
      `invalid request: failureCode: must be one of ${
        KNOWN_FAILURE_CODES.map((code) => `"${code}"`).join(", ")
      }, actual "nope"`
    )
  })

  it("a code with a status that records no failure is a 400", async ({ server, partner }) => {
    const payout = await createConfirmedPayout(server, partner.apiKey)
    const answer = await post(server, partner.apiKey, `${HELPERS}/payouts/${payout.payoutId}/advance`, {
      to: "completed",
      failureCode: "other"
    })
    expect(expectErrorBody(answer, 400).error).toContain("failureCode")
  })

  it("an invalid `to` is one 400 naming the allowed values", async ({ server, partner }) => {
    const payout = await createConfirmedPayout(server, partner.apiKey)
    const answer = await post(server, partner.apiKey, `${HELPERS}/payouts/${payout.payoutId}/advance`, {
      to: "expired"
    })
    expect(expectErrorBody(answer, 400).error).toBe(
      `invalid request: to: must be one of "processing", "completed", "failed", "refunded", actual "expired"`
    )
  })
})

describe("time helpers", () => {
  it("expire: a payout awaiting its deposit expires now, through the sweep", async ({ server, partner }) => {
    const payout = await createPayout(server, partner.apiKey)
    expectErrorBody(await post(server, otherKey, `${HELPERS}/payouts/${payout.payoutId}/expire`), 404)
    const expired = await post(server, partner.apiKey, `${HELPERS}/payouts/${payout.payoutId}/expire`)
    expect(expired.status, expired.text).toBe(200)
    const body = expired.body as Payout
    expect(body.status).toBe("expired")
    expect(body.timeline.map((hop) => hop.status)).toContain("expired")
    expect(await eventTypesOf(server, payout.payoutId)).toEqual(["payout.created", "payout.expired"])
    // once: it no longer awaits a deposit
    expectErrorBody(await post(server, partner.apiKey, `${HELPERS}/payouts/${payout.payoutId}/expire`), 409)
  })

  it("delay: a payout in flight is reported delayed once, through the sweep", async ({ server, partner }) => {
    const payout = await createConfirmedPayout(server, partner.apiKey)
    expectErrorBody(await post(server, otherKey, `${HELPERS}/payouts/${payout.payoutId}/delay`), 404)
    const delayed = await post(server, partner.apiKey, `${HELPERS}/payouts/${payout.payoutId}/delay`)
    expect(delayed.status, delayed.text).toBe(200)
    expect((delayed.body as Payout).timeline.map((hop) => hop.status)).toContain("delayed")
    expect((await eventTypesOf(server, payout.payoutId)).filter((type) => type === "payout.delayed")).toHaveLength(1)
    expectErrorBody(await post(server, partner.apiKey, `${HELPERS}/payouts/${payout.payoutId}/delay`), 409)
  })

  it("delay: a payout awaiting its deposit is not stuck (409)", async ({ server, partner }) => {
    const payout = await createPayout(server, partner.apiKey)
    expectErrorBody(await post(server, partner.apiKey, `${HELPERS}/payouts/${payout.payoutId}/delay`), 409)
  })

  it("expire: a prepared swap expires now, through the sweep", async ({ server, partner }) => {
    const prepared = await post(server, partner.apiKey, "/api/integrations/swaps", {
      userAddress: newAddress(),
      fromToken: "USDC",
      toToken: "COPm",
      amountIn: "10"
    })
    expect(prepared.status, prepared.text).toBe(201)
    const { intentId } = prepared.body as SwapIntent
    expectErrorBody(await post(server, otherKey, `${HELPERS}/swaps/${intentId}/expire`), 404)
    const expired = await post(server, partner.apiKey, `${HELPERS}/swaps/${intentId}/expire`)
    expect(expired.status, expired.text).toBe(200)
    expect((expired.body as SwapIntent).status).toBe("expired")
    expect(await eventTypesOf(server, intentId)).toEqual(["swap.expired"])
    expectErrorBody(await post(server, partner.apiKey, `${HELPERS}/swaps/${intentId}/expire`), 409)
  })

  it("an unknown payout is 404", async ({ server, partner }) => {
    expectErrorBody(await post(server, partner.apiKey, `${HELPERS}/payouts/po_nope/expire`), 404)
    expectErrorBody(await post(server, partner.apiKey, `${HELPERS}/payouts/po_nope/delay`), 404)
    expectErrorBody(await post(server, partner.apiKey, `${HELPERS}/swaps/sw_nope/expire`), 404)
  })
})

describe("trigger", () => {
  const TRIGGER = `${HELPERS}/events/trigger`
  const produced = EventType.literals.filter((type) => type !== "endpoint.ping")

  it.for(produced)("%s: one event of that type, listed under it", async (type, { server, partner }) => {
    const answer = await post(server, partner.apiKey, TRIGGER, { type })
    expect(answer.status, answer.text).toBe(200)
    const triggered = answer.body as TriggeredEvent
    expect(triggered).toEqual({ type, eventId: expect.stringMatching(/^evt_/), resourceId: expect.any(String) })
    const event = await call(server, `/api/integrations/events/${triggered.eventId}`, { apiKey: partner.apiKey })
    expect(event.status, event.text).toBe(200)
    expect(event.body).toMatchObject({ id: triggered.eventId, type })
    const listed = await call(server, `/api/integrations/events?type=${type}&limit=100`, { apiKey: partner.apiKey })
    expect(listed.status, listed.text).toBe(200)
    expect((listed.body.items as ReadonlyArray<{ id: string }>).map((item) => item.id)).toContain(triggered.eventId)
    // the caller's alone
    expect((await call(server, `/api/integrations/events/${triggered.eventId}`, { apiKey: otherKey })).status).toBe(404)
  })

  it("endpoint.ping pings the integration's endpoint, and needs one", async ({ server }) => {
    const { apiKey: lonely } = await server.newIntegration()
    expectErrorBody(await post(server, lonely, TRIGGER, { type: "endpoint.ping" }), 409)
    const registered = await post(server, lonely, "/api/integrations/webhook-endpoints", {
      url: "https://example.com/hooks"
    })
    expect(registered.status, registered.text).toBe(201)
    const answer = await post(server, lonely, TRIGGER, { type: "endpoint.ping" })
    expect(answer.status, answer.text).toBe(200)
    expect(answer.body).toMatchObject({ type: "endpoint.ping", resourceId: registered.body.endpointId })
  })

  it("an unknown type is one 400 naming every type", async ({ server, partner }) => {
    const answer = await post(server, partner.apiKey, TRIGGER, { type: "payout.exploded" })
    expect(expectErrorBody(answer, 400).error).toBe(
      `invalid request: type: must be one of ${
        EventType.literals.map((type) => `"${type}"`).join(", ")
      }, actual "payout.exploded"`
    )
  })
})
