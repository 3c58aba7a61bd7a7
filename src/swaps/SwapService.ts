import {
  BadGateway,
  BadRequest,
  BelowMinimum,
  type ConfirmSwapRequest,
  docsPointer,
  type IntegrationId,
  lowerCaseTxHash,
  NotFound,
  type PrepareSwapRequest,
  Requote,
  ServiceUnavailable,
  SwapId,
  type SwapList,
  type SwapStatus,
  type TxHash,
  TxHashReused,
  UserAddress
} from "@cop-integrations/contracts"
import { PgClient } from "@effect/sql-pg"
import { SqlError } from "effect/sql"
import { BigDecimal, Context, Data, Effect, Layer, Option, Result } from "effect"
import { encodeFunctionData, erc20Abi, getAddress } from "viem"
import { Chain } from "../chain/Chain.ts"
import { ConfirmBegun, confirmByTxHash, type ConfirmReleased, keepClaims } from "../chain/ConfirmByTxHash.ts"
import { TxHashClaims } from "../chain/TxHashClaims.ts"
import { type DepositNotMined, type DepositRefused, notVerifiedError, verifyWithRetry } from "../chain/Verification.ts"
import { addSeconds, now } from "../base/Clock.ts"
import { AppConfig } from "../config/Config.ts"
import { PageBudget } from "../db/PageBudget.ts"
import { type IdempotencyKeyInProgress, IdempotencyStore, requestFingerprint } from "../idempotency/IdempotencyStore.ts"
import { newId } from "../base/ids.ts"
import { formatFixed, fromBaseUnits, parsePlainDecimal, toBaseUnits } from "../money/index.ts"
import { filterDigest, instantOf, keysetPage, type ListRequest, rowsFetched } from "../db/Pagination.ts"
import { orProviderFailure } from "../provider/ProviderErrors.ts"
import { RateCache } from "../quotes/RateCache.ts"
import { presentSwap } from "./Present.ts"
import { DEFAULT_SLIPPAGE_BPS, MINIMUM_AMOUNT_IN, minAmountOut, swapFeeUsd } from "../router/SwapMath.ts"
import { SwapRepo } from "./SwapRepo.ts"
import { routerFailure } from "../router/RouterErrors.ts"
import { type NoSwapRoute, SwapRouter } from "../router/SwapRouter.ts"
import type { SwapRow } from "./SwapRow.ts"

export const SWAPS_PATH = "/api/integrations/swaps"

/** The swap is already confirmed with another txHash. */
export class SwapAlreadyConfirmed extends Data.TaggedError("SwapAlreadyConfirmed") {}

/** The swap is in a status (`status`) that no longer takes a confirm. */
export class SwapNotConfirmable extends Data.TaggedError("SwapNotConfirmable")<{ readonly status: SwapStatus }> {}

/** Another confirm of this swap is being verified. */
export class SwapConfirmInProgress extends Data.TaggedError("SwapConfirmInProgress") {}

/** What can refuse a swap's prepare or confirm (a 409 each). */
export type SwapConflict =
  | SwapAlreadyConfirmed
  | SwapNotConfirmable
  | SwapConfirmInProgress
  | ConfirmReleased
  | DepositNotMined
  | DepositRefused
  | NoSwapRoute
  | IdempotencyKeyInProgress

/** A swaps list request: the common list parameters and the swaps' own filter. */
export interface SwapListRequest extends ListRequest {
  readonly status?: SwapStatus | undefined
}

/**
 * The Swaps group: prepare a swap of the COP stablecoin (the router's route, its calldata, an approval when the
 * allowance is short), get, list, and confirm by txHash (claimed like a payout's: one hash, one use).
 */
