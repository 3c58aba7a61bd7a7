import { type CreatePayoutRequest, type FeeLeg, UserAddress } from "@cop-integrations/contracts"
import { BigDecimal, Effect } from "effect"
import { decodeFunctionData, erc20Abi, getAddress } from "viem"
import { describe, expect } from "vitest"
import { httpTest } from "../support/fixture.ts"
import {
  BREB,
  countPayouts,
  decodePayout,
  expectBadRequest,
  expectedPayout,
  expectError,
  fixed,
  newAddress,
  newPartner,
  type Partner,
  payoutBody,
  sql,
  unitsOf
} from "../support/flows.ts"
import { withClient } from "../support/server.ts"

const it = httpTest()

/** The same body, typed as the contract's request for the typed client. */
const clientPayload = (user: `0x${string}`, destinationCop: string): CreatePayoutRequest => {
  const { accountOwnerName, breBKey, userAddress } = payoutBody(user)
  return { accountOwnerName, breBKey, destinationCop, userAddress: UserAddress.make(userAddress) }
}

const legOf = (legs: ReadonlyArray<FeeLeg>, code: FeeLeg["code"]): FeeLeg => {
  const found = legs.filter((leg) => leg.code === code)
  expect(found, `exactly one ${code} leg`).toHaveLength(1)
  return found[0]!
}

describe("POST /payouts: the prepared payout", () => {
  it("returns 201 with a Payout whose amounts follow the DESIGN formulas", async ({ server, partner, user }) => {
    for (const destinationCop of ["250000", "7880.41", "4000000.55", "123456.78"]) {
      const created = await partner.createPayout(payoutBody(user, { destinationCop }))
      expect(created.status, created.text).toBe(201)
      const payout = decodePayout(created.json)
      const expected = expectedPayout(destinationCop, server.config)
      const decimals = server.config.tokenDecimals

      expect(payout.status).toBe("awaiting_deposit")
      expect(payout.fromToken).toBe("USDC")
      expect(payout.txHash).toBeNull()
      expect(payout.deposit.amount).toBe(expected.wire.deposit)
      expect(payout.sourceAmount).toBe(expected.wire.totalPaid)
      expect(payout.receipt.totalPaid).toEqual({ amount: expected.wire.totalPaid, currency: "USD" })

      expect(payout.fees.map((leg) => leg.code).sort()).toEqual(["bridge", "bridge_fx", "copby"])
      expect(payout.fees.every((leg) => leg.status === "quoted")).toBe(true)
      expect(legOf(payout.fees, "bridge").amountUsd).toBe(expected.wire.bridge)
      expect(legOf(payout.fees, "bridge_fx").amountUsd).toBe(expected.wire.bridgeFx)
      const copby = legOf(payout.fees, "copby")
      expect(copby.amountUsd).toBe(expected.wire.serviceFee)
      expect(getAddress(copby.to ?? "")).toBe(getAddress(server.config.feeWalletAddress))
      expect(payout.receipt.feesItemized).toEqual(payout.fees)

      // T = X + F, checked on the wire strings themselves
      expect(unitsOf(payout.sourceAmount, decimals)).toBe(
        unitsOf(payout.deposit.amount, decimals) + unitsOf(copby.amountUsd, decimals)
      )

      const effective = payout.quote.effectiveUsdCop ?? ""
      expect(unitsOf(effective, 6)).toBe(unitsOf(expected.wire.effectiveUsdCop, 6))
      expect(payout.quote.display).toBe(expected.wire.display)
      expect(payout.receipt.exchangeRate.effectiveUsdCop).toBe(payout.quote.effectiveUsdCop)
      expect(payout.receipt.exchangeRate.display).toBe(payout.quote.display)
      const sell = payout.receipt.exchangeRate.sellRateUsdCop ?? ""
      expect(BigDecimal.equals(BigDecimal.fromStringUnsafe(sell), server.config.mockSellRate)).toBe(true)

      expect(payout.receipt.commission.displayCurrency).toBe("USD")
      expect(payout.receipt.commission.displayAmount).toBe(expected.wire.commissionDisplayAmount)

      expect(unitsOf(payout.receipt.totalReceived.amount, 2)).toBe(unitsOf(destinationCop, 2))
      expect(payout.receipt.totalReceived.currency).toBe("COP")
      expect(unitsOf(payout.destinationCop, 2)).toBe(unitsOf(destinationCop, 2))
    }
  })

  it("keeps the receipt invariants (REQ-INT-RCPT-01)", async ({ partner, user }) => {
    for (const breBKey of ["@maria2024", "3001234567", "maria.perez@example.com", "1020304050"]) {
      const payout = await partner.payout(user, { breBKey, accountOwnerName: "Maria Perez" })
      const receipt = payout.receipt
      expect(receipt.title.trim().length).toBeGreaterThan(0)
      expect(receipt.transactionType).toBe("withdrawal")
      expect(receipt.payoutId).toBe(payout.payoutId)
      expect(receipt.status).toBe(payout.status)
      expect(receipt.completedAt).toBeNull()
      expect(receipt.commission.mode).toBe("included_in_rate")
      expect(receipt.totalPaid.currency).toBe("USD")
      expect(receipt.totalReceived.currency).toBe("COP")
      expect(receipt.breBKeyLast4).toBe(breBKey.slice(-4))
      const masked = receipt.breBKey ?? ""
      expect(masked.endsWith(breBKey.slice(-4))).toBe(true)
      const hidden = masked.slice(0, -4)
      expect(hidden.length).toBeGreaterThan(0)
      expect(hidden).toMatch(/^[^A-Za-z0-9@.+]+$/)
      expect(masked).not.toContain(breBKey.slice(0, -4))
      expect(payout.destinationPreview.accountOwnerName).toBe("Maria Perez")
      expect(receipt.beneficiaryName).toBe("Maria Perez")
    }
  })

  it("prepares ERC-20 transfers of X to the deposit address and F to the fee wallet", async ({ server, partner, user }) => {
    const payout = await partner.payout(user, { destinationCop: "987654.32" })
    const expected = expectedPayout("987654.32", server.config)
    const token = getAddress(server.config.tokenAddress)

    for (const tx of [payout.transaction, payout.feeTransaction]) {
      expect(getAddress(tx.to)).toBe(token)
      expect(tx.value).toBe("0")
      expect(tx.approvalTarget).toBeNull()
    }
    const deposit = decodeFunctionData({ abi: erc20Abi, data: payout.transaction.data as `0x${string}` })
    expect(deposit.functionName).toBe("transfer")
    expect(deposit.args).toEqual([getAddress(payout.deposit.address), expected.deposit])
    const fee = decodeFunctionData({ abi: erc20Abi, data: payout.feeTransaction.data as `0x${string}` })
    expect(fee.functionName).toBe("transfer")
    expect(fee.args).toEqual([getAddress(server.config.feeWalletAddress), expected.serviceFee])
  })

  it("is what the typed client gets too", async ({ server, partner, user }) => {
    const payout = await withClient(
      server.baseUrl,
      partner.apiKey,
      (client) => client.breb.createPayout({ payload: clientPayload(user, "50000"), headers: {} })
    )
    expect(payout.sourceAmount).toBe(expectedPayout("50000", server.config).wire.totalPaid)
    const fetched = await partner.getPayout(payout.payoutId)
    expect(decodePayout(fetched.json)).toEqual(payout)
  })
})

