/**
 * Swaps in live mode on anvil: a user holding only COPm approves and swaps through the route a 0x-style aggregator
 * returned (its calldata calls the test router), and separately funds a payout with one swap transaction whose USDC
 * goes to the provider's deposit address; the API verifies both onchain. Each rejection: an output below
 * minAmountOut, the wrong recipient, the wrong sender, a hash reused across a swap and a payout. A COPm quote priced
 * through the same router is what the payout created with it charges (and stays firm until the route no longer covers
 * the deposit); a swap below 1 COPm is below_minimum before the router is asked.
 */
import { decodeFunctionData, encodeFunctionData, erc20Abi, getAddress, type Hex } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { routerAbi } from "../../src/router/RouterAbi.ts"
import { waitUntil } from "../simulators/support.ts"
import { BREB, call, expectError, PAYOUTS, unitsOf } from "../support/flows.ts"
import {
  COP_TOKEN_DECIMALS,
  completeLiveKyc,
  type LiveStack,
  newWalletUser,
  startLiveStack,
  TOKEN_DECIMALS,
  type WalletUser
} from "../support/liveStack.ts"

const SWAPS = "/api/integrations/swaps"

let stack: LiveStack
let apiKey: string

beforeAll(async () => {
  stack = await startLiveStack({ server: { captureLogs: true } })
  apiKey = await stack.newLiveKey()
}, 60_000)
afterAll(() => stack?.close())

const post = (path: string, body: unknown) => call(stack.server.baseUrl, apiKey, "POST", path, { body })
const get = (path: string) => call(stack.server.baseUrl, apiKey, "GET", path)

const balanceOf = (token: `0x${string}`, owner: `0x${string}`) =>
  stack.anvil.client.readContract({ address: token, abi: erc20Abi, functionName: "balanceOf", args: [owner] })

/** A user with ETH for gas and `copm` whole COPm, and nothing else. */
const copmHolder = async (copm: bigint) => {
  const user = await newWalletUser(stack)
  await stack.swaps.mintCopm(user.address, copm * 10n ** 18n)
  return user
}

const prepareSwap = async (user: WalletUser, amountIn: string) => {
  const prepared = await post(SWAPS, {
    userAddress: user.address,
    fromToken: "COPm",
    toToken: "USDC",
    amountIn,
    slippageBps: 50
  })
  expect(prepared.status, prepared.text).toBe(201)
  return prepared.json as any
}

const sendRaw = (user: WalletUser, to: `0x${string}`, data: Hex) =>
  user.wallet.sendTransaction({ to, data, value: 0n }).then((hash) =>
    stack.anvil.client.waitForTransactionReceipt({ hash })
  )

