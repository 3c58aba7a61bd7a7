/**
 * Payee preview (issue #22, part 4): `POST breb/destinations/preview` verifies a Bre-B key and holder name with the
 * provider before any money moves, and a payout given its `previewId` reuses the verified destination instead of
 * registering it again. Tenant-owned, expiring, bound to the previewed body, rate limited per integration (one budget
 * with payout creation: test/destinations/destination-verification-budget.test.ts), and the full key never reaches a log line.
 *
 * The app runs over the mock ports with the mock provider wrapped to count external-account registrations (and, on
 * demand, to keep destinations per customer as the live provider does).
 */
import { DestinationPreviewResult } from "@cop-integrations/contracts"
import { Effect, Layer, Schema } from "effect"
import { describe, expect } from "vitest"
import { httpTest } from "../support/fixture.ts"
import { mockMode, serverLayerFor } from "../../src/App.ts"
import { PayoutProvider } from "../../src/provider/PayoutProvider.ts"
import { ProviderMock } from "../../src/provider/mock/ProviderMock.ts"
import {
  BREB,
  expectBadRequest,
  expectError,
  newAddress,
  newPartner,
  type Partner,
  sql,
  type Wire
} from "../support/flows.ts"

const PREVIEW = `${BREB}/destinations/preview`
const RATE_LIMIT = 5

const provider = { externalAccountCalls: 0, perCustomer: false }

const CountingProvider = Layer.effect(
  PayoutProvider,
  Effect.map(PayoutProvider, (base) => ({
    ...base,
    get destinationsPerCustomer() {
      return provider.perCustomer
    },
    createExternalAccount: (input: Parameters<typeof base.createExternalAccount>[0]) =>
      Effect.andThen(Effect.sync(() => void provider.externalAccountCalls++), base.createExternalAccount(input))
  }))
).pipe(Layer.provide(ProviderMock))

const it = httpTest({
  captureLogs: true,
  env: { PREVIEW_RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT) },
  app: (config) => {
    const mode = mockMode(config)
    return serverLayerFor(config, { ...mode, ports: Layer.merge(mode.ports, CountingProvider) })
  }
})

const preview = (partner: Partner, body: Record<string, unknown>) => partner.post(PREVIEW, body)

const previewed = (wire: Wire): DestinationPreviewResult => {
  expect(wire.status, wire.text).toBe(200)
  return Schema.decodeUnknownSync(DestinationPreviewResult)(wire.json)
}

const payoutBody = (userAddress: string, overrides: Record<string, unknown> = {}) => ({
  userAddress,
  destinationCop: "250000",
  breBKey: "@maria2024",
  accountOwnerName: "Maria Perez",
  ...overrides
})

describe("POST breb/destinations/preview", () => {
  it("answers match true with the destination as the bank shows it, and an expiring previewId", async ({ server }) => {
    const partner = await newPartner(server)
    const alias = previewed(await preview(partner, { breBKey: "@maria2024", accountOwnerName: "Maria Perez" }))
    expect(alias.match).toBe(true)
    expect(alias.previewId).toMatch(/^pv_[0-9A-Za-z]{22}$/)
    expect(alias.destinationPreview).toEqual({
      accountOwnerName: "Maria Perez",
      bankName: "Banco de Pruebas",
      documentLast4: null
    })
    expect(Date.parse(alias.expiresAt)).toBeGreaterThan(Date.now())

    const document = previewed(await preview(partner, { breBKey: "1020304050", accountOwnerName: "Maria Perez" }))
    expect(document.destinationPreview?.documentLast4).toBe("4050")
  })

  it("answers match false for a holder name the provider does not confirm, revealing nothing about the holder", async ({ server }) => {
    const partner = await newPartner(server)
    const result = previewed(await preview(partner, { breBKey: "@maria2024", accountOwnerName: "Someone mismatch" }))
    expect(result.match).toBe(false)
    expect(result.destinationPreview).toBeNull()
  })

  it("refuses a malformed body with a 400 naming the field", async ({ server }) => {
    const partner = await newPartner(server)
    expectBadRequest(await preview(partner, { breBKey: "not a key", accountOwnerName: "Maria Perez" }), "breBKey")
    expectBadRequest(await preview(partner, { breBKey: "@maria2024", accountOwnerName: "  " }), "accountOwnerName")
    expectBadRequest(
      await preview(partner, { breBKey: "@maria2024", accountOwnerName: "Maria Perez", extra: 1 }),
      "extra"
    )
  })

  it("with a userAddress, needs that user's KYC approved", async ({ server }) => {
    const partner = await newPartner(server)
    const body = { breBKey: "@maria2024", accountOwnerName: "Maria Perez", userAddress: newAddress() }
    expectError(await preview(partner, body), 409, "needs_kyc")
    await partner.approvedUser(body.userAddress)
    expect(previewed(await preview(partner, body)).match).toBe(true)
  })

  it("where the provider keeps destinations per customer (live), refuses a preview without userAddress as needs_kyc", async ({ server }) => {
    const partner = await newPartner(server)
    provider.perCustomer = true
    try {
      const message = expectError(
        await preview(partner, { breBKey: "@maria2024", accountOwnerName: "Maria Perez" }),
        409,
        "needs_kyc"
      )
      expect(message).toContain("userAddress")
    } finally {
      provider.perCustomer = false
    }
  })

  it(`is limited to PREVIEW_RATE_LIMIT_PER_MINUTE (${RATE_LIMIT}) per integration: then 429 with Retry-After`, async ({ server }) => {
    const [limited, other] = [await newPartner(server), await newPartner(server)]
    const body = { breBKey: "@maria2024", accountOwnerName: "Maria Perez" }
    for (let i = 0; i < RATE_LIMIT; i++) previewed(await preview(limited, body))
    const refused = await preview(limited, body)
    expect(expectError(refused, 429)).toContain(`destination verifications are limited to ${RATE_LIMIT} a minute`)
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
    // another integration's budget is its own
    previewed(await preview(other, body))
  })

  it("never logs the full Bre-B key: the preview's log line carries it masked", async ({ server }) => {
    const partner = await newPartner(server)
    const key = "3157779911"
    const result = previewed(await preview(partner, { breBKey: key, accountOwnerName: "Maria Perez" }))
    const line = server.logs.find((log) => log.includes(result.previewId))
    expect(line, "the preview is logged with its id").toBeDefined()
    expect(line).toContain("******9911")
    expect(server.logs.filter((log) => log.includes(key))).toEqual([])
  })
})