describe("POST /payouts: validation (400 naming the field)", () => {
  const expectRejected = async (
    partner: Partner,
    user: `0x${string}`,
    field: string,
    overrides: Record<string, unknown>
  ) => {
    const wire = await partner.createPayout({ ...payoutBody(user), ...overrides })
    expectBadRequest(wire, field)
  }

  it("rejects userAddress that is not EIP-55 checksummed", async ({ partner, user }) => {
    await expectRejected(partner, user, "userAddress", { userAddress: user.toLowerCase() })
    const flipped = user.replace(/[a-f]/, (c) => c.toUpperCase())
    expect(flipped).not.toBe(user)
    await expectRejected(partner, user, "userAddress", { userAddress: flipped })
    await expectRejected(partner, user, "userAddress", { userAddress: "0x1234" })
  })

  it("rejects destinationCop that is not a plain positive amount with at most 2 decimals", async ({ partner, user }) => {
    for (const destinationCop of ["1e5", "-1", "1.234", " 100", "", "0", "0.00", "100.", ".5", "0100", 250000]) {
      await expectRejected(partner, user, "destinationCop", { destinationCop })
    }
  })

  it("rejects destinationCop above the Bre-B cap and accepts the cap itself", async ({ server, partner, user }) => {
    const capCents = unitsOf(BigDecimal.format(server.config.brebMaxCop), 2)
    await expectRejected(partner, user, "destinationCop", { destinationCop: fixed(capCents + 1n, 2) })
    const atCap = await partner.createPayout(payoutBody(user, { destinationCop: fixed(capCents, 2) }))
    expect(atCap.status, atCap.text).toBe(201)
  })

  it("accepts every Bre-B key form and rejects anything else", async ({ partner, user }) => {
    for (const breBKey of ["@alias", "3001234567", "+573001234567", "maria@example.com", "12345", "123456789012345"]) {
      const wire = await partner.createPayout(payoutBody(user, { breBKey, destinationCop: "10000" }))
      expect(wire.status, `${breBKey}: ${wire.text}`).toBe(201)
    }
    for (const breBKey of ["hello", "@", "12", "@toolongaliasxxxxxxxxxxx", "maria @example.com", "+57 3001234567"]) {
      await expectRejected(partner, user, "breBKey", { breBKey })
    }
  })

  it("rejects missing fields, an empty accountOwnerName and an unknown fromToken", async ({ partner, user }) => {
    for (const field of ["userAddress", "destinationCop", "breBKey", "accountOwnerName"]) {
      const body: Record<string, unknown> = { ...payoutBody(user) }
      delete body[field]
      expectBadRequest(await partner.createPayout(body as never), field)
    }
    await expectRejected(partner, user, "accountOwnerName", { accountOwnerName: "" })
    await expectRejected(partner, user, "accountOwnerName", { accountOwnerName: "   " })
    await expectRejected(partner, user, "fromToken", { fromToken: "DAI" })
    const usdc = await partner.createPayout(payoutBody(user, { fromToken: "USDC" }))
    expect(usdc.status, usdc.text).toBe(201)
  })
})