describe("swaps in live mode, verified on anvil", () => {
  it("a user holding only COPm approves, swaps exactly the returned transaction, and the confirm verifies it", async () => {
    const user = await copmHolder(200_000n)
    const intent = await prepareSwap(user, "100000")
    expect(intent.transaction.approvalTarget).toBe(getAddress(stack.swaps.router))
    expect(intent.approvalTransaction).not.toBeNull()
    const minOut = unitsOf(intent.minAmountOut, TOKEN_DECIMALS)
    expect(unitsOf(intent.expectedAmountOut, TOKEN_DECIMALS)).toBe(24_920_000n) // 100000 COPm at the router's price

    expect((await user.send(intent.approvalTransaction)).status).toBe("success")
    const swap = await user.send(intent.transaction)
    expect(swap.status).toBe("success")
    expect(await balanceOf(stack.token, user.address)).toBeGreaterThanOrEqual(minOut)

    const confirmed = await post(`${SWAPS}/${intent.intentId}/confirm`, { txHash: swap.transactionHash })
    expect(confirmed.status, confirmed.text).toBe(200)
    expect(confirmed.json).toMatchObject({
      status: "confirmed",
      txHash: swap.transactionHash,
      fees: [{ code: "swap", status: "verified" }]
    })
    // the approval was exactly amountIn and the swap used it up: the next prepare asks for one again, unless the
    // user's allowance (read onchain) already covers it
    expect((await prepareSwap(user, "50000")).approvalTransaction).not.toBeNull()
    await user.wallet.writeContract({
      address: stack.copToken,
      abi: erc20Abi,
      functionName: "approve",
      args: [stack.swaps.router, 10n ** 24n]
    })
      .then((hash) => stack.anvil.client.waitForTransactionReceipt({ hash }))
    expect((await prepareSwap(user, "50000")).approvalTransaction).toBeNull()
  })

  it("funds a payout from COPm with one swap transaction to the deposit address; confirm verifies it and the provider completes it", async () => {
    const user = await copmHolder(400_000n)
    await completeLiveKyc(stack, apiKey, user.address, `copm-${user.address.slice(2, 10).toLowerCase()}@example.com`)
    const created = await post(PAYOUTS, {
      userAddress: user.address,
      destinationCop: "250000",
      breBKey: "@camila2024",
      accountOwnerName: "Camila Rojas",
      fromToken: "COPm"
    })
    expect(created.status, created.text).toBe(201)
    const payout = created.json as any
    expect(payout.transaction.approvalTarget).toBe(getAddress(stack.swaps.router))
    const sellAmount = unitsOf(payout.sourceAmount, COP_TOKEN_DECIMALS)
    const approve = await user.wallet.writeContract({
      address: stack.copToken,
      abi: erc20Abi,
      functionName: "approve",
      args: [stack.swaps.router, sellAmount]
    }).then((hash) => stack.anvil.client.waitForTransactionReceipt({ hash }))
    expect(approve.status).toBe("success")
    const deposit = await user.send(payout.transaction)
    const fee = await user.send(payout.feeTransaction)
    expect([deposit.status, fee.status]).toEqual(["success", "success"])
    expect(await balanceOf(stack.token, getAddress(payout.deposit.address))).toBeGreaterThanOrEqual(
      unitsOf(payout.deposit.amount, TOKEN_DECIMALS)
    )

    const confirmed = await post(`${PAYOUTS}/${payout.payoutId}/confirm`, {
      txHash: deposit.transactionHash,
      feeTxHash: fee.transactionHash
    })
    expect(confirmed.status, confirmed.text).toBe(200)
    expect((confirmed.json as any).fees.find((leg: any) => leg.code === "copby").status).toBe("verified")
    const done = await waitUntil("the COPm-funded payout completed", async () => {
      const current = (await get(`${PAYOUTS}/${payout.payoutId}`)).json as any
      return current.status === "completed" ? current : undefined
    }, { timeoutMs: 15_000 })
    expect(done.fromToken).toBe("COPm")

    // the payout's deposit hash cannot confirm a swap (one hash, one use)
    const intent = await prepareSwap(user, "1000")
    expectError(
      await post(`${SWAPS}/${intent.intentId}/confirm`, { txHash: deposit.transactionHash }),
      409,
      "tx_hash_reused"
    )
  })

  it("refuses an output below minAmountOut, the wrong recipient and the wrong sender, without claiming the hash", async () => {
    const user = await copmHolder(100_000n)
    const intent = await prepareSwap(user, "10000")
    await user.send(intent.approvalTransaction)
    const args = [
      stack.copToken,
      stack.token,
      10_000n * 10n ** 18n,
      unitsOf(intent.minAmountOut, TOKEN_DECIMALS)
    ] as const

    // a router that delivers one unit less than minAmountOut (and does not check it): the confirm does
    await stack.swaps.misbehave(
      unitsOf(intent.expectedAmountOut, TOKEN_DECIMALS) - unitsOf(intent.minAmountOut, TOKEN_DECIMALS) + 1n,
      false
    )
    const short = await user.send(intent.transaction)
    await stack.swaps.misbehave(0n, true)
    expect(short.status).toBe("success")
    expect(expectError(await post(`${SWAPS}/${intent.intentId}/confirm`, { txHash: short.transactionHash }), 409))
      .toContain("less than")

    // the output sent to someone else
    await user.send({ ...intent.approvalTransaction })
    const elsewhere = await sendRaw(user, stack.swaps.router, encodeSwap(...args, getAddress(stack.feeWallet)))
    expect(elsewhere.status).toBe("success")
    expect(expectError(await post(`${SWAPS}/${intent.intentId}/confirm`, { txHash: elsewhere.transactionHash }), 409))
      .toContain("no Transfer")

    // the same swap sent by another wallet, paying the user
    const stranger = await copmHolder(20_000n)
    await stranger.wallet.writeContract({
      address: stack.copToken,
      abi: erc20Abi,
      functionName: "approve",
      args: [stack.swaps.router, args[2]]
    })
      .then((hash) => stack.anvil.client.waitForTransactionReceipt({ hash }))
    const foreign = await sendRaw(stranger, stack.swaps.router, encodeSwap(...args, user.address))
    expect(foreign.status).toBe("success")
    expect(expectError(await post(`${SWAPS}/${intent.intentId}/confirm`, { txHash: foreign.transactionHash }), 409))
      .toContain("sent by")

    // none of them was claimed: the intent is still prepared and confirms with the right transaction
    await user.send({ ...intent.approvalTransaction })
    const right = await user.send(intent.transaction)
    const confirmed = await post(`${SWAPS}/${intent.intentId}/confirm`, { txHash: right.transactionHash })
    expect(confirmed.status, confirmed.text).toBe(200)
  })
})

