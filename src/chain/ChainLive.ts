import { ConfigError, Effect, Layer, Option, Redacted } from "effect"
import { createPublicClient, erc20Abi, getAddress, type Hex, http, parseEventLogs, TransactionReceiptNotFoundError } from "viem"
import { AppConfig } from "../Config.ts"
import { Chain, DepositNotVerified, type TransferCheck } from "./Chain.ts"

export interface ChainLiveOptions {
  readonly rpcUrl: Redacted.Redacted<string>
  readonly chainName: string
  readonly tokenAddress: string
  readonly tokenDecimals: number
}

const sameAddress = (a: string, b: string) => a.toLowerCase() === b.toLowerCase()

/**
 * The chain through a JSON-RPC node (viem). A deposit is verified when its receipt exists, succeeded, was sent
 * by the user, and carries a Transfer of at least the expected amount of the configured token to the expected
 * address (DESIGN §3, live confirm). Every mismatch is a `DepositNotVerified` whose reason names it.
 */
export const makeChainLive = (options: ChainLiveOptions) => {
  const client = createPublicClient({
    transport: http(Redacted.value(options.rpcUrl), { retryCount: 2, timeout: 10_000 }),
    cacheTime: 0
  })
  const tokenAddress = getAddress(options.tokenAddress)
  const notVerified = (reason: string) => new DepositNotVerified({ reason })

  const receiptOf = (txHash: string) =>
    Effect.tryPromise({
      try: () => client.getTransactionReceipt({ hash: txHash as Hex }),
      catch: (error) =>
        error instanceof TransactionReceiptNotFoundError
          ? notVerified(`no mined transaction ${txHash} on ${options.chainName}`)
          : notVerified(`the ${options.chainName} node could not be asked for ${txHash}; retry later`)
    })

  const verifyTransfer = (check: TransferCheck) =>
    Effect.gen(function*() {
      const receipt = yield* receiptOf(check.txHash)
      if (receipt.status !== "success") return yield* Effect.fail(notVerified(`transaction ${check.txHash} reverted`))
      if (!sameAddress(receipt.from, check.from)) {
        return yield* Effect.fail(notVerified(`transaction ${check.txHash} was sent by ${getAddress(receipt.from)}, not ${getAddress(check.from)}`))
      }
      const transfers = parseEventLogs({ abi: erc20Abi, logs: receipt.logs, eventName: "Transfer", strict: true })
        .filter((log) => sameAddress(log.address, tokenAddress) && sameAddress(log.args.to, check.to))
      if (transfers.length === 0) {
        return yield* Effect.fail(notVerified(`transaction ${check.txHash} has no Transfer of the ${options.chainName} token ${tokenAddress} to ${getAddress(check.to)}`))
      }
      const largest = transfers.reduce((max, log) => (log.args.value > max ? log.args.value : max), 0n)
      if (largest < check.minAmountBaseUnits) {
        return yield* Effect.fail(notVerified(
          `transaction ${check.txHash} transfers ${largest} base units to ${getAddress(check.to)}, less than the ${check.minAmountBaseUnits} expected`
        ))
      }
    })

  return Chain.of({
    token: (symbol) => ({ symbol, chain: options.chainName, address: tokenAddress, decimals: options.tokenDecimals }),
    verifyTransfer
  })
}

/** ChainLive from configuration: CHAIN_RPC_URL is required. */
export const ChainLive = Layer.effect(
  Chain,
  Effect.gen(function*() {
    const config = yield* AppConfig
    const rpcUrl = yield* Option.match(config.chainRpcUrl, {
      onNone: () => Effect.fail(ConfigError.MissingData(["CHAIN_RPC_URL"], "the live chain needs a JSON-RPC URL")),
      onSome: Effect.succeed
    })
    return makeChainLive({ rpcUrl, chainName: config.chainName, tokenAddress: config.tokenAddress, tokenDecimals: config.tokenDecimals })
  })
)
