import { Schema } from "effect"
import { IntegrationId, SwapId } from "./Ids.ts"
import { CreatedTo, FeeLeg, ListCursor, ListLimit, PreparedTx } from "./Payout.ts"
import { Address, DecimalString, greaterThanZero, IsoTimestamp, TxHash, unnamed } from "./Primitives.ts"

export const SwapToken = Schema.Literals(["USDC", "COPm"]).annotate({
  identifier: "SwapToken",
  description: "`COPm` the COP stablecoin (18 decimals), `USDC` (6 decimals); one side of a swap must be COPm"
})
export type SwapToken = typeof SwapToken.Type

export const SwapStatus = Schema.Literals(["prepared", "confirmed", "failed", "expired"]).annotate({
  identifier: "SwapStatus",
  description: "prepared → confirmed | failed | expired. Only moves forward."
})
export type SwapStatus = typeof SwapStatus.Type

/** Largest accepted shortfall of the output, in basis points (default 50). */
export const SlippageBps = Schema.Int.check(
  Schema.isBetween({ minimum: 1, maximum: 500 }, { message: "must be an integer from 1 to 500 (basis points)" })
).annotate({ default: 50 })

export const SwapIntent = Schema.Struct({
  intentId: SwapId,
  status: SwapStatus,
  userAddress: Schema.String,
  fromToken: SwapToken,
  toToken: SwapToken,
  amountIn: DecimalString,
  expectedAmountOut: DecimalString,
  minAmountOut: DecimalString,
  slippageBps: Schema.Finite,
  fees: Schema.Array(FeeLeg),
  transaction: PreparedTx,
  approvalTransaction: Schema.NullOr(PreparedTx),
  txHash: Schema.NullOr(TxHash),
  createdAt: IsoTimestamp,
  updatedAt: IsoTimestamp,
  expiresAt: IsoTimestamp
}).annotate({
  identifier: "SwapIntent",
  description:
    "A swap of the COP stablecoin. `transaction` is the swap to sign (its approvalTarget is the spender the router pulls amountIn through); `approvalTransaction`, when the user's allowance is short, is the ERC-20 approve to send first; `minAmountOut` is expectedAmountOut less slippageBps, rounded down."
})
export type SwapIntent = typeof SwapIntent.Type

/** Every pair of two different tokens, as JSON Schema: what "toToken must differ from fromToken" allows. */
const differentTokens = SwapToken.literals.flatMap((fromToken) =>
  SwapToken.literals.filter((toToken) => toToken !== fromToken).map((toToken) => ({
    type: "object",
    properties: { fromToken: { const: fromToken }, toToken: { const: toToken } }
  }))
)

export const PrepareSwapRequest = Schema.Struct({
  userAddress: Address,
  fromToken: SwapToken,
  toToken: SwapToken,
  amountIn: unnamed(DecimalString.check(greaterThanZero), {
    description:
      "Amount of fromToken to sell, at most the token's decimals; at least 1 COPm (less is 409 `below_minimum`: its output would round to 0 USDC)"
  }),
  slippageBps: Schema.optionalKey(SlippageBps)
}).check(
  Schema.makeFilter<{ readonly fromToken: SwapToken; readonly toToken: SwapToken }>(
    (request) => request.fromToken !== request.toToken || { path: ["toToken"], issue: "must differ from fromToken" },
    { toJsonSchema: () => ({ anyOf: differentTokens }) }
  ).abort()
).annotate({ identifier: "PrepareSwapRequest" })
export type PrepareSwapRequest = typeof PrepareSwapRequest.Type

export const ConfirmSwapRequest = Schema.Struct({
  txHash: TxHash
}).annotate({ identifier: "ConfirmSwapRequest" })
export type ConfirmSwapRequest = typeof ConfirmSwapRequest.Type

export const SwapList = Schema.Struct({
  integrationId: IntegrationId,
  items: Schema.Array(SwapIntent),
  nextCursor: Schema.NullOr(Schema.String)
}).annotate({ identifier: "SwapList" })
export type SwapList = typeof SwapList.Type

export const ListSwapsParams = Schema.Struct({
  createdFrom: Schema.optionalKey(IsoTimestamp),
  createdTo: Schema.optionalKey(CreatedTo),
  status: Schema.optionalKey(unnamed(SwapStatus, {
    description:
      "Only swaps in this status when the page is read (one of SwapStatus). A swap that reaches it after its place in the list was paged past is not listed again: follow status changes with events."
  })),
  limit: Schema.optionalKey(ListLimit),
  cursor: Schema.optionalKey(ListCursor)
})
