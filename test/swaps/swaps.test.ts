/**
 * The Swaps group in mock mode over real HTTP: prepare (pairs, exact amounts, slippage, the router call and the
 * approval), get, list, confirm (one txHash, one use, shared with payouts), tenancy and expiry. Expected amounts are
 * computed here with plain bigint arithmetic from the documented formulas, independently of src/.
 */
import { SwapIntent, SwapList } from "@cop-integrations/contracts"
import { Schema } from "effect"
import { decodeFunctionData, erc20Abi, getAddress } from "viem"
import { describe, expect } from "vitest"
import { routerAbi } from "../../src/router/RouterAbi.ts"
import { httpTest } from "../support/fixture.ts"
import {
  BREB,
  expectBadRequest,
  expectError,
  fixed,
  newAddress,
  newPartner,
  newTxHash,
  type Partner,
  sql,
  unitsOf
} from "../support/flows.ts"
import type { TestServer } from "../support/server.ts"

const SWAPS = "/api/integrations/swaps"
const COPM = 18
const USDC = 6
// Test config: 1 USD = 4000 COP mid-market (1 COPm = 1 COP), the mock route costs 0.32 %.
const MID = 4000n
const FEE_BPS = 32n

const it = httpTest({
  captureLogs: true,
  env: { MOCK_USD_COP_MID: "4000", MOCK_SWAP_FEE_BPS: "32", SWAP_TTL_SECONDS: "300" }
})

/** Another integration, for tenancy. */
let other: Partner
it.beforeAll(async ({ server }) => {
  other = await newPartner(server)
})

const errorLogLines = (server: TestServer) => server.logs.filter((line) => JSON.parse(line).logLevel === "ERROR")

const prepare = async (who: Partner, body: Record<string, unknown>) => {
  const answer = await who.post(SWAPS, body)
  expect(answer.status, answer.text).toBe(201)
  return Schema.decodeUnknownSync(SwapIntent)(answer.json)
}

/** COPm → USDC: amountIn / 4000 less 0.32 %, floored to 6 decimals; USDC → COPm: amountIn × 4000 less 0.32 %, floored to 18. */
const expectedOut = (from: "COPm" | "USDC", amountIn: string) =>
  from === "COPm"
    ? (unitsOf(amountIn, COPM) * (10_000n - FEE_BPS)) / (MID * 10_000n * 10n ** 12n)
    : (unitsOf(amountIn, USDC) * MID * 10n ** 12n * (10_000n - FEE_BPS)) / 10_000n

