/**
 * A new payout is presented and serialised once (PayoutRepo.insert), not read back and presented again: the create
 * response, its replay, a later GET (decoded from the stored row) and the `payout.created` event's object must all be
 * the same bytes.
 */
import { describe, expect } from "vitest"
import { httpTest } from "../support/fixture.ts"
import { decodePayout, payoutBody, sql } from "../support/flows.ts"

const it = httpTest()

describe("POST /payouts: one presentation, the same bytes everywhere", () => {
  it("create, replay, GET and the event's object are byte-identical", async ({ server, partner }) => {
    const user = await partner.approvedUser()
    const key = `bytes-${crypto.randomUUID()}`
    const created = await partner.createPayout(payoutBody(user), { "idempotency-key": key })
    expect(created.status, created.text).toBe(201)
    const payoutId = decodePayout(created.json).payoutId
    const replay = await partner.createPayout(payoutBody(user), { "idempotency-key": key })
    expect(replay.headers.get("idempotent-replayed")).toBe("true")
    expect(replay.text).toBe(created.text)
    const fetched = await partner.getPayout(payoutId)
    expect(fetched.text).toBe(created.text)
    const [event] = await sql<{ id: string; body: string; created_at: Date }>(
      server,
      (q) => q`SELECT id, body, created_at FROM events WHERE resource_id = ${payoutId} AND type = 'payout.created'`
    )
    expect(event?.body).toBe(
      `{"id":"${event?.id}","type":"payout.created","createdAt":"${event?.created_at.toISOString()}","sequence":1,"data":{"object":${created.text}}}`
    )
  })
})