describe("POST /payouts: business errors", () => {
  it("answers needs_kyc for a user without approved KYC", async ({ partner }) => {
    expectError(await partner.createPayout(payoutBody(newAddress())), 409, "needs_kyc")
    // OTP sent but not verified is still not approved
    const pending = newAddress()
    const sent = await partner.post(`${BREB}/kyc/otp/send`, { email: "p@example.com", userAddress: pending })
    expect(sent.status).toBe(200)
    expectError(await partner.createPayout(payoutBody(pending)), 409, "needs_kyc")
  })

  it("answers needs_kyc for a user approved only by another integration", async ({ server, partner }) => {
    const other = await newPartner(server)
    const theirs = await other.approvedUser()
    expectError(await partner.createPayout(payoutBody(theirs)), 409, "needs_kyc")
  })

  it("answers destination_mismatch when the owner name contains mismatch, in any case", async ({ partner, user }) => {
    for (const accountOwnerName of ["mismatch", "MisMatch Co", "ACME MISMATCH SAS"]) {
      expectError(await partner.createPayout(payoutBody(user, { accountOwnerName })), 409, "destination_mismatch")
    }
  })

  it("answers below_minimum under 4000 COP and under the provider minimum", async ({ server, partner, user }) => {
    expectError(await partner.createPayout(payoutBody(user, { destinationCop: "3999.99" })), 409, "below_minimum")
    // the provider must get X >= 2 USD: X = D / (0.995 S) crosses 2 near D = 2 · 0.995 · S
    const S = server.config.mockSellRate
    const two = 2n * 10n ** BigInt(server.config.tokenDecimals)
    const boundCents = (2n * 995n * S.value * 100n) / (1000n * 10n ** BigInt(S.scale))
    const below = fixed(boundCents - 1n, 2)
    const atOrAbove = fixed(boundCents + 1n, 2)
    expect(unitsOf(below, 2)).toBeGreaterThanOrEqual(400000n)
    expect(expectedPayout(below, server.config).deposit).toBeLessThan(two)
    expect(expectedPayout(atOrAbove, server.config).deposit).toBeGreaterThanOrEqual(two)
    expectError(await partner.createPayout(payoutBody(user, { destinationCop: below })), 409, "below_minimum")
    const accepted = await partner.createPayout(payoutBody(user, { destinationCop: atOrAbove }))
    expect(accepted.status, accepted.text).toBe(201)
  })

  it("ranks needs_kyc above destination_mismatch and below_minimum", async ({ partner, user }) => {
    const stranger = newAddress()
    expectError(await partner.createPayout(payoutBody(stranger, { accountOwnerName: "Mismatch" })), 409, "needs_kyc")
    expectError(await partner.createPayout(payoutBody(stranger, { destinationCop: "100" })), 409, "needs_kyc")
    expectError(
      await partner.createPayout(payoutBody(user, { destinationCop: "100", accountOwnerName: "mismatch" })),
      409,
      "below_minimum"
    )
  })

  it("follows X-Mock-Scenario: market_closed, requote, provider_unavailable", async ({ server, partner, user }) => {
    const before = await countPayouts(server, partner.integrationId)
    const body = payoutBody(user)
    expectError(await partner.createPayout(body, { "x-mock-scenario": "market_closed" }), 409, "mercado_cerrado")
    expectError(await partner.createPayout(body, { "x-mock-scenario": "requote" }), 409, "requote")
    expectError(await partner.createPayout(body, { "x-mock-scenario": "provider_unavailable" }), 503)
    expect(await countPayouts(server, partner.integrationId)).toBe(before)
  })
})