describe("quotes of COPm payouts in live mode, through the router on anvil", () => {
  const payoutBody = (user: WalletUser) => ({
    userAddress: user.address,
    destinationCop: "250000",
    breBKey: "@camila2024",
    accountOwnerName: "Camila Rojas",
    fromToken: "COPm"
  })
  const priceOf = (json: any) => ({
    sourceAmount: json.sourceAmount,
    fees: json.fees,
    display: json.display ?? json.quote.display,
    effectiveUsdCop: json.effectiveUsdCop ?? json.quote.effectiveUsdCop
  })
  const quoteCopm = async () => {
    const quoted = await get(`${BREB}/quote?fromToken=COPm&destinationCop=250000`)
    expect(quoted.status, quoted.text).toBe(200)
    return quoted.json as any
  }
  /** COPm → USDC at `numerator` USDC base units per 10^19 COPm base units (the fixtures' 2492: 1 COPm = 0.0002492 USDC). */
  const routeAt = (numerator: bigint) => stack.swaps.setRate(stack.copToken, stack.token, numerator, 10n ** 19n)
  const approvedCopmUser = async () => {
    const user = await copmHolder(400_000n)
    await completeLiveKyc(stack, apiKey, user.address, `q-${user.address.slice(2, 10).toLowerCase()}@example.com`)
    return user
  }

  it("GET quote?fromToken=COPm with an amount is what the payout created with its quoteId carries, and the swap delivers X", async () => {
    const user = await approvedCopmUser()
    const quote = await quoteCopm()
    expect(quote.fromToken).toBe("COPm")
    expect(quote.fees.map((leg: any) => leg.code)).toEqual(["swap", "bridge_fx", "bridge", "copby"])
    const created = await post(PAYOUTS, { ...payoutBody(user), quoteId: quote.quoteId })
    expect(created.status, created.text).toBe(201)
    const payout = created.json as any
    expect(priceOf(payout)).toEqual(priceOf(quote))
    const unquoted = await post(PAYOUTS, payoutBody(user))
    expect(priceOf(unquoted.json)).toEqual(priceOf(quote))

    const sellAmount = decodeFunctionData({ abi: routerAbi, data: payout.transaction.data }).args[2]
    await user.wallet.writeContract({
      address: stack.copToken,
      abi: erc20Abi,
      functionName: "approve",
      args: [stack.swaps.router, sellAmount]
    })
      .then((hash) => stack.anvil.client.waitForTransactionReceipt({ hash }))
    expect((await user.send(payout.transaction)).status).toBe("success")
    expect(await balanceOf(stack.token, getAddress(payout.deposit.address))).toBeGreaterThanOrEqual(
      unitsOf(payout.deposit.amount, TOKEN_DECIMALS)
    )
  })

  it("a COPm quote is firm while its COPm still covers the deposit; a route that no longer does is 409 requote", async () => {
    const user = await approvedCopmUser()
    const quote = await quoteCopm()
    try {
      await routeAt(2_500n) // the route got better: the quoted amount is still charged, a fresh price is lower
      const firm = await post(PAYOUTS, { ...payoutBody(user), quoteId: quote.quoteId })
      expect(firm.status, firm.text).toBe(201)
      expect(priceOf(firm.json)).toEqual(priceOf(quote))
      const fresh = await post(PAYOUTS, payoutBody(user))
      expect(unitsOf((fresh.json as any).sourceAmount, COP_TOKEN_DECIMALS)).toBeLessThan(
        unitsOf(quote.sourceAmount, COP_TOKEN_DECIMALS)
      )

      const second = await quoteCopm()
      await routeAt(2_480n) // worse: the quoted COPm would deliver less than X
      const message = expectError(await post(PAYOUTS, { ...payoutBody(user), quoteId: second.quoteId }), 409, "requote")
      expect(message).toContain("swap route")
    } finally {
      await routeAt(2_492n)
    }
  })

  it("a firm COPm quote stays firm when the create is retried after the provider's answer was lost", async () => {
    const user = await approvedCopmUser()
    const quote = await quoteCopm()
    const key = `firm-retry-${quote.quoteId}`
    const keyed = () =>
      call(stack.server.baseUrl, apiKey, "POST", PAYOUTS, {
        body: { ...payoutBody(user), quoteId: quote.quoteId },
        headers: { "idempotency-key": key }
      })
    try {
      // the provider makes the transfer, its answer never arrives (every try): 503, the key kept for the retry
      await fetch(`${stack.sim.url}/__sim/faults/timeouts`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ count: 10, after_processing: true, path: "/v0/transfers" })
      })
      expectError(await keyed(), 503)
      await fetch(`${stack.sim.url}/__sim/faults`, { method: "DELETE" })
      await routeAt(2_500n) // meanwhile the route got better: priced afresh, the payout would cost less COPm
      const retried = await keyed()
      expect(retried.status, retried.text).toBe(201)
      expect(priceOf(retried.json)).toEqual(priceOf(quote))
    } finally {
      await fetch(`${stack.sim.url}/__sim/faults`, { method: "DELETE" })
      await routeAt(2_492n)
    }
  }, 60_000)
})