export class SwapService extends Context.Service<SwapService>()("SwapService", {
  make: Effect.gen(function*() {
    const sql = yield* PgClient.PgClient
    const config = yield* AppConfig
    const chain = yield* Chain
    const router = yield* SwapRouter
    const rateCache = yield* RateCache
    const swaps = yield* SwapRepo
    const claims = yield* TxHashClaims
    const idempotency = yield* IdempotencyStore
    const pageBudget = yield* PageBudget

    const badRequest = (error: string) => Effect.fail(new BadRequest({ error }))

    /** The pair and the amount, checked: 400 naming the field and the rule; 409 below_minimum under the token's minimum. */
    const parse = (request: PrepareSwapRequest) =>
      Effect.gen(function*() {
        if (request.fromToken === request.toToken) return yield* badRequest("toToken: must differ from fromToken")
        if (request.fromToken !== "COPm" && request.toToken !== "COPm") {
          return yield* badRequest("fromToken, toToken: one side of a swap must be the COP stablecoin COPm")
        }
        const from = chain.token(request.fromToken)
        const to = chain.token(request.toToken)
        const amount = parsePlainDecimal(request.amountIn, from.decimals)
        if (Option.isNone(amount)) {
          return yield* badRequest(
            `amountIn: must be a plain decimal with at most ${from.decimals} decimals for ${from.symbol}`
          )
        }
        const sellAmount = toBaseUnits(amount.value, from.decimals)
        if (sellAmount === 0n) return yield* badRequest("amountIn: must be greater than 0")
        const minimum = MINIMUM_AMOUNT_IN[from.symbol]
        if (BigDecimal.isLessThan(amount.value, minimum)) {
          return yield* Effect.fail(
            new BelowMinimum({
              error: `amountIn: must be at least ${
                BigDecimal.format(minimum)
              } ${from.symbol} (a smaller swap's output rounds to nothing)`
            })
          )
        }
        return { from, to, sellAmount, slippageBps: request.slippageBps ?? DEFAULT_SLIPPAGE_BPS }
      })

    const prepare = (integrationId: IntegrationId, request: PrepareSwapRequest, intentId: SwapId) =>
      Effect.gen(function*() {
        const { from, sellAmount, slippageBps, to } = yield* parse(request)
        const user = getAddress(request.userAddress)
        const quote = yield* router.quote({
          sellToken: from,
          buyToken: to,
          sellAmount,
          taker: user,
          recipient: user,
          slippageBps
        }).pipe(
          Effect.mapError(routerFailure)
        )
        const floor = minAmountOut(quote.buyAmount, slippageBps)
        if (quote.buyAmount === 0n || quote.minBuyAmount < floor || quote.minBuyAmount > quote.buyAmount) {
          yield* Effect.logError("swap router's minimum output is outside the slippage bound", {
            buyAmount: String(quote.buyAmount),
            minBuyAmount: String(quote.minBuyAmount),
            slippageBps
          })
          return yield* Effect.fail(
            new BadGateway({ error: "the swap router's route does not respect slippageBps; retry later" })
          )
        }
        const allowance = yield* chain.allowance({ token: from.address, owner: user, spender: quote.allowanceTarget })
          .pipe(
            Effect.mapError((error) => new ServiceUnavailable({ error: error.reason }))
          )
        const { midRate } = yield* orProviderFailure(rateCache.usdCopRates)
        // Its times are the database's at the INSERT (SwapRepo.insert): the list's order is safe to follow.
        const row = (createdAt: Date): SwapRow => ({
          id: intentId,
          integration_id: integrationId,
          status: "prepared",
          user_address: UserAddress.make(user),
          from_token: from.symbol,
          to_token: to.symbol,
          amount_in: formatFixed(fromBaseUnits(sellAmount, from.decimals), from.decimals),
          expected_amount_out: formatFixed(fromBaseUnits(quote.buyAmount, to.decimals), to.decimals),
          min_amount_out: formatFixed(fromBaseUnits(quote.minBuyAmount, to.decimals), to.decimals),
          slippage_bps: slippageBps,
          fee_legs: [{
            code: "swap",
            amountUsd: swapFeeUsd({ from, to, amountIn: sellAmount, expectedOut: quote.buyAmount, midRate }),
            to: null,
            status: "quoted"
          }],
          transaction: {
            approvalTarget: quote.allowanceTarget,
            to: quote.transaction.to,
            data: quote.transaction.data,
            value: String(quote.transaction.value)
          },
          approval_transaction: allowance >= sellAmount ? null : {
            approvalTarget: null,
            to: from.address,
            data: encodeFunctionData({
              abi: erc20Abi,
              functionName: "approve",
              args: [quote.allowanceTarget, sellAmount]
            }),
            value: "0"
          },
          tx_hash: null,
          created_at: createdAt,
          updated_at: createdAt,
          expires_at: addSeconds(createdAt, config.swapTtlSeconds)
        })
        return { integrationId, row }
      })

    const persist = (prepared: { readonly integrationId: IntegrationId; readonly row: (createdAt: Date) => SwapRow }) =>
      Effect.map(
        swaps.insert(prepared.integrationId, prepared.row),
        (stored) => ({ status: 201, body: presentSwap(stored), resourceId: stored.id })
      )

    /**
     * Prepares and stores a swap: the router and the chain are asked before any transaction opens. With an
     * Idempotency-Key, the same semantics as payouts (the key's row records the intent id first).
     */
    const create = Effect.fn("SwapService.create")(function*(input: {
      readonly integrationId: IntegrationId
      readonly request: PrepareSwapRequest
      readonly idempotencyKey: string | undefined
    }) {
      const intentId = newId("sw")
      if (input.idempotencyKey === undefined) {
        const created = yield* Effect.flatMap(prepare(input.integrationId, input.request, intentId), persist)
        return { ...created, replayed: false }
      }
      return yield* idempotency.run(
        {
          integrationId: input.integrationId,
          key: input.idempotencyKey,
          fingerprint: requestFingerprint("POST", SWAPS_PATH, input.request),
          resourceId: intentId,
          providerKey: intentId
        },
        // The key's row keeps the intent id as text (it serves every resource kind): this one or a stopped try's.
        (claim) => prepare(input.integrationId, input.request, SwapId.make(claim.resourceId)),
        persist
      )
    })

    const get = Effect.fn("SwapService.get")(function*(integrationId: IntegrationId, intentId: SwapId) {
      const found = yield* swaps.findOwned(integrationId, intentId)
      if (Option.isNone(found)) return yield* Effect.fail(new NotFound({ error: `no swap ${intentId}` }))
      return presentSwap(found.value)
    })

    const lockOwned = (integrationId: IntegrationId, intentId: SwapId) =>
      Effect.flatMap(
        swaps.lockOwned(integrationId, intentId),
        Option.match({
          onNone: () => Effect.fail(new NotFound({ error: `no swap ${intentId}` })),
          onSome: Effect.succeed
        })
      )

    /** Step 1 of a confirm: lock, check, claim the hash `verifying`. */
    const begin = (integrationId: IntegrationId, intentId: SwapId, txHash: TxHash) =>
      Effect.gen(function*() {
        const row = yield* lockOwned(integrationId, intentId)
        if (row.tx_hash === txHash) return ConfirmBegun.Replay({ row })
        if (row.tx_hash !== null) {
          return yield* Effect.fail(new SwapAlreadyConfirmed())
        }
        if (row.status !== "prepared" && row.status !== "expired") {
          return yield* Effect.fail(new SwapNotConfirmable({ status: row.status }))
        }
        const verifying = yield* claims.verifyingOf("swap", row.id)
        if (verifying.length > 0) return ConfirmBegun.InProgress({ sameHash: verifying.includes(txHash) })
        if (!(yield* claims.claim("swap", row.id, txHash))) {
          return yield* Effect.fail(
            new TxHashReused({
              error: `txHash already confirms another payout or swap (see ${docsPointer("tx_hash_reused")})`
            })
          )
        }
        return ConfirmBegun.Claimed({ row, hashes: [txHash] })
      }).pipe(sql.withTransaction)

    /** Step 3: record it, if the claim is still this confirm's and the swap was mined before it expired. */
    const finalize = (integrationId: IntegrationId, intentId: SwapId, txHash: TxHash, minedAt: Date) =>
      Effect.gen(function*() {
        const row = yield* lockOwned(integrationId, intentId)
        yield* keepClaims(claims, "swap", row.id, [txHash])
        if (minedAt.getTime() > row.expires_at.getTime()) {
          return yield* Effect.fail(
            new Requote({ error: "the swap's quote expired before it was mined: prepare a new swap" })
          )
        }
        const at = yield* now
        const confirmed = yield* swaps.update({
          ...row,
          status: "confirmed",
          tx_hash: txHash,
          updated_at: at,
          fee_legs: row.fee_legs.map((leg) => ({ ...leg, status: "verified" as const }))
        })
        return presentSwap(confirmed)
      }).pipe(sql.withTransaction)

    /** The user's own swap transaction reverted: the intent is `failed` (prepare a new one); the hash stays used. */
    const markFailed = (integrationId: IntegrationId, intentId: SwapId, txHash: TxHash) =>
      Effect.gen(function*() {
        const row = yield* lockOwned(integrationId, intentId)
        yield* keepClaims(claims, "swap", row.id, [txHash])
        return presentSwap(yield* swaps.update({ ...row, status: "failed", tx_hash: txHash, updated_at: yield* now }))
      }).pipe(sql.withTransaction)

    /**
     * The partner reports the swap's txHash. Like a payout's confirm: the hash is claimed in a short transaction,
     * the chain checks outside any transaction that the transaction succeeded, came from the user and delivered at
     * least minAmountOut of toToken to the user (mock mode skips the receipt), then a short transaction records it
     * or the claim is released. The user's own transaction having reverted makes the swap `failed`.
     */
    const confirm = Effect.fn("SwapService.confirm")(function*(
      input: { readonly integrationId: IntegrationId; readonly intentId: SwapId; readonly request: ConfirmSwapRequest }
    ) {
      const txHash = chain.recordedTxHash(lowerCaseTxHash(input.request.txHash), input.intentId)
      return yield* confirmByTxHash({
        begin: begin(input.integrationId, input.intentId, txHash),
        inProgress: () => new SwapConfirmInProgress(),
        replay: presentSwap,
        finish: (row) =>
          Effect.gen(function*() {
            const to = chain.token(row.to_token)
            const verified = yield* Effect.result(verifyWithRetry(chain, {
              token: to.address,
              txHash,
              from: row.user_address,
              to: row.user_address,
              minAmountBaseUnits: toBaseUnits(BigDecimal.fromStringUnsafe(row.min_amount_out), to.decimals)
            }))
            if (Result.isSuccess(verified)) {
              return yield* finalize(input.integrationId, input.intentId, txHash, verified.success.minedAt)
            }
            if (verified.failure.kind === "reverted") {
              return yield* markFailed(input.integrationId, input.intentId, txHash)
            }
            return yield* Effect.fail(notVerifiedError("txHash", verified.failure))
          }),
        release: (row, hashes) => claims.release("swap", row.id, hashes)
      })
    }, Effect.catchIf(SqlError.isSqlError, Effect.die))

    /** A page of the integration's swaps, narrowed by the filters given (all must hold). */
    const list = Effect.fn("SwapService.list")(
      function*(request: SwapListRequest): Effect.fn.Return<SwapList, BadRequest> {
        const digest = filterDigest(
          { status: request.status, createdTo: instantOf(request.createdTo) },
          { createdFrom: instantOf(request.createdFrom) }
        )
        return yield* keysetPage(
          { ...request, filterDigest: digest },
          (page) => swaps.page(page, { status: request.status }),
          presentSwap
        ).pipe(pageBudget.withRows(rowsFetched(request.limit)))
      }
    )

    return { prepare, create, get, confirm, list } as const
  })
}) {
  static readonly Default = Layer.effect(this, this.make)
}