describe("prepare", () => {
  it.for(
    [
      ["COPm", "USDC", "250000", 50],
      ["COPm", "USDC", "1234.567890123456789012", 1],
      ["USDC", "COPm", "63.45", 500],
      ["USDC", "COPm", "0.000001", 50]
    ] as const
  )(
    "%s → %s of %s with %d bps: exact amounts, the router call, the approval",
    async ([fromToken, toToken, amountIn, slippageBps], { server, partner }) => {
      const user = newAddress()
      const intent = await prepare(partner, { userAddress: user, fromToken, toToken, amountIn, slippageBps })
      const outDecimals = toToken === "USDC" ? USDC : COPM
      const inDecimals = fromToken === "USDC" ? USDC : COPM
      const out = expectedOut(fromToken, amountIn)
      const min = (out * (10_000n - BigInt(slippageBps))) / 10_000n
      expect(intent).toMatchObject({
        status: "prepared",
        userAddress: user,
        fromToken,
        toToken,
        amountIn: fixed(unitsOf(amountIn, inDecimals), inDecimals),
        expectedAmountOut: fixed(out, outDecimals),
        minAmountOut: fixed(min, outDecimals),
        slippageBps,
        txHash: null
      })
      expect(intent.fees).toHaveLength(1)
      expect(intent.fees[0]).toMatchObject({ code: "swap", status: "quoted", to: null })
      expect(Date.parse(intent.expiresAt) - Date.parse(intent.createdAt)).toBe(300_000)

      const router = getAddress(server.config.swapRouterAddress)
      expect(intent.transaction).toMatchObject({ to: router, approvalTarget: router, value: "0" })
      const swapCall = decodeFunctionData({ abi: routerAbi, data: intent.transaction.data as `0x${string}` })
      const tokens = { USDC: getAddress(server.config.tokenAddress), COPm: getAddress(server.config.copTokenAddress) }
      expect(swapCall.args).toEqual([tokens[fromToken], tokens[toToken], unitsOf(amountIn, inDecimals), min, user])
      // the mock knows no allowance: the approval of exactly amountIn to the router comes first
      expect(intent.approvalTransaction).toMatchObject({ to: tokens[fromToken], approvalTarget: null, value: "0" })
      const approve = decodeFunctionData({ abi: erc20Abi, data: intent.approvalTransaction!.data as `0x${string}` })
      expect(approve).toEqual({ functionName: "approve", args: [router, unitsOf(amountIn, inDecimals)] })
    }
  )

  it("the swap fee leg is what the route gives up against mid-market, in USD", async ({ partner }) => {
    const intent = await prepare(partner, {
      userAddress: newAddress(),
      fromToken: "COPm",
      toToken: "USDC",
      amountIn: "400000"
    })
    // 400000 COPm = 100 USD at mid-market; the route delivers 99.68: 0.32 USD
    expect(intent.expectedAmountOut).toBe("99.680000")
    expect(intent.fees[0]?.amountUsd).toBe("0.320000")
  })

  it("a COPm amountIn below 1 COPm is 409 below_minimum naming the minimum, without an ERROR log; 1 COPm gets a non-zero minAmountOut", async ({ server, partner }) => {
    const errorsBefore = errorLogLines(server).length
    for (const amountIn of ["0.000001", "0.5", "0.999999999999999999"]) {
      const message = expectError(
        await partner.post(SWAPS, {
          userAddress: newAddress(),
          fromToken: "COPm",
          toToken: "USDC",
          amountIn,
          slippageBps: 500
        }),
        409,
        "below_minimum"
      )
      expect(message).toContain("amountIn: must be at least 1 COPm")
    }
    expect(errorLogLines(server).slice(errorsBefore)).toEqual([])
    const least = await prepare(partner, {
      userAddress: newAddress(),
      fromToken: "COPm",
      toToken: "USDC",
      amountIn: "1",
      slippageBps: 500
    })
    expect(unitsOf(least.minAmountOut, USDC)).toBe((expectedOut("COPm", "1") * 9_500n) / 10_000n)
    expect(unitsOf(least.minAmountOut, USDC) > 0n).toBe(true)
  })

  it.for(
    [
      [{ fromToken: "USDC", toToken: "USDC", amountIn: "1" }, "toToken"],
      [{ fromToken: "DOGE", toToken: "COPm", amountIn: "1" }, "fromToken"],
      [{ fromToken: "COPm", toToken: "USDC", amountIn: "1.1234567890123456789" }, "amountIn"],
      [{ fromToken: "USDC", toToken: "COPm", amountIn: "1.0000001" }, "amountIn"],
      [{ fromToken: "USDC", toToken: "COPm", amountIn: "0" }, "amountIn"],
      [{ fromToken: "USDC", toToken: "COPm", amountIn: "-1" }, "amountIn"],
      [{ fromToken: "USDC", toToken: "COPm", amountIn: "1e3" }, "amountIn"],
      [{ fromToken: "USDC", toToken: "COPm", amountIn: "1", slippageBps: 0 }, "slippageBps"],
      [{ fromToken: "USDC", toToken: "COPm", amountIn: "1", slippageBps: 501 }, "slippageBps"],
      [{ fromToken: "USDC", toToken: "COPm", amountIn: "1", slippageBps: 1.5 }, "slippageBps"],
      [{ fromToken: "USDC", toToken: "COPm", amountIn: "1", minOut: "1" }, "minOut"]
    ] as const
  )("%j is 400 naming %s", async ([body, field], { partner }) => {
    expectBadRequest(await partner.post(SWAPS, { userAddress: newAddress(), ...body }), field)
  })

  it("a userAddress that is not EIP-55 is 400 naming userAddress", async ({ partner }) => {
    expectBadRequest(
      await partner.post(SWAPS, {
        userAddress: newAddress().toLowerCase(),
        fromToken: "USDC",
        toToken: "COPm",
        amountIn: "1"
      }),
      "userAddress"
    )
  })
})