describe("the least COPm a swap sells, in live mode", () => {
  it("a COPm swap below 1 COPm is 409 below_minimum naming the minimum (the router would give 0 USDC), without an ERROR log", async () => {
    const user = await copmHolder(10n)
    const errorLines = () => stack.server.logs.filter((line) => JSON.parse(line).logLevel === "ERROR").length
    const before = errorLines()
    for (const amountIn of ["0.000001", "0.9"]) {
      const answer = await post(SWAPS, {
        userAddress: user.address,
        fromToken: "COPm",
        toToken: "USDC",
        amountIn,
        slippageBps: 50
      })
      expect(expectError(answer, 409, "below_minimum")).toContain("amountIn: must be at least 1 COPm")
    }
    expect(errorLines()).toBe(before)
    const least = await prepareSwap(user, "1")
    expect(unitsOf(least.minAmountOut, TOKEN_DECIMALS)).toBe((249n * 9_950n) / 10_000n) // 1 COPm → 249 base units at the router's price
  })
})

describe("a swap that reverted", () => {
  it("is `failed` when the user's own swap transaction reverted; the hash stays used and the intent takes no other", async () => {
    const user = await copmHolder(50_000n)
    const intent = await prepareSwap(user, "10000")
    await user.send(intent.approvalTransaction)
    // the router delivers less than minAmountOut and enforces it: the swap reverts ("slippage"); gas set, so it is mined
    await stack.swaps.misbehave(unitsOf(intent.expectedAmountOut, TOKEN_DECIMALS), true)
    const hash = await user.wallet.sendTransaction({
      to: intent.transaction.to,
      data: intent.transaction.data,
      value: 0n,
      gas: 300_000n
    })
    const reverted = await stack.anvil.client.waitForTransactionReceipt({ hash })
    await stack.swaps.misbehave(0n, true)
    expect(reverted.status).toBe("reverted")
    const failed = await post(`${SWAPS}/${intent.intentId}/confirm`, { txHash: hash })
    expect(failed.status, failed.text).toBe(200)
    expect(failed.json).toMatchObject({ status: "failed", txHash: hash })
    expectError(await post(`${SWAPS}/${intent.intentId}/confirm`, { txHash: `0x${"ab".repeat(32)}` }), 409)
    expect((await get(`${SWAPS}/${intent.intentId}`)).json).toMatchObject({ status: "failed" })
  })

  it("a reverted transaction someone else sent does not fail the user's swap (wrong sender, 409)", async () => {
    const user = await copmHolder(50_000n)
    const intent = await prepareSwap(user, "10000")
    const stranger = await copmHolder(1n)
    const hash = await stranger.wallet.sendTransaction({
      to: intent.transaction.to,
      data: intent.transaction.data,
      value: 0n,
      gas: 300_000n
    })
    expect((await stack.anvil.client.waitForTransactionReceipt({ hash })).status).toBe("reverted")
    expect(expectError(await post(`${SWAPS}/${intent.intentId}/confirm`, { txHash: hash }), 409)).toContain("sent by")
    expect((await get(`${SWAPS}/${intent.intentId}`)).json).toMatchObject({ status: "prepared" })
  })
})

const encodeSwap = (
  tokenIn: `0x${string}`,
  tokenOut: `0x${string}`,
  amountIn: bigint,
  minOut: bigint,
  recipient: `0x${string}`
) =>
  encodeFunctionData({ abi: routerAbi, functionName: "swap", args: [tokenIn, tokenOut, amountIn, minOut, recipient] })
