/**
 * Inputs found when the service was attacked: crafted list cursors, loosely parsed numbers and dates, a
 * Bre-B e-mail key with trailing junk, and unknown body fields. Each must be a 400 ErrorBody naming the
 * field and its rule, never a 500 and never silently accepted.
 */
import { describe, expect } from "vitest"
import { httpTest } from "../support/fixture.ts"
import { BREB, expectBadRequest, newAddress, newTxHash, payoutBody, PAYOUTS } from "../support/flows.ts"

const it = httpTest()

const cursorOf = (content: unknown) => Buffer.from(JSON.stringify(content)).toString("base64url")

describe("GET /payouts cursor", () => {
  it("answers a cursor whose timestamp PostgreSQL cannot store with 400 naming cursor, not 500", async ({ partner }) => {
    const crafted = cursorOf({ t: "-271821-04-20T00:00:00.000Z", id: "po_0000000000000000000000" })
    expectBadRequest(await partner.get(PAYOUTS, { cursor: crafted }), "cursor")
  })

  it("rejects cursors that this API never returns", async ({ partner }) => {
    const cursors = [
      cursorOf({ t: "+275760-09-13T00:00:00.000Z", id: "po_0000000000000000000000" }),
      cursorOf({ t: "2026-02-30T00:00:00.000Z", id: "po_0000000000000000000000" }),
      cursorOf({ t: "2026-01-01", id: "po_0000000000000000000000" }),
      cursorOf({ t: "2026-01-01T00:00:00.000Z", id: "" }),
      cursorOf({ t: "2026-01-01T00:00:00.000Z", id: "po_\u0000" }),
      cursorOf({ t: "2026-01-01T00:00:00.000Z", id: "x".repeat(300) }),
      cursorOf({ t: "2026-01-01T00:00:00.000Z", id: "po_0000000000000000000000", extra: 1 })
    ]
    for (const cursor of cursors) {
      const answer = await partner.get(PAYOUTS, { cursor })
      expect(`${Buffer.from(cursor, "base64url").toString()} → ${answer.status}`).toMatch(/→ 400$/)
      expectBadRequest(answer, "cursor")
    }
  })

  it("answers extreme but well-formed cursor timestamps without a 5xx", async ({ partner }) => {
    for (const t of ["0000-01-01T00:00:00.000Z", "0001-01-01T00:00:00.000Z", "9999-12-31T23:59:59.999Z"]) {
      const answer = await partner.get(PAYOUTS, { cursor: cursorOf({ t, id: "po_0000000000000000000000" }) })
      expect(`${t} → ${answer.status}`, answer.text).toMatch(/→ (200|400)$/)
    }
  })
})

describe("GET /events cursor", () => {
  const EVENTS = "/api/integrations/events"

  it("rejects position cursors that this API never returns, and a payouts list refuses one", async ({ partner }) => {
    const cursors = [
      cursorOf({ p: "-1" }),
      cursorOf({ p: "01" }),
      cursorOf({ p: "1".repeat(19) }),
      cursorOf({ p: 5 }),
      cursorOf({ p: "5", extra: 1 }),
      cursorOf({ p: "5", t: "2026-01-01T00:00:00.000Z", id: "evt_x" })
    ]
    for (const cursor of cursors) {
      const answer = await partner.get(EVENTS, { cursor })
      expect(`${Buffer.from(cursor, "base64url").toString()} → ${answer.status}`).toMatch(/→ 400$/)
      expectBadRequest(answer, "cursor")
    }
    expectBadRequest(await partner.get(PAYOUTS, { cursor: cursorOf({ p: "5" }) }), "cursor")
  })

  it("still takes a cursor from before positions (a createdAt and an id)", async ({ partner }) => {
    const answer = await partner.get(EVENTS, { cursor: cursorOf({ t: "2026-01-01T00:00:00.000Z", id: "evt_x" }) })
    expect(answer.status, answer.text).toBe(200)
  })
})