describe("POST /payouts: quoteId", () => {
  const newQuote = async (partner: Partner, destinationCop = "250000") => {
    const quote = await partner.get(`${BREB}/quote`, { destinationCop })
    expect(quote.status, quote.text).toBe(200)
    return (quote.json as { quoteId: string }).quoteId
  }

  it("accepts a fresh quote of this integration", async ({ server, partner, user }) => {
    const quoteId = await newQuote(partner)
    const created = await partner.createPayout(payoutBody(user, { quoteId }))
    expect(created.status, created.text).toBe(201)
    expect(decodePayout(created.json).sourceAmount).toBe(expectedPayout("250000", server.config).wire.totalPaid)
  })

  it("rejects an unknown quoteId, or another integration's, with 400", async ({ server, partner, user }) => {
    expectBadRequest(await partner.createPayout(payoutBody(user, { quoteId: "qt_does_not_exist" })), "quoteId")
    const other = await newPartner(server)
    const theirs = await other.get(`${BREB}/quote`, {})
    const theirQuoteId = (theirs.json as { quoteId: string }).quoteId
    expectBadRequest(await partner.createPayout(payoutBody(user, { quoteId: theirQuoteId })), "quoteId")
  })

  it("a quote with an amount binds it: another destinationCop is 409 requote naming both amounts", async ({ server, partner, user }) => {
    const quoteId = await newQuote(partner, "250000")
    const before = await countPayouts(server, partner.integrationId)
    const message = expectError(
      await partner.createPayout(payoutBody(user, { quoteId, destinationCop: "260000" })),
      409,
      "requote"
    )
    expect(message).toContain("250000.00 COP")
    expect(message).toContain("260000.00 COP")
    expect(message).toContain("destinationCop")
    expect(await countPayouts(server, partner.integrationId)).toBe(before)
    // the same amount written another way is the same amount
    const same = await partner.createPayout(payoutBody(user, { quoteId, destinationCop: "250000.00" }))
    expect(same.status, same.text).toBe(201)
  })

  it("a quote without an amount fixes the rate only: any destinationCop is accepted with it", async ({ server, partner, user }) => {
    const rateOnly = await partner.get(`${BREB}/quote`, {})
    const quoteId = (rateOnly.json as { quoteId: string }).quoteId
    for (const destinationCop of ["250000", "260000"]) {
      const created = await partner.createPayout(payoutBody(user, { quoteId, destinationCop }))
      expect(created.status, created.text).toBe(201)
      expect(decodePayout(created.json).sourceAmount).toBe(expectedPayout(destinationCop, server.config).wire.totalPaid)
    }
  })

  it("a quote with an amount is for one fromToken: a payout from another token is 409 requote naming both; a rate-only quote serves any", async ({ partner, user }) => {
    const usdcQuote = await newQuote(partner, "250000")
    const message = expectError(
      await partner.createPayout(payoutBody(user, { quoteId: usdcQuote, fromToken: "COPm" })),
      409,
      "requote"
    )
    expect(message).toContain("USDC")
    expect(message).toContain("COPm")
    expect(message).toContain("fromToken")
    const copmQuote = await partner.get(`${BREB}/quote`, { fromToken: "COPm" })
    expect(copmQuote.status, copmQuote.text).toBe(200)
    const quoteId = (copmQuote.json as { quoteId: string }).quoteId
    const fromUsdc = await partner.createPayout(payoutBody(user, { quoteId }))
    expect(fromUsdc.status, fromUsdc.text).toBe(201)
  })

  it("answers requote for an expired quote", async ({ server, partner, user }) => {
    const quoteId = await newQuote(partner)
    const updated = await sql(
      server,
      (q) => q`UPDATE quotes SET expires_at = now() - interval '1 second' WHERE id = ${quoteId} RETURNING id`
    )
    expect(updated).toHaveLength(1)
    expectError(await partner.createPayout(payoutBody(user, { quoteId })), 409, "requote")
  })
})

