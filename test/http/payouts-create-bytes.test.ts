/**
 * A new payout is presented and serialised once (PayoutRepo.insert), not read back and presented again: the create
 * response, its replay, a later GET (decoded from the stored row) and the `payout.created` event's object must all be
 * the same bytes.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { decodePayout, newPartner, type Partner, payoutBody, sql } from "../support/flows.ts"
import { startTestServer, type TestServer } from "../support/server.ts"

let server: TestServer
let partner: Partner
beforeAll(async () => {
  server = await startTestServer()
  partner = await newPartner(server)
})
afterAll(() => server?.close())

describe("POST /payouts: one presentation, the same bytes everywhere", () => {
  it("create, replay, GET and the event's object are byte-identical", async () => {
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