describe("GET /payouts limit and createdFrom", () => {
  it("answers extreme but valid createdFrom instants without a 5xx", async ({ partner }) => {
    for (const createdFrom of ["0000-01-01T00:00:00Z", "0001-01-01T00:30:00+01:00", "9999-12-31T23:59:59-05:00"]) {
      const answer = await partner.get(PAYOUTS, { createdFrom })
      expect(`${createdFrom} → ${answer.status}`, answer.text).toMatch(/→ (200|400)$/)
    }
  })

  it("rejects limit written as an exponent, in hex or with spaces, naming the rule", async ({ partner }) => {
    for (const limit of ["1e2", "0x10", " 100", "100 ", "+5", "0b11", "10.0", "٣"]) {
      const answer = await partner.get(PAYOUTS, { limit })
      expect(`${JSON.stringify(limit)} → ${answer.status}`).toBe(`${JSON.stringify(limit)} → 400`)
      expect(expectBadRequest(answer, "limit")).toMatch(/decimal digits/)
    }
    expect((await partner.get(PAYOUTS, { limit: "100" })).status).toBe(200)
  })

  it("rejects impossible calendar dates and times in createdFrom", async ({ partner }) => {
    for (
      const createdFrom of [
        "2026-02-30",
        "2026-02-30T00:00:00Z",
        "2026-04-31T12:00:00.000Z",
        "2025-02-29T00:00:00Z",
        "2026-01-01T24:00:00Z",
        "2026-01-01T00:00:00+24:00"
      ]
    ) {
      const answer = await partner.get(PAYOUTS, { createdFrom })
      expect(`${createdFrom} → ${answer.status}`).toBe(`${createdFrom} → 400`)
      expectBadRequest(answer, "createdFrom")
    }
    for (const createdFrom of ["2028-02-29T00:00:00Z", "2026-12-31T23:59:59.999Z", "2026-06-30T12:00:00-05:00"]) {
      const answer = await partner.get(PAYOUTS, { createdFrom })
      expect(`${createdFrom} → ${answer.status}`).toBe(`${createdFrom} → 200`)
    }
  })
})

describe("Bre-B key forms", () => {
  it("rejects an e-mail-form key with trailing junk, naming breBKey", async ({ partner }) => {
    for (
      const breBKey of [
        "a@example.com!!",
        "a@exa mple.com",
        "a@@example.com",
        "a@-example.com",
        "a@example..com",
        ".a@example.com"
      ]
    ) {
      const answer = await partner.createPayout(payoutBody(newAddress(), { breBKey }))
      expect(`${breBKey} → ${answer.status}`).toBe(`${breBKey} → 400`)
      expectBadRequest(answer, "breBKey")
    }
  })

  it("still accepts ordinary e-mail keys", async ({ partner }) => {
    const user = await partner.approvedUser()
    for (const breBKey of ["a@example.com", "maria.perez+pagos@mail.example.co", "o'neil@example.com.co"]) {
      const answer = await partner.createPayout(payoutBody(user, { breBKey }))
      expect(`${breBKey} → ${answer.status}`, answer.text).toBe(`${breBKey} → 201`)
    }
  })
})

describe("unknown body fields", () => {
  it("rejects a misspelled quoteId on payout creation instead of creating a payout without its rate lock", async ({ partner }) => {
    const user = await partner.approvedUser()
    const answer = await partner.createPayout({ ...payoutBody(user), quoteID: "q_123" } as never)
    expect(expectBadRequest(answer, "quoteID")).toContain("quoteID: is not a known field")
    const listed = await partner.get(PAYOUTS)
    expect((listed.json as { items: ReadonlyArray<{ userAddress: string }> }).items.map((p) => p.userAddress)).not
      .toContain(user)
  })

  it("rejects unknown fields on confirm, OTP send and OTP verify, naming them", async ({ partner }) => {
    const user = await partner.approvedUser()
    const payout = await partner.payout(user)
    const cases: ReadonlyArray<readonly [string, Record<string, unknown>, string]> = [
      [`${PAYOUTS}/${payout.payoutId}/confirm`, { txHash: newTxHash(), fee_tx_hash: newTxHash() }, "fee_tx_hash"],
      [`${BREB}/kyc/otp/send`, { email: "ana@example.com", userAddress: newAddress(), locale: "es" }, "locale"],
      [`${BREB}/kyc/otp/verify`, { userAddress: user, code: "123456", Code: "123456" }, "Code"]
    ]
    for (const [path, body, field] of cases) {
      expect(expectBadRequest(await partner.post(path, body), field)).toContain(`${field}: is not a known field`)
    }
    // the payout was not confirmed by the rejected request
    expect((await partner.getPayout(payout.payoutId)).json).toMatchObject({ status: "awaiting_deposit", txHash: null })
  })
})
