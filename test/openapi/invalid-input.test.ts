/**
 * What the document promises for invalid input (every 400 is "Invalid input: the message names the field and the
 * rule it breaks"), held against the running service, one request per part of a request. Guards two traps of
 * Effect 4: a request that fails its schema gets an empty 400 unless the server writes the ErrorBody itself, and a
 * number read from text can decode to NaN. The rule texts are the contract's schemas' own messages.
 */
import { describe, expect } from "vitest"
import { httpTest } from "../support/fixture.ts"
import { BREB, expectBadRequest, newAddress, payoutBody, PAYOUTS } from "../support/flows.ts"

const it = httpTest()

const DIGITS = "must be an integer in plain decimal digits (no sign, exponent, hex prefix, leading zeros or spaces)"

describe("invalid input is a 400 ErrorBody naming the field and the rule", () => {
  it("trap: a `limit` that is not a number (Number(\"abc\") is NaN) is refused on every list, naming the rule", async ({ partner }) => {
    for (const path of [PAYOUTS, "/api/integrations/swaps", "/api/integrations/events"]) {
      for (const limit of ["abc", "NaN", "Infinity"]) {
        expect(expectBadRequest(await partner.get(path, { limit }), "limit"), `${path}?limit=${limit}`).toContain(
          `limit: ${DIGITS}`
        )
      }
      expect(expectBadRequest(await partner.get(path, { limit: "0" }), "limit")).toContain(
        "limit: must be between 1 and 500"
      )
      expect((await partner.get(path, { limit: "2" })).status).toBe(200)
    }
  })

  it("trap: a schema failure is never an empty 400, whichever part of the request it is in", async ({ partner }) => {
    // query
    expect(expectBadRequest(await partner.get(PAYOUTS, { createdFrom: "yesterday" }), "createdFrom")).toContain(
      "createdFrom: must be an ISO 8601 timestamp with a time zone, e.g. 2026-11-22T03:19:32.123Z"
    )
    // body
    const user = newAddress()
    expect(expectBadRequest(await partner.createPayout(payoutBody(user, { destinationCop: "1e5" })), "destinationCop"))
      .toContain(
        "destinationCop: must be a plain decimal string with at most 2 decimals (no sign, exponent or spaces)"
      )
    expect(expectBadRequest(await partner.createPayout(payoutBody(user.toLowerCase())), "userAddress")).toContain(
      "userAddress: must be an EIP-55 checksummed address (mixed case, correct checksum)"
    )
    // header
    expect(
      expectBadRequest(await partner.createPayout(payoutBody(user), { "idempotency-key": "" }), "idempotency-key")
    ).toContain("idempotency-key: must not be empty")
    // path
    expectBadRequest(await partner.get(`${PAYOUTS}/${"p".repeat(65)}`), "payoutId")
    // an unknown body field
    expect(
      expectBadRequest(
        await partner.post(`${BREB}/kyc/otp/send`, { email: "a@example.com", userAddress: user, x: 1 }),
        "x"
      )
    ).toContain("x: is not a known field")
  })
})
