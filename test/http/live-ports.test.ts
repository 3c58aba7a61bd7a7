import { WebhookTargetsOpen } from "../../src/events/WebhookTargets.ts"
import { TestHelpersNone } from "../../src/testHelpers/TestHelpers.ts"
/**
 * Live mode cannot start yet (no live provider Layers), so its seam is checked at the layer level: the app served
 * over the live variants of the mode ports (OTP codes, requote guard, no demo key) and without the mock's
 * X-Mock-Scenario middleware. The provider, chain and market are still the mock stand-ins; they never see a
 * scenario, because nothing sets one.
 */
import { Effect, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { livePorts, serverLayerFor } from "../../src/App.ts"
import { ChainMock } from "../../src/chain/ChainMock.ts"
import { OtpCodes, OtpCodesLive } from "../../src/kyc/OtpCodes.ts"
import { MailerDisabled } from "../../src/mailer/Mailer.ts"
import { MarketMock } from "../../src/provider/MarketMock.ts"
import { ProviderMock } from "../../src/provider/ProviderMock.ts"
import { RateCacheMock } from "../../src/quotes/RateCacheMock.ts"
import { SwapRouterMock } from "../../src/swaps/SwapRouterMock.ts"
import { BREB, call, newAddress, newPartner, newTxHash, type Partner, payoutBody, sql } from "../support/flows.ts"
import { startTestServer, type TestServer } from "../support/server.ts"

let server: TestServer
let partner: Partner

beforeAll(async () => {
  server = await startTestServer({
    app: (config) =>
      serverLayerFor(config, {
        ports: Layer.mergeAll(livePorts, ProviderMock, ChainMock, SwapRouterMock, MarketMock, RateCacheMock, MailerDisabled, WebhookTargetsOpen),
        testHelpers: TestHelpersNone,
        apiMiddleware: Layer.empty
      })
  })
  partner = await newPartner(server)
})
afterAll(() => server?.close())

describe("OtpCodesLive", () => {
  it("draws 6 random digits and never reveals them", async () => {
    const codes = await Effect.runPromise(
      Effect.provide(Effect.flatMap(OtpCodes, (otp) => Effect.all(Array.from({ length: 20 }, () => otp.next))), OtpCodesLive)
    )
    expect(codes.every(({ code, revealed }) => /^[0-9]{6}$/.test(code) && !revealed)).toBe(true)
    expect(new Set(codes.map(({ code }) => code)).size).toBeGreaterThan(1)
  })
})

describe("the app over the live ports, without the scenario middleware", () => {
  it("sends an OTP without debugCode", async () => {
    const sent = await partner.post(`${BREB}/kyc/otp/send`, { email: "ana@example.com", userAddress: newAddress() })
    expect(sent.status, sent.text).toBe(200)
    expect(Object.keys(sent.json as object).sort()).toEqual(["expiresAt", "userAddress"])
  })

  it("ignores X-Mock-Scenario, known or unknown", async () => {
    for (const scenario of ["market_closed", "provider_unavailable", "requote", "sunny_day"]) {
      const quote = await call(server.baseUrl, partner.apiKey, "GET", `${BREB}/quote`, {
        query: { destinationCop: "250000" },
        headers: { "x-mock-scenario": scenario }
      })
      expect(quote.status, `${scenario}: ${quote.text}`).toBe(200)
    }

    const userAddress = newAddress()
    const sent = await partner.post(`${BREB}/kyc/otp/send`, { email: "ana@example.com", userAddress })
    expect(sent.status, sent.text).toBe(200)
    // The code is unknown here (live codes are never revealed): approve as the provider's webhook would.
    await sql(server, (q) =>
      q`UPDATE customers SET kyc_status = 'approved' WHERE user_address = ${userAddress.toLowerCase()} RETURNING user_address`)

    const created = await partner.createPayout(payoutBody(userAddress), { "x-mock-scenario": "requote" })
    expect(created.status, created.text).toBe(201)
    const { payoutId } = created.json as { payoutId: string }
    const confirmed = await partner.confirm(payoutId, { txHash: newTxHash() }, { "x-mock-scenario": "requote" })
    expect(confirmed.status, confirmed.text).toBe(200)
  })
})