describe("get, list, tenancy", () => {
  it("GET returns the intent to its integration and 404 to another", async ({ partner }) => {
    const intent = await prepare(partner, {
      userAddress: newAddress(),
      fromToken: "USDC",
      toToken: "COPm",
      amountIn: "10"
    })
    const mine = await partner.get(`${SWAPS}/${intent.intentId}`)
    expect(mine.json).toEqual(intent)
    expectError(await other.get(`${SWAPS}/${intent.intentId}`), 404)
    expectError(await other.post(`${SWAPS}/${intent.intentId}/confirm`, { txHash: newTxHash() }), 404)
  })

  it("lists only the caller's swaps, in createdAt order, keyset-paginated", async ({ server }) => {
    const lister = await newPartner(server)
    const made = []
    for (const amountIn of ["1", "2", "3"]) {
      made.push(await prepare(lister, { userAddress: newAddress(), fromToken: "USDC", toToken: "COPm", amountIn }))
    }
    await prepare(other, { userAddress: newAddress(), fromToken: "USDC", toToken: "COPm", amountIn: "4" })
    const first = Schema.decodeUnknownSync(SwapList)((await lister.get(`${SWAPS}?limit=2`)).json)
    expect(first.integrationId).toBe(lister.integrationId)
    expect(first.nextCursor).not.toBeNull()
    const second = Schema.decodeUnknownSync(SwapList)(
      (await lister.get(`${SWAPS}?limit=2&cursor=${first.nextCursor}`)).json
    )
    expect([...first.items, ...second.items].map((item) => item.intentId)).toEqual(made.map((item) => item.intentId))
    expect(second.nextCursor).toBeNull()
    expectBadRequest(await lister.get(`${SWAPS}?limit=501`), "limit")
  })
})

describe("confirm", () => {
  it("confirms with a txHash (mock: no receipt check), the fee leg verified; the same hash again is the same answer", async ({ partner }) => {
    const intent = await prepare(partner, {
      userAddress: newAddress(),
      fromToken: "COPm",
      toToken: "USDC",
      amountIn: "50000"
    })
    const txHash = newTxHash()
    const confirmed = await partner.post(`${SWAPS}/${intent.intentId}/confirm`, {
      txHash: txHash.toUpperCase().replace("0X", "0x")
    })
    expect(confirmed.status, confirmed.text).toBe(200)
    expect(confirmed.json).toMatchObject({ status: "confirmed", txHash, fees: [{ code: "swap", status: "verified" }] })
    const again = await partner.post(`${SWAPS}/${intent.intentId}/confirm`, { txHash })
    expect(again.json).toEqual(confirmed.json)
    expectError(await partner.post(`${SWAPS}/${intent.intentId}/confirm`, { txHash: newTxHash() }), 409)
  })

  it("one hash, one use across swaps and payouts, in any letter case: tx_hash_reused", async ({ partner }) => {
    const txHash = newTxHash()
    const first = await prepare(partner, {
      userAddress: newAddress(),
      fromToken: "USDC",
      toToken: "COPm",
      amountIn: "5"
    })
    const second = await prepare(partner, {
      userAddress: newAddress(),
      fromToken: "USDC",
      toToken: "COPm",
      amountIn: "6"
    })
    expect((await partner.post(`${SWAPS}/${first.intentId}/confirm`, { txHash })).status).toBe(200)
    expectError(
      await partner.post(`${SWAPS}/${second.intentId}/confirm`, { txHash: `0x${txHash.slice(2).toUpperCase()}` }),
      409,
      "tx_hash_reused"
    )
    const user = await partner.approvedUser()
    const payout = await partner.payout(user)
    expectError(await partner.confirm(payout.payoutId, { txHash }), 409, "tx_hash_reused")
    // and a payout's hash cannot confirm a swap
    const payoutHash = newTxHash()
    expect((await partner.confirm(payout.payoutId, { txHash: payoutHash })).status).toBe(200)
    expectError(
      await partner.post(`${SWAPS}/${second.intentId}/confirm`, { txHash: payoutHash }),
      409,
      "tx_hash_reused"
    )
  })

  it("after the quote expired (the sweep marked it expired): requote, and the hash stays free", async ({ server, partner }) => {
    const intent = await prepare(partner, {
      userAddress: newAddress(),
      fromToken: "USDC",
      toToken: "COPm",
      amountIn: "7"
    })
    await sql(
      server,
      (q) => q`UPDATE swap_intents SET expires_at = now() - interval '1 second' WHERE id = ${intent.intentId}`
    )
    const txHash = newTxHash()
    expectError(await partner.post(`${SWAPS}/${intent.intentId}/confirm`, { txHash }), 409, "requote")
    const fresh = await prepare(partner, {
      userAddress: newAddress(),
      fromToken: "USDC",
      toToken: "COPm",
      amountIn: "7"
    })
    expect((await partner.post(`${SWAPS}/${fresh.intentId}/confirm`, { txHash })).status).toBe(200)
  })

  it("X-Mock-Scenario: requote applies to a swap confirm too", async ({ partner }) => {
    const intent = await prepare(partner, {
      userAddress: newAddress(),
      fromToken: "USDC",
      toToken: "COPm",
      amountIn: "8"
    })
    expectError(
      await partner.post(`${SWAPS}/${intent.intentId}/confirm`, { txHash: newTxHash() }, {
        "x-mock-scenario": "requote"
      }),
      409,
      "requote"
    )
  })
})

