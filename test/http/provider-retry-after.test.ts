/**
 * Issue #18 item 18: the provider's 503 carries `Retry-After`, as the database's does (and as the OpenAPI document
 * says of every 503). Mock mode's `X-Mock-Scenario: provider_unavailable` makes the provider unavailable wherever it
 * is called: quote, payout creation (with and without an Idempotency-Key), OTP verify.
 */
import { describe, expect } from "vitest"
import { httpTest } from "../support/fixture.ts"
import { OUTSIDE_RETRY_AFTER_SECONDS } from "../../src/http/ServiceUnavailable.ts"
import { BREB, call, expectErrorBody, newAddress } from "../support/http.ts"

const it = httpTest()

const down = { "x-mock-scenario": "provider_unavailable" }

const expectProviderUnavailable = (answer: Awaited<ReturnType<typeof call>>) => {
  expect(expectErrorBody(answer, 503).error).toContain("payout provider unavailable")
  expect(answer.headers.get("retry-after") ?? "(no Retry-After)").toMatch(/^[1-9][0-9]*$/)
  expect(answer.headers.get("retry-after")).toBe(String(OUTSIDE_RETRY_AFTER_SECONDS))
}

describe("the payout provider's 503", () => {
  it("carries Retry-After on quote, payout creation and OTP verify; a 200 after it carries none", async ({ server, partner }) => {
    const userAddress = newAddress()
    const sent = await call(server, `${BREB}/kyc/otp/send`, {
      apiKey: partner.apiKey,
      body: { email: "retry@example.com", userAddress }
    })
    expect(sent.status, sent.text).toBe(200)
    expectProviderUnavailable(
      await call(server, `${BREB}/kyc/otp/verify`, {
        apiKey: partner.apiKey,
        body: { userAddress, code: sent.body.debugCode },
        headers: down
      })
    )
    const verified = await call(server, `${BREB}/kyc/otp/verify`, {
      apiKey: partner.apiKey,
      body: { userAddress, code: sent.body.debugCode }
    })
    expect(verified.status, verified.text).toBe(200)
    expect(verified.headers.get("retry-after")).toBeNull()

    expectProviderUnavailable(
      await call(server, `${BREB}/quote?destinationCop=250000`, { apiKey: partner.apiKey, headers: down })
    )

    const payout = { userAddress, destinationCop: "250000", breBKey: "@maria2024", accountOwnerName: "Maria Perez" }
    expectProviderUnavailable(
      await call(server, `${BREB}/payouts`, { apiKey: partner.apiKey, body: payout, headers: down })
    )
    expectProviderUnavailable(
      await call(server, `${BREB}/payouts`, {
        apiKey: partner.apiKey,
        body: payout,
        headers: { ...down, "idempotency-key": crypto.randomUUID() }
      })
    )
  })
})
