import type { PreparedTx } from "@cop-integrations/contracts"
import { Effect } from "effect"
import { erc20Transfer } from "../chain/Erc20.ts"
import type { TokenInfo } from "../chain/Tokens.ts"
import { toBaseUnits } from "../money/index.ts"
import type { SwapRouter, SwapRouterFailure } from "../router/SwapRouter.ts"
import { fundFromCopm } from "../pricing/CopmFunding.ts"
import type { PayoutPrice } from "../pricing/Pricing.ts"

/** The two transactions the user signs for a priced payout. */
export interface PayoutTransactions {
  readonly transaction: PreparedTx
  readonly feeTransaction: PreparedTx
}

/**
 * The transactions of a priced payout once the provider named its deposit address: from USDC, ERC-20 transfers of X
 * to it and of F to the fee wallet; from COPm, the router swap paying X to it and F in COPm (CopmFunding).
 */
export const fundPayout = (input: {
  readonly price: PayoutPrice
  readonly fromToken: TokenInfo
  readonly usdc: TokenInfo
  readonly user: `0x${string}`
  readonly depositAddress: `0x${string}`
  readonly feeWallet: string
}): Effect.Effect<PayoutTransactions, SwapRouterFailure, SwapRouter> =>
  input.price.copm === undefined
    ? Effect.succeed(
      {
        transaction: erc20Transfer(
          input.usdc.address,
          input.depositAddress,
          toBaseUnits(input.price.usd.amounts.deposit, input.usdc.decimals)
        ),
        feeTransaction: erc20Transfer(
          input.usdc.address,
          input.feeWallet,
          toBaseUnits(input.price.usd.amounts.serviceFee, input.usdc.decimals)
        )
      } satisfies PayoutTransactions
    )
    : fundFromCopm({
      copm: input.fromToken,
      usdc: input.usdc,
      price: input.price.copm,
      user: input.user,
      depositAddress: input.depositAddress,
      feeWallet: input.feeWallet
    })