describe("POST /payouts: Idempotency-Key", () => {
  const key = () => `idem-${crypto.randomUUID()}`

  it("replays the same payout byte for byte for the same key and body", async ({ server, partner, user }) => {
    const idempotencyKey = key()
    const body = payoutBody(user, { destinationCop: "31415.92" })
    const first = await partner.createPayout(body, { "idempotency-key": idempotencyKey })
    expect(first.status, first.text).toBe(201)
    expect(first.headers.get("idempotent-replayed")).toBeNull()
    const before = await countPayouts(server, partner.integrationId)
    // the same JSON with its keys in another order is the same request
    const reordered = Object.fromEntries(Object.entries(body).reverse()) as typeof body
    for (const again of [body, reordered]) {
      const replay = await partner.createPayout(again, { "idempotency-key": idempotencyKey })
      expect(replay.status).toBe(201)
      expect(replay.headers.get("idempotent-replayed")).toBe("true")
      expect(replay.text).toBe(first.text)
    }
    expect(await countPayouts(server, partner.integrationId)).toBe(before)
  })

  it("answers 422 for the same key with a different body", async ({ partner, user }) => {
    const idempotencyKey = key()
    const first = await partner.createPayout(payoutBody(user), { "idempotency-key": idempotencyKey })
    expect(first.status).toBe(201)
    const different = await partner.createPayout(payoutBody(user, { destinationCop: "250001" }), {
      "idempotency-key": idempotencyKey
    })
    expectError(different, 422)
  })

  it("scopes keys per integration", async ({ server, partner, user }) => {
    const idempotencyKey = key()
    const other = await newPartner(server)
    const theirUser = await other.approvedUser(user)
    const mine = await partner.createPayout(payoutBody(user), { "idempotency-key": idempotencyKey })
    const theirs = await other.createPayout(payoutBody(theirUser), { "idempotency-key": idempotencyKey })
    expect(mine.status).toBe(201)
    expect(theirs.status, theirs.text).toBe(201)
    expect(theirs.headers.get("idempotent-replayed")).toBeNull()
    expect(decodePayout(theirs.json).payoutId).not.toBe(decodePayout(mine.json).payoutId)
    expect(await countPayouts(server, other.integrationId)).toBe(1)
    expect((await other.getPayout(decodePayout(mine.json).payoutId)).status).toBe(404)
  })

  it("does not burn the key on a failed create", async ({ partner }) => {
    const idempotencyKey = key()
    const later = newAddress()
    const body = payoutBody(later)
    expectError(await partner.createPayout(body, { "idempotency-key": idempotencyKey }), 409, "needs_kyc")
    await partner.approvedUser(later)
    const created = await partner.createPayout(body, { "idempotency-key": idempotencyKey })
    expect(created.status, created.text).toBe(201)
    expect(created.headers.get("idempotent-replayed")).toBeNull()
    const replay = await partner.createPayout(body, { "idempotency-key": idempotencyKey })
    expect(replay.headers.get("idempotent-replayed")).toBe("true")
    expect(replay.text).toBe(created.text)
  })

  it("rejects a key longer than 255 characters and an empty key", async ({ partner, user }) => {
    expectBadRequest(
      await partner.createPayout(payoutBody(user), { "idempotency-key": "k".repeat(256) }),
      "idempotency-key"
    )
    expectBadRequest(await partner.createPayout(payoutBody(user), { "idempotency-key": "" }), "idempotency-key")
    const unique = key()
    const longest = await partner.createPayout(payoutBody(user), { "idempotency-key": unique.padStart(255, "k") })
    expect(longest.status, longest.text).toBe(201)
  })

  it("keeps the replay under the typed client", async ({ server, partner, user }) => {
    const idempotencyKey = key()
    const payload = clientPayload(user, "77777")
    const [a, b] = await withClient(server.baseUrl, partner.apiKey, (client) =>
      Effect.all([
        client.breb.createPayout({ payload, headers: { "idempotency-key": idempotencyKey } }),
        client.breb.createPayout({ payload, headers: { "idempotency-key": idempotencyKey } })
      ]))
    expect(b).toEqual(a)
  })
})