describe("Idempotency-Key on prepare", () => {
  it("the same key and body replay the same intent byte for byte; another body is 422; concurrent duplicates make one", async ({ server, partner }) => {
    const key = `swap-${newTxHash()}`
    const body = { userAddress: newAddress(), fromToken: "USDC", toToken: "COPm", amountIn: "12.5" }
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => partner.post(SWAPS, body, { "idempotency-key": key }))
    )
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 201))
    expect(new Set(answers.map((answer) => answer.text)).size).toBe(1)
    expect(answers.filter((answer) => answer.headers.get("idempotent-replayed") === "true")).toHaveLength(7)
    const intentId = (answers[0]!.json as { intentId: string }).intentId
    const [count] = await sql<{ n: number }>(
      server,
      (q) => q`SELECT count(*)::int AS n FROM swap_intents WHERE id = ${intentId}`
    )
    expect(count!.n).toBe(1)
    expectError(await partner.post(SWAPS, { ...body, amountIn: "12.6" }, { "idempotency-key": key }), 422)
    // keys are per integration
    expect((await other.post(SWAPS, body, { "idempotency-key": key })).status).toBe(201)
  })

  it("a rejected request leaves the key free", async ({ partner }) => {
    const key = `swap-${newTxHash()}`
    const body = { userAddress: newAddress(), fromToken: "USDC", toToken: "USDC", amountIn: "1" }
    expectBadRequest(await partner.post(SWAPS, body, { "idempotency-key": key }), "toToken")
    expect((await partner.post(SWAPS, { ...body, toToken: "COPm" }, { "idempotency-key": key })).status).toBe(201)
  })
})

