import { ConfigError, Effect, Layer, Option, Redacted } from "effect"
import { createPublicClient, erc20Abi, getAddress, type Hex, http, parseEventLogs, TransactionReceiptNotFoundError } from "viem"
import { AppConfig } from "../Config.ts"
import { Chain, DepositNotVerified, type NotVerifiedKind, type TransferCheck } from "./Chain.ts"

export interface ChainLiveOptions {
  readonly rpcUrl: Redacted.Redacted<string>
  readonly chainName: string
  readonly tokenAddress: string
  readonly tokenDecimals: number
  /** Blocks a deposit's block must have on top of it, itself included (default 1: mined). */
  readonly confirmations?: number
}

const sameAddress = (a: string, b: string) => a.toLowerCase() === b.toLowerCase()

/**
 * The chain through a JSON-RPC node (viem). A deposit is verified when its receipt exists, succeeded, was sent
 * by the user, carries a Transfer of at least the expected amount of the configured token to the expected
 * address (DESIGN §3, live confirm), and has the required confirmations. Every mismatch is a
 * `DepositNotVerified` whose reason names it.
 */
export const makeChainLive = (options: ChainLiveOptions) => {
  const client = createPublicClient({
    transport: http(Redacted.value(options.rpcUrl), { retryCount: 2, timeout: 10_000 }),
    cacheTime: 0
  })
  const tokenAddress = getAddress(options.tokenAddress)
  const confirmations = BigInt(options.confirmations ?? 1)
  const notVerified = (reason: string, kind: NotVerifiedKind = "mismatch") => new DepositNotVerified({ kind, reason })
  const ask = <A>(what: string, call: () => Promise<A>) =>
    Effect.tryPromise({
      try: call,
      catch: () => notVerified(`the ${options.chainName} node could not be asked for ${what}; retry later`, "unreachable")
    })

  const receiptOf = (txHash: string) =>
    Effect.tryPromise({
      try: () => client.getTransactionReceipt({ hash: txHash as Hex }),
      catch: (error) =>
        error instanceof TransactionReceiptNotFoundError
          ? notVerified(`no mined transaction ${txHash} on ${options.chainName}`, "not_mined")
          : notVerified(`the ${options.chainName} node could not be asked for ${txHash}; retry later`, "unreachable")
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
      const head = yield* ask("its latest block", () => client.getBlockNumber({ cacheTime: 0 }))
      const has = head - receipt.blockNumber + 1n
      if (has < confirmations) {
        return yield* Effect.fail(notVerified(`transaction ${check.txHash} has ${has} of the ${confirmations} confirmations required; retry later`, "unconfirmed"))
      }
      const block = yield* ask(`block ${receipt.blockNumber}`, () => client.getBlock({ blockNumber: receipt.blockNumber }))
      return { minedAt: new Date(Number(block.timestamp) * 1000) }
    })

  /** Start-up check: the token answers `decimals()` with what the configuration says. */
  const onchainDecimals = Effect.tryPromise({
    try: () => client.readContract({ address: tokenAddress, abi: erc20Abi, functionName: "decimals" }),
    catch: () => ConfigError.InvalidData(["CHAIN_RPC_URL"], `the ${options.chainName} node did not answer decimals() of ${tokenAddress}`)
  })
  const checkDecimals = Effect.flatMap(onchainDecimals, (decimals) =>
    decimals === options.tokenDecimals
      ? Effect.void
      : Effect.fail(ConfigError.InvalidData(["TOKEN_DECIMALS"], `the token ${tokenAddress} has ${decimals} decimals onchain, not ${options.tokenDecimals}`)))

  return {
    chain: Chain.of({
      token: (symbol) => ({ symbol, chain: options.chainName, address: tokenAddress, decimals: options.tokenDecimals }),
      verifyTransfer
    }),
    checkDecimals
  }
}

/** ChainLive from configuration: CHAIN_RPC_URL is required, and the token's decimals are checked onchain at start-up. */
export const ChainLive = Layer.effect(
  Chain,
  Effect.gen(function*() {
    const config = yield* AppConfig
    const rpcUrl = yield* Option.match(config.chainRpcUrl, {
      onNone: () => Effect.fail(ConfigError.MissingData(["CHAIN_RPC_URL"], "the live chain needs a JSON-RPC URL")),
      onSome: Effect.succeed
    })
    const live = makeChainLive({
      rpcUrl,
      chainName: config.chainName,
      tokenAddress: config.tokenAddress,
      tokenDecimals: config.tokenDecimals,
      confirmations: config.chainConfirmations
    })
    yield* live.checkDecimals
    if (Option.isSome(config.chainId)) {
      const expected = config.chainId.value
      const actual = yield* Effect.tryPromise({
        try: () => createPublicClient({ transport: http(Redacted.value(rpcUrl), { timeout: 10_000 }) }).getChainId(),
        catch: () => ConfigError.InvalidData(["CHAIN_RPC_URL"], "the node did not answer eth_chainId")
      })
      if (actual !== expected) {
        return yield* Effect.fail(ConfigError.InvalidData(["CHAIN_ID"], `the node at CHAIN_RPC_URL is chain ${actual}, not ${expected}`))
      }
    }
    return live.chain
  })
)
