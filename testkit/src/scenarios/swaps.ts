/**
 * The Swaps group (R-SWAP-1 to R-SWAP-6): prepare (shape, exact amounts, slippage bound, pair and amount
 * rules), get, list, ownership, Idempotency-Key, and confirm (the txHash is shared with payouts).
 */
import type { SwapIntent } from "@cop-integrations/contracts"
import { Effect } from "effect"
import { ok, rejected } from "../api.ts"
import { check, checkEqual, checkNamesField, checkTimestamps, sameJson } from "../check.ts"
import { show } from "../failure.ts"
import {
  approvedUser,
  confirmPayout,
  createPayout,
  freshAddress,
  idempotencyKey,
  payoutRequest,
  preparedPayout,
  randomTxHash
} from "../fixtures.ts"
import type { Auth } from "../http.ts"
import { type Kit, scenario } from "../scenario.ts"

const DECIMALS = { USDC: 6, COPm: 18 } as const
type Token = keyof typeof DECIMALS

const SHAPE_RULE = "a SwapIntent as the contract describes it (statuses prepared → confirmed, failed or expired)"
const MONEY_RULE =
  "slippageBps bounds minAmountOut = expectedAmountOut × (10000 − slippageBps) / 10000, rounded down in base units"
const HASH_RULE = "txHash uniqueness is shared with payouts (one hash, one use, case-insensitive)"

interface SwapRequest {
  readonly userAddress: string
  readonly fromToken: Token
  readonly toToken: Token
  readonly amountIn: string
  readonly slippageBps?: number
}

const request = (fromToken: Token, amountIn: string, slippageBps?: number): SwapRequest => ({
  userAddress: freshAddress(),
  fromToken,
  toToken: fromToken === "COPm" ? "USDC" : "COPm",
  amountIn,
  ...(slippageBps === undefined ? {} : { slippageBps })
})

/** Base units of a plain decimal string with at most `decimals` fraction digits. */
const units = (text: string, decimals: number): bigint => {
  const [whole = "0", fraction = ""] = text.split(".")
  return BigInt(whole) * 10n ** BigInt(decimals) + BigInt(fraction.padEnd(decimals, "0").slice(0, decimals) || "0")
}

const prepare = (
  kit: Kit,
  body: SwapRequest | Record<string, unknown>,
  options: { readonly auth?: Auth; readonly key?: string } = {}
) =>
  kit.call("prepareSwap", {
    json: body,
    auth: options.auth ?? "primary",
    headers: options.key === undefined ? {} : { "Idempotency-Key": options.key }
  })

const prepared = (kit: Kit, body: SwapRequest, auth: Auth = "primary") =>
  Effect.flatMap(prepare(kit, body, { auth }), (reply) => ok(reply, "201 with a prepared swap"))

const confirmSwap = (kit: Kit, intentId: string, txHash: string, headers: Readonly<Record<string, string>> = {}) =>
  kit.call("confirmSwap", { path: { intentId }, json: { txHash }, headers })

const checkPrepared = (intent: SwapIntent, body: SwapRequest) =>
  Effect.gen(function*() {
    yield* checkEqual("a prepared swap is `prepared`, not yet confirmed", [intent.status, intent.txHash], [
      "prepared",
      null
    ])
    yield* checkEqual("the intent is for the pair and user asked", [
      intent.fromToken,
      intent.toToken,
      intent.userAddress
    ], [
      body.fromToken,
      body.toToken,
      body.userAddress
    ])
    yield* checkEqual(
      "amountIn is the amount asked, to the token's decimals",
      String(units(intent.amountIn, DECIMALS[body.fromToken])),
      String(units(body.amountIn, DECIMALS[body.fromToken]))
    )
    yield* checkEqual("slippageBps is the one asked (default 50)", intent.slippageBps, body.slippageBps ?? 50)
    yield* checkEqual("one `swap` fee leg, quoted", intent.fees.map((leg) => [leg.code, leg.status]), [[
      "swap",
      "quoted"
    ]])
    yield* check(intent.transaction.approvalTarget !== null, SHAPE_RULE, {
      expected: "transaction.approvalTarget: the spender to approve for amountIn",
      actual: show(intent.transaction)
    })
    yield* checkTimestamps(SHAPE_RULE, {
      createdAt: intent.createdAt,
      updatedAt: intent.updatedAt,
      expiresAt: intent.expiresAt
    })
    yield* check(Date.parse(intent.expiresAt) > Date.parse(intent.createdAt), SHAPE_RULE, {
      expected: "expiresAt after createdAt",
      actual: `${intent.createdAt} → ${intent.expiresAt}`
    })
    const out = DECIMALS[body.toToken]
    const expected = units(intent.expectedAmountOut, out)
    const bound = (expected * (10_000n - BigInt(intent.slippageBps))) / 10_000n
    yield* check(units(intent.minAmountOut, out) === bound, MONEY_RULE, {
      expected: `minAmountOut ${bound} base units (expectedAmountOut ${expected}, slippageBps ${intent.slippageBps})`,
      actual: `${intent.minAmountOut} (${units(intent.minAmountOut, out)} base units)`
    })
  })

