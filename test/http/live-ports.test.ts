/**
 * Live mode cannot start yet (no live provider Layers), so its seam is checked at the layer level: the app served
 * over the live variants of the mode ports (OTP codes, no demo key), the live rate cache and txHash claims, and
 * without the mock's X-Mock-Scenario middleware. The provider, chain and market are still the mock stand-ins; they
 * never see a scenario, because nothing sets one.
 */
import { Effect, Layer } from "effect"
import { describe, expect } from "vitest"
import { httpTest } from "../support/fixture.ts"
import { livePorts, serverLayerFor } from "../../src/App.ts"
import { ChainMock } from "../../src/chain/ChainMock.ts"
import { WebhookTargetsStrict } from "../../src/partnerEvents/WebhookTargets.ts"
import { OtpCodes, OtpCodesLive } from "../../src/kyc/OtpCodes.ts"
import { MailerDisabled } from "../../src/kyc/Mailer.ts"
import { MarketMock } from "../../src/market/MarketMock.ts"
import { ProviderMock } from "../../src/provider/mock/ProviderMock.ts"
import { BridgeCallbacks } from "../../src/provider/bridge/BridgeCallbacks.ts"
import { TransferLifecycleMock } from "../../src/provider/mock/TransferLifecycleMock.ts"
import { RateCache } from "../../src/quotes/RateCache.ts"
import { SwapRouterMock } from "../../src/router/SwapRouterMock.ts"
import { TxHashClaims } from "../../src/chain/TxHashClaims.ts"
import { TestHelpersNone } from "../../src/testHelpers/TestHelpers.ts"
import { BREB, call, newAddress, newPartner, newTxHash, payoutBody, sql } from "../support/flows.ts"

/** Live webhook targets over a fake DNS: no test resolves a real name. */
const liveTargets = WebhookTargetsStrict(async (hostname) =>
  hostname === "hooks.partner.example"
    ? [{ address: "93.184.215.14", family: 4 }]
    : [{ address: "127.0.0.1", family: 4 }]
)

const it = httpTest({
  app: (config) =>
    serverLayerFor(config, {
      ports: Layer.mergeAll(
        livePorts,
        ProviderMock,
        BridgeCallbacks,
        ChainMock,
        SwapRouterMock,
        MarketMock,
        MailerDisabled,
        liveTargets
      ),
      outbox: TransferLifecycleMock,
      rateCache: RateCache.Default,
      claims: TxHashClaims.Default,
      testHelpers: TestHelpersNone,
      apiMiddleware: Layer.empty
    })
})

describe("OtpCodesLive", () => {
  it("draws 6 random digits and never reveals them", async () => {
    const codes = await Effect.runPromise(
      Effect.provide(
        Effect.flatMap(OtpCodes, (otp) => Effect.all(Array.from({ length: 20 }, () => otp.next))),
        OtpCodesLive
      )
    )
    expect(codes.every(({ code, revealed }) => /^[0-9]{6}$/.test(code) && !revealed)).toBe(true)
    expect(new Set(codes.map(({ code }) => code)).size).toBeGreaterThan(1)
  })
})

describe("the app over the live ports, without the scenario middleware", () => {
  it("sends an OTP without debugCode", async ({ partner }) => {
    const sent = await partner.post(`${BREB}/kyc/otp/send`, { email: "ana@example.com", userAddress: newAddress() })
    expect(sent.status, sent.text).toBe(200)
    expect(Object.keys(sent.json as object).sort()).toEqual(["expiresAt", "userAddress"])
  })

  it("ignores X-Mock-Scenario, known or unknown", async ({ server, partner }) => {
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
    await sql(
      server,
      (q) =>
        q`UPDATE customers SET kyc_status = 'approved' WHERE user_address = ${userAddress.toLowerCase()} RETURNING user_address`
    )

    const created = await partner.createPayout(payoutBody(userAddress), { "x-mock-scenario": "requote" })
    expect(created.status, created.text).toBe(201)
    const { payoutId } = created.json as { payoutId: string }
    const confirmed = await partner.confirm(payoutId, { txHash: newTxHash() }, { "x-mock-scenario": "requote" })
    expect(confirmed.status, confirmed.text).toBe(200)
  })
})

describe("events and test helpers in live mode", () => {
  it("the test helpers are 404, as if they did not exist", async ({ partner }) => {
    const user = newAddress()
    const advanced = await partner.post(`/api/integrations/test-helpers/payouts/po_whatever/advance`, {
      to: "completed"
    })
    expect(advanced.status, advanced.text).toBe(404)
    expect(advanced.json).toEqual({ error: "test helpers exist only in mock (sandbox) deployments" })
    expect((await partner.post(`/api/integrations/test-helpers/kyc/${user}/reject`, {})).status).toBe(404)
  })

  it("a webhook endpoint must be https to a public address (400 on url)", async ({ server, partner }) => {
    for (
      const [url, rule] of [
        ["http://hooks.partner.example/cop", "must use https in live mode"],
        ["https://127.0.0.1/hooks", "loopback"],
        ["https://169.254.169.254/latest", "link-local"],
        ["https://sneaky.partner.example/hooks", "resolves to a loopback address"]
      ]
    ) {
      const wire = await partner.post(`/api/integrations/webhook-endpoints`, { url })
      expect(wire.status, wire.text).toBe(400)
      expect((wire.json as { error: string }).error).toMatch(new RegExp(`^url: .*${rule}`))
    }
    // accepted, for an integration that has no events (nothing is ever sent to that public address)
    const quiet = await newPartner(server)
    const ok = await quiet.post(`/api/integrations/webhook-endpoints`, { url: "https://hooks.partner.example/cop" })
    expect(ok.status, ok.text).toBe(201)
    const removed = await fetch(
      `${server.baseUrl}/api/integrations/webhook-endpoints/${(ok.json as { endpointId: string }).endpointId}`,
      {
        method: "DELETE",
        headers: { authorization: `Bearer ${quiet.apiKey}` }
      }
    )
    expect(removed.status).toBe(204)
  })
})