describe("a payout funded from COPm (mock mode)", () => {
  // DESIGN's USDC amounts (sell 3960, mid 4000: the test server's defaults) for 250000 COP, then the COPm side:
  // sellAmount is the least COPm whose route's minBuyAmount (50 bps slippage) covers X. The route as the mock computes
  // it: the mid-market value floored to 12 digits (10^-12 USD), less the fee floored to USDC's 6, less the slippage.
  const routeMin = (sell: bigint) =>
    ((((sell / (MID * 10n ** 6n)) * (10_000n - FEE_BPS)) / (10_000n * 10n ** 6n)) * 9_950n) / 10_000n

  it("transaction is the router swap paying the deposit address at least X; the fee is paid in COPm; amounts exact", async ({ server, partner }) => {
    const user = await partner.approvedUser()
    const created = await partner.createPayout({
      userAddress: user,
      destinationCop: "250000",
      breBKey: "@camila2024",
      accountOwnerName: "Camila Rojas",
      fromToken: "COPm"
    })
    expect(created.status, created.text).toBe(201)
    const payout = created.json as any
    const X = unitsOf(payout.deposit.amount, USDC)
    const F = unitsOf(payout.fees.find((leg: any) => leg.code === "copby").amountUsd, USDC)
    expect(F).toBe((X + 99n) / 100n)

    const router = getAddress(server.config.swapRouterAddress)
    expect(payout.transaction).toMatchObject({ to: router, approvalTarget: router, value: "0" })
    const swap = decodeFunctionData({ abi: routerAbi, data: payout.transaction.data })
    const [tokenIn, tokenOut, sellAmount, minOut, recipient] = swap.args as readonly [
      string,
      string,
      bigint,
      bigint,
      string
    ]
    expect([tokenIn, tokenOut, recipient]).toEqual([
      getAddress(server.config.copTokenAddress),
      getAddress(server.config.tokenAddress),
      getAddress(payout.deposit.address)
    ])
    expect(minOut).toBe(routeMin(sellAmount))
    expect(minOut >= X).toBe(true)
    // the least that covers X: one base unit (10^-18 COPm) less would not
    expect(routeMin(sellAmount - 1n) < X).toBe(true)

    // fee: F × 4000 COPm, rounded up to 18 decimals, to the fee wallet, in COPm
    const feeCopm = F * MID * 10n ** 12n
    const fee = decodeFunctionData({ abi: erc20Abi, data: payout.feeTransaction.data })
    expect(payout.feeTransaction.to).toBe(getAddress(server.config.copTokenAddress))
    expect(fee.args).toEqual([getAddress(server.config.feeWalletAddress), feeCopm])

    expect(payout.fromToken).toBe("COPm")
    expect(payout.sourceAmount).toBe(fixed(sellAmount + feeCopm, COPM))
    // swap leg = sellAmount / 4000 − X in USD, half-up to 6 decimals
    const swapLeg = (sellAmount * 10n ** 6n * 2n / (MID * 10n ** 18n) + 1n) / 2n - X
    expect(payout.fees.map((leg: any) => leg.code)).toEqual(["swap", "bridge_fx", "bridge", "copby"])
    expect(unitsOf(payout.fees[0].amountUsd, USDC)).toBe(swapLeg)
    expect(unitsOf(payout.receipt.totalPaid.amount, USDC)).toBe(X + F + swapLeg)

    const confirmed = await partner.confirm(payout.payoutId, { txHash: newTxHash(), feeTxHash: newTxHash() })
    expect(confirmed.status, confirmed.text).toBe(200)
    expect((confirmed.json as any).status).toBe("deposit_confirmed")
  })

  it("GET quote?fromToken=COPm with an amount prices it exactly as the payout created with its quoteId, and one created without it", async ({ partner }) => {
    const user = await partner.approvedUser()
    const quoted = await partner.get(`${BREB}/quote?fromToken=COPm&destinationCop=250000`)
    expect(quoted.status, quoted.text).toBe(200)
    const quote = quoted.json as any
    expect(quote.fromToken).toBe("COPm")
    expect(quote.fees.map((leg: any) => leg.code)).toEqual(["swap", "bridge_fx", "bridge", "copby"])
    expect(quote.sourceAmount).toMatch(/^[0-9]+\.[0-9]{18}$/)
    const body = {
      userAddress: user,
      destinationCop: "250000",
      breBKey: "@camila2024",
      accountOwnerName: "Camila Rojas",
      fromToken: "COPm"
    }
    for (const request of [{ ...body, quoteId: quote.quoteId }, body]) {
      const created = await partner.createPayout(request)
      expect(created.status, created.text).toBe(201)
      const payout = created.json as any
      expect({
        sourceAmount: payout.sourceAmount,
        fees: payout.fees,
        display: payout.quote.display,
        effectiveUsdCop: payout.quote.effectiveUsdCop,
        sellRateUsdCop: payout.receipt.exchangeRate.sellRateUsdCop
      }).toEqual({
        sourceAmount: quote.sourceAmount,
        fees: quote.fees,
        display: quote.display,
        effectiveUsdCop: quote.effectiveUsdCop,
        sellRateUsdCop: quote.sellRateUsdCop
      })
      // the quoted COPm is what the two transactions move: the swap's sellAmount plus the fee transfer
      const swap = decodeFunctionData({ abi: routerAbi, data: payout.transaction.data })
      const fee = decodeFunctionData({ abi: erc20Abi, data: payout.feeTransaction.data })
      expect(fixed((swap.args[2]) + (fee.args[1] as bigint), COPM)).toBe(quote.sourceAmount)
    }
  })

  it("GET quote?fromToken=COPm without an amount fixes the rate only, as for USDC: E = S × 0.995 / 1.01", async ({ partner }) => {
    const copm = await partner.get(`${BREB}/quote?fromToken=COPm`)
    const usdc = await partner.get(`${BREB}/quote`)
    expect(copm.status, copm.text).toBe(200)
    const { cached: _c1, expiresAt: _e1, quoteId, ...rate } = copm.json as any
    const { cached: _c2, expiresAt: _e2, quoteId: _q2, ...usdcRate } = usdc.json as any
    expect(rate).toEqual({ ...usdcRate, fromToken: "COPm" })
    expect(rate.sourceAmount).toBeUndefined()
    const user = await partner.approvedUser()
    const created = await partner.createPayout({
      userAddress: user,
      destinationCop: "123456",
      breBKey: "@camila2024",
      accountOwnerName: "Camila Rojas",
      fromToken: "COPm",
      quoteId
    })
    expect(created.status, created.text).toBe(201)
  })

  it("fromToken outside USDC and COPm is 400 naming fromToken", async ({ partner }) => {
    const user = await partner.approvedUser()
    expectBadRequest(
      await partner.createPayout({
        userAddress: user,
        destinationCop: "250000",
        breBKey: "@camila2024",
        accountOwnerName: "Camila Rojas",
        fromToken: "DAI"
      }),
      "fromToken"
    )
  })
})