export const swapScenarios = [
  scenario({
    id: "SWAP-001",
    title:
      "prepare answers 201 with a prepared SwapIntent: the pair, amountIn, a quoted swap leg, approvalTarget, expiresAt",
    rules: ["R-SWAP-1"],
    tags: ["swaps"],
    run: (kit) =>
      Effect.forEach(
        [request("COPm", "250000"), request("USDC", "63.45")],
        (body) => Effect.flatMap(prepared(kit, body), (intent) => checkPrepared(intent, body)),
        { discard: true }
      )
  }),
  scenario({
    id: "SWAP-002",
    title: "minAmountOut is expectedAmountOut less slippageBps, rounded down in base units, for every slippage",
    rules: ["R-SWAP-2"],
    tags: ["swaps", "money"],
    run: (kit) =>
      Effect.forEach(
        [
          request("COPm", "1234.567890123456789012", 1),
          request("COPm", "10", 500),
          request("USDC", "0.000001", 50),
          request("USDC", "999.999999", 333)
        ],
        (body) => Effect.flatMap(prepared(kit, body), (intent) => checkPrepared(intent, body)),
        { discard: true }
      )
  }),
  scenario({
    id: "SWAP-003",
    title:
      "one side must be COPm, amountIn has at most the token's decimals and is positive, slippageBps is 1..500: 400 naming the field",
    rules: ["R-SWAP-3"],
    tags: ["swaps", "errors"],
    run: (kit) =>
      Effect.forEach(
        [
          [{ ...request("USDC", "1"), toToken: "USDC" }, "toToken"],
          [{ ...request("COPm", "1"), toToken: "COPm" }, "toToken"],
          [request("USDC", "1.0000001"), "amountIn"],
          [request("COPm", "1.0000000000000000001"), "amountIn"],
          [request("USDC", "0"), "amountIn"],
          [request("USDC", "1", 0), "slippageBps"],
          [request("USDC", "1", 501), "slippageBps"],
          [{ ...request("USDC", "1"), minOut: "1" }, "minOut"]
        ] as const,
        ([body, field]) =>
          Effect.gen(function*() {
            const reply = yield* prepare(kit, body)
            const error = yield* rejected(reply, 400, "none", `${show(body)} is 400`)
            yield* checkNamesField(`the 400 names ${field}`, error, field, reply.exchange)
          }),
        { discard: true }
      )
  }),
  scenario({
    id: "SWAP-004",
    title: "GET returns the swap as prepare answered it; another integration's swap is 404 on GET and on confirm",
    rules: ["R-SWAP-1", "R-TENANT-1"],
    tags: ["swaps", "isolation"],
    requires: { secondKey: true },
    run: (kit) =>
      Effect.gen(function*() {
        const intent = yield* prepared(kit, request("USDC", "5"))
        const mine = yield* kit.call("getSwap", { path: { intentId: intent.intentId } })
        yield* check(sameJson(yield* ok(mine, "the swap"), intent), SHAPE_RULE, {
          expected: "GET answers the intent prepare answered",
          actual: show(mine.exchange.response.body),
          exchange: mine.exchange
        })
        yield* rejected(
          yield* kit.call("getSwap", { path: { intentId: intent.intentId }, auth: "second" }),
          404,
          "none",
          "another integration's swap is 404"
        )
        yield* rejected(
          yield* kit.call("confirmSwap", {
            path: { intentId: intent.intentId },
            json: { txHash: randomTxHash() },
            auth: "second"
          }),
          404,
          "none",
          "another integration cannot confirm this swap"
        )
      })
  }),
  scenario({
    id: "SWAP-005",
    title: "the swap list pages this integration's swaps in createdAt order without gaps or duplicates",
    rules: ["R-LIST-1", "R-TENANT-2"],
    tags: ["swaps", "list"],
    run: (kit) =>
      Effect.gen(function*() {
        const made: Array<string> = []
        for (const amount of ["1", "2", "3"]) made.push((yield* prepared(kit, request("USDC", amount))).intentId)
        const from = (yield* Effect.flatMap(kit.call("getSwap", { path: { intentId: made[0]! } }), (reply) =>
          ok(reply))).createdAt
        const seen: Array<string> = []
        let cursor: string | null | undefined
        for (let page = 0; page < 50 && cursor !== null; page++) {
          const reply = yield* kit.call("listSwaps", {
            query: { createdFrom: from, limit: "2", ...(cursor ? { cursor } : {}) }
          })
          const list = yield* ok(reply, "a page of swaps")
          seen.push(...list.items.map((item) => item.intentId))
          cursor = list.nextCursor
        }
        yield* check(
          made.every((id) => seen.filter((other) => other === id).length === 1),
          "every swap once, keyset-paged",
          {
            expected: `each of ${made.join(", ")} exactly once`,
            actual: seen.join(", ")
          }
        )
      })
  }),
  scenario({
    id: "SWAP-006",
    title: "prepare with an Idempotency-Key replays the same intent for the same body and is 422 for another",
    rules: ["R-IDEM-1", "R-IDEM-2"],
    tags: ["swaps", "idempotency"],
    run: (kit) =>
      Effect.gen(function*() {
        const key = idempotencyKey()
        const body = request("USDC", "12.5")
        const first = yield* Effect.flatMap(prepare(kit, body, { key }), (reply) => ok(reply, "201"))
        const again = yield* prepare(kit, body, { key })
        yield* check(sameJson(yield* ok(again, "the replay"), first), "the same key and body replay the first intent", {
          expected: `intent ${first.intentId} again`,
          actual: show(again.exchange.response.body),
          exchange: again.exchange
        })
        yield* checkEqual(
          "a replay is marked Idempotent-Replayed: true",
          again.exchange.response.headers["idempotent-replayed"],
          "true",
          again.exchange
        )
        yield* rejected(
          yield* prepare(kit, { ...body, amountIn: "12.6" }, { key }),
          422,
          "none",
          "another body under a used key is 422"
        )
      })
  }),
  scenario({
    id: "SWAP-007",
    title:
      "confirm (mock: no receipt check) confirms with the txHash lower-cased and the swap leg verified; again is the same; another hash is 409",
    rules: ["R-SWAP-4"],
    tags: ["swaps", "confirm"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const intent = yield* prepared(kit, request("COPm", "50000"))
        const hash = randomTxHash()
        const reply = yield* confirmSwap(kit, intent.intentId, `0x${hash.slice(2).toUpperCase()}`)
        const confirmed = yield* ok(reply, "200 with the confirmed swap")
        yield* checkEqual("confirmed, with the hash lower-cased", [confirmed.status, confirmed.txHash], [
          "confirmed",
          hash.toLowerCase()
        ], reply.exchange)
        yield* checkEqual(
          "the swap leg is verified",
          confirmed.fees.map((leg) => leg.status),
          ["verified"],
          reply.exchange
        )
        const again = yield* ok(yield* confirmSwap(kit, intent.intentId, hash), "the same confirmation")
        yield* check(sameJson(again, confirmed), "confirming again with the same hash answers it unchanged", {
          expected: show(confirmed),
          actual: show(again)
        })
        yield* rejected(
          yield* confirmSwap(kit, intent.intentId, randomTxHash()),
          409,
          "none",
          "another hash for a confirmed swap is 409"
        )
      })
  }),
  scenario({
    id: "SWAP-008",
    title:
      "a txHash confirms one thing: reused across two swaps, or between a swap and a payout either way, in any case, is 409 tx_hash_reused",
    rules: ["R-TXHASH-1"],
    tags: ["swaps", "confirm", "payout"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const [first, second] = [yield* prepared(kit, request("USDC", "5")), yield* prepared(kit, request("USDC", "6"))]
        const hash = randomTxHash()
        yield* Effect.flatMap(confirmSwap(kit, first.intentId, hash), (reply) => ok(reply, "the first swap confirms"))
        yield* rejected(
          yield* confirmSwap(kit, second.intentId, hash.toUpperCase().replace("0X", "0x")),
          409,
          "tx_hash_reused",
          HASH_RULE
        )
        const payout = yield* preparedPayout(kit)
        yield* rejected(
          yield* kit.call("confirmPayout", { path: { payoutId: payout.payoutId }, json: { txHash: hash } }),
          409,
          "tx_hash_reused",
          HASH_RULE
        )
        const payoutHash = randomTxHash()
        yield* confirmPayout(kit, payout.payoutId, { txHash: payoutHash })
        yield* rejected(yield* confirmSwap(kit, second.intentId, payoutHash), 409, "tx_hash_reused", HASH_RULE)
      })
  }),
  scenario({
    id: "SWAP-009",
    title: "X-Mock-Scenario: requote makes a swap confirm 409 requote",
    rules: ["R-SWAP-4", "R-MOCK-1"],
    tags: ["swaps", "confirm", "errors"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const intent = yield* prepared(kit, request("USDC", "8"))
        yield* rejected(
          yield* confirmSwap(kit, intent.intentId, randomTxHash(), { "X-Mock-Scenario": "requote" }),
          409,
          "requote",
          "the requote scenario on a swap confirm"
        )
      })
  }),
  scenario({
    id: "SWAP-010",
    title:
      "a payout funded from COPm: the same USDC deposit X as from USDC, a swap leg first, the router swap with approvalTarget, totalPaid = X + F + swap leg",
    rules: ["R-SWAP-6"],
    tags: ["swaps", "payout", "money"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const user = yield* approvedUser(kit)
        const fromUsdc = yield* createPayout(kit, payoutRequest(user, { destinationCop: "250000" }))
        const fromCopm = yield* createPayout(kit, payoutRequest(user, { destinationCop: "250000", fromToken: "COPm" }))
        yield* checkEqual("fromToken is COPm", fromCopm.fromToken, "COPm")
        yield* checkEqual("the provider gets the same USDC deposit X whatever the user pays with", [
          fromCopm.deposit.currency,
          fromCopm.deposit.amount
        ], [
          fromUsdc.deposit.currency,
          fromUsdc.deposit.amount
        ])
        yield* checkEqual(
          "the legs: swap, then the provider's and the service's",
          fromCopm.fees.map((leg) => leg.code),
          ["swap", "bridge_fx", "bridge", "copby"]
        )
        yield* check(fromCopm.transaction.approvalTarget !== null, "the swap needs an approval of the COPm it sells", {
          expected: "transaction.approvalTarget set",
          actual: show(fromCopm.transaction)
        })
        const leg = (code: string) => units(fromCopm.fees.find((item) => item.code === code)?.amountUsd ?? "0", 6)
        const total = units(fromCopm.deposit.amount, 6) + leg("copby") + leg("swap")
        yield* checkEqual(
          "receipt.totalPaid (USD) = X + F + the swap leg",
          String(units(fromCopm.receipt.totalPaid.amount, 6)),
          String(total)
        )
        yield* checkEqual(
          "the service fee in USD is the same F",
          fromCopm.fees.at(-1)?.amountUsd,
          fromUsdc.fees.at(-1)?.amountUsd
        )
      })
  }),
  scenario({
    id: "SWAP-011",
    title:
      "GET quote?fromToken=COPm with an amount prices the payout from COPm exactly: the payout created with its quoteId carries the same sourceAmount (COPm), legs, E and display",
    rules: ["R-QUOTE-2"],
    tags: ["swaps", "payout", "quote", "money"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const reply = yield* kit.call("quote", { query: { destinationCop: "250000", fromToken: "COPm" } })
        const quote = yield* ok(reply, "200 Quote for fromToken COPm")
        yield* checkEqual("the quote is for COPm", quote.fromToken, "COPm", reply.exchange)
        yield* checkEqual("a COPm quote itemizes the swap leg first", (quote.fees ?? []).map((leg) => leg.code), [
          "swap",
          "bridge_fx",
          "bridge",
          "copby"
        ], reply.exchange)
        const payout = yield* createPayout(
          kit,
          payoutRequest(yield* approvedUser(kit), {
            destinationCop: "250000",
            fromToken: "COPm",
            quoteId: quote.quoteId
          })
        )
        yield* checkEqual(
          "the payout charges what its quote priced",
          {
            sourceAmount: payout.sourceAmount,
            fees: payout.fees,
            display: payout.quote.display,
            effectiveUsdCop: payout.quote.effectiveUsdCop
          },
          {
            sourceAmount: quote.sourceAmount,
            fees: quote.fees,
            display: quote.display,
            effectiveUsdCop: quote.effectiveUsdCop
          }
        )
      })
  }),
  scenario({
    id: "SWAP-012",
    title: "a COPm amountIn below 1 COPm is 409 below_minimum naming amountIn and the minimum",
    rules: ["R-SWAP-5"],
    tags: ["swaps", "errors", "limits"],
    run: (kit) =>
      Effect.forEach(["0.000001", "0.999999999999999999"], (amountIn) =>
        Effect.gen(function*() {
          const reply = yield* prepare(kit, request("COPm", amountIn))
          const error = yield* rejected(reply, 409, "below_minimum", `${amountIn} COPm is below the minimum swap`)
          yield* checkNamesField(
            "the message names amountIn and its minimum",
            error,
            "amountIn: must be at least 1 COPm",
            reply.exchange
          )
        }), { discard: true })
  })
]