describe("POST breb/payouts with previewId", () => {
  let partner: Partner
  let user: `0x${string}`

  // A partner each: previews and payouts without a previewId spend one budget (test/destinations/destination-verification-budget.test.ts).
  it.beforeEach(async ({ server }) => {
    partner = await newPartner(server)
    user = await partner.approvedUser()
  })

  const newPreview = async (
    body: Record<string, unknown> = { breBKey: "@maria2024", accountOwnerName: "Maria Perez" }
  ) => previewed(await preview(partner, body))

  it("reuses the verified destination: the provider registers the external account once", async () => {
    const before = provider.externalAccountCalls
    const result = await newPreview()
    expect(provider.externalAccountCalls).toBe(before + 1)
    const created = await partner.post(`${BREB}/payouts`, payoutBody(user, { previewId: result.previewId }))
    expect(created.status, created.text).toBe(201)
    expect(provider.externalAccountCalls, "no second registration").toBe(before + 1)
    expect((created.json as { destinationPreview: unknown }).destinationPreview).toEqual(result.destinationPreview)

    // without a previewId the payout registers the destination itself
    const plain = await partner.post(`${BREB}/payouts`, payoutBody(user))
    expect(plain.status, plain.text).toBe(201)
    expect(provider.externalAccountCalls).toBe(before + 2)
  })

  it("answers destination_mismatch for a preview whose match was false", async () => {
    const result = await newPreview({ breBKey: "@maria2024", accountOwnerName: "Maria mismatch" })
    const created = await partner.post(
      `${BREB}/payouts`,
      payoutBody(user, { accountOwnerName: "Maria mismatch", previewId: result.previewId })
    )
    expectError(created, 409, "destination_mismatch")
  })

  it("refuses another integration's previewId as an unknown one (400 naming previewId)", async ({ server }) => {
    const other = await newPartner(server)
    const theirs = previewed(await preview(other, { breBKey: "@maria2024", accountOwnerName: "Maria Perez" }))
    const message = expectBadRequest(
      await partner.post(`${BREB}/payouts`, payoutBody(user, { previewId: theirs.previewId })),
      "previewId"
    )
    const unknown = expectBadRequest(
      await partner.post(`${BREB}/payouts`, payoutBody(user, { previewId: "pv_0000000000000000000000" })),
      "previewId"
    )
    expect(message).toBe(unknown)
  })

  it("refuses an expired previewId", async ({ server }) => {
    const result = await newPreview()
    await sql(
      server,
      (q) =>
        q`UPDATE destination_previews SET expires_at = now() - interval '1 second' WHERE id = ${result.previewId} RETURNING id`
    )
    const message = expectBadRequest(
      await partner.post(`${BREB}/payouts`, payoutBody(user, { previewId: result.previewId })),
      "previewId"
    )
    expect(message).toContain("expired")
  })

  it("refuses a previewId given with another breBKey, accountOwnerName or userAddress than previewed", async () => {
    const result = await newPreview()
    for (const overrides of [{ breBKey: "@other2024" }, { accountOwnerName: "Maria P." }]) {
      expectBadRequest(
        await partner.post(`${BREB}/payouts`, payoutBody(user, { ...overrides, previewId: result.previewId })),
        "previewId"
      )
    }
    const forUser = await newPreview({ breBKey: "@maria2024", accountOwnerName: "Maria Perez", userAddress: user })
    const otherUser = await partner.approvedUser()
    expectBadRequest(
      await partner.post(`${BREB}/payouts`, payoutBody(otherUser, { previewId: forUser.previewId })),
      "previewId"
    )
    const own = await partner.post(`${BREB}/payouts`, payoutBody(user, { previewId: forUser.previewId }))
    expect(own.status, own.text).toBe(201)
  })
})
