import { Effect, Layer, Option, Redacted } from "effect"
import {
  createPublicClient,
  erc20Abi,
  getAddress,
  type Hex,
  http,
  parseEventLogs,
  TransactionReceiptNotFoundError
} from "viem"
import { configError } from "../base/StartupFailure.ts"
import { AppConfig } from "../config/Config.ts"
import {
  Chain,
  ChainUnavailable,
  DepositNotVerified,
  type NotVerifiedKind,
  type ReceiptCheck,
  type RefundCheck,
  sameAddress,
  type TokenTransfer,
  type TransferCheck,
  transfersTo
} from "./Chain.ts"
import { type TokenInfo, tokenLookup, tokensFromConfig } from "./Tokens.ts"

export interface ChainLiveOptions {
  readonly rpcUrl: Redacted.Redacted<string>
  readonly chainName: string
  readonly tokens: ReadonlyArray<TokenInfo>
  /** Blocks a deposit's block must have on top of it, itself included (default 1: mined). */
  readonly confirmations?: number
}

/** A start-up refusal naming the setting at fault, as the configuration's own errors do. */
const invalidSetting = (name: string, message: string) => configError([name], message)

/**
 * The chain through a JSON-RPC node (viem). A deposit is verified when its receipt exists, succeeded, carries
 * Transfer logs of the expected token to the expected address summing to at least the expected amount, moved
 * from the user (or, `fromIs: "transaction"`, in a transaction the user sent) (DESIGN §3, live confirm), and has
 * the required confirmations. Every mismatch is a
 * `DepositNotVerified` whose reason names it.
 */
export const makeChainLive = (options: ChainLiveOptions) => {
  const client = createPublicClient({
    transport: http(Redacted.value(options.rpcUrl), { retryCount: 2, timeout: 10_000 }),
    cacheTime: 0
  })
  const confirmations = BigInt(options.confirmations ?? 1)
  const notVerified = (reason: string, kind: NotVerifiedKind = "mismatch") => new DepositNotVerified({ kind, reason })
  const ask = <A>(what: string, call: () => Promise<A>) =>
    Effect.tryPromise({
      try: call,
      catch: () =>
        notVerified(`the ${options.chainName} node could not be asked for ${what}; retry later`, "unreachable")
    })

  const receiptOf = (txHash: string) =>
    Effect.tryPromise({
      // Checked as a TxHash (0x + 64 hex digits) where the request came in; viem wants it as its template type.
      try: () => client.getTransactionReceipt({ hash: txHash as Hex }),
      catch: (error) =>
        error instanceof TransactionReceiptNotFoundError
          ? notVerified(`no mined transaction ${txHash} on ${options.chainName}`, "not_mined")
          : notVerified(`the ${options.chainName} node could not be asked for ${txHash}; retry later`, "unreachable")
    })

  /** The receipt's ERC-20 transfers, once it is mined and succeeded; `sentBy` checks the transaction's sender first. */
  const minedTransfers = (txHash: string, sentBy?: string) =>
    Effect.gen(function*() {
      const receipt = yield* receiptOf(txHash)
      if (sentBy !== undefined && !sameAddress(receipt.from, sentBy)) {
        return yield* Effect.fail(
          notVerified(`transaction ${txHash} was sent by ${getAddress(receipt.from)}, not ${getAddress(sentBy)}`)
        )
      }
      // After the sender: a `reverted` answer means the user's own transaction failed.
      if (receipt.status !== "success") {
        return yield* Effect.fail(notVerified(`transaction ${txHash} reverted`, "reverted"))
      }
      const transfers = parseEventLogs({ abi: erc20Abi, logs: receipt.logs, eventName: "Transfer", strict: true })
        .map((log): TokenTransfer => ({ token: log.address, ...log.args }))
      return { blockNumber: receipt.blockNumber, transfers }
    })

  /** The moment the transaction's block was mined, once it has the required confirmations. */
  const confirmedAt = (txHash: string, blockNumber: bigint) =>
    Effect.gen(function*() {
      const head = yield* ask("its latest block", () => client.getBlockNumber({ cacheTime: 0 }))
      const has = head - blockNumber + 1n
      if (has < confirmations) {
        return yield* Effect.fail(
          notVerified(
            `transaction ${txHash} has ${has} of the ${confirmations} confirmations required; retry later`,
            "unconfirmed"
          )
        )
      }
      const block = yield* ask(`block ${blockNumber}`, () => client.getBlock({ blockNumber }))
      return new Date(Number(block.timestamp) * 1000)
    })

  const verifyTransfer = (check: TransferCheck) =>
    Effect.gen(function*() {
      const byTransfer = check.fromIs === "transfer"
      const { blockNumber, transfers } = yield* minedTransfers(check.txHash, byTransfer ? undefined : check.from)
      const { matching, moved } = transfersTo(transfers, {
        token: check.token,
        to: check.to,
        from: byTransfer ? check.from : undefined
      })
      if (matching.length === 0) {
        const fromUser = byTransfer ? ` from ${getAddress(check.from)}` : ""
        return yield* Effect.fail(
          notVerified(
            `transaction ${check.txHash} has no Transfer of the ${options.chainName} token ${
              getAddress(check.token)
            }${fromUser} to ${getAddress(check.to)}`
          )
        )
      }
      if (moved < check.minAmountBaseUnits) {
        return yield* Effect.fail(notVerified(
          `transaction ${check.txHash} transfers ${moved} base units to ${
            getAddress(check.to)
          }, less than the ${check.minAmountBaseUnits} expected`
        ))
      }
      return { minedAt: yield* confirmedAt(check.txHash, blockNumber), transfers }
    })

  const verifyRefund = (check: RefundCheck) =>
    Effect.gen(function*() {
      const { blockNumber, transfers } = yield* minedTransfers(check.txHash)
      const { moved } = transfersTo(transfers, { token: check.token, to: check.to })
      if (moved < check.amountBaseUnits) {
        return yield* Effect.fail(notVerified(
          `transaction ${check.txHash} transfers ${moved} base units of ${getAddress(check.token)} to ${
            getAddress(check.to)
          }, not the ${check.amountBaseUnits} refunded`
        ))
      }
      return { minedAt: yield* confirmedAt(check.txHash, blockNumber), transfers }
    })

  const receiptTransfers = (check: ReceiptCheck) =>
    Effect.gen(function*() {
      const { blockNumber, transfers } = yield* minedTransfers(check.txHash)
      return { minedAt: yield* confirmedAt(check.txHash, blockNumber), transfers }
    })

  /** Start-up check: every token answers `decimals()` with what the configuration says. */
  const checkDecimals = Effect.forEach(options.tokens, (token) =>
    Effect.tryPromise({
      try: () => client.readContract({ address: token.address, abi: erc20Abi, functionName: "decimals" }),
      catch: () =>
        invalidSetting(
          "CHAIN_RPC_URL",
          `the ${options.chainName} node did not answer decimals() of ${token.symbol} ${token.address}`
        )
    }).pipe(
      Effect.filterOrFail(
        (decimals) => decimals === token.decimals,
        (decimals) =>
          invalidSetting(
            token.symbol === "USDC" ? "TOKEN_DECIMALS" : "COP_TOKEN_DECIMALS",
            `the token ${token.symbol} ${token.address} has ${decimals} decimals onchain, not ${token.decimals}`
          )
      )
    ), { discard: true })

  const allowance = (input: { readonly token: `0x${string}`; readonly owner: string; readonly spender: string }) =>
    Effect.tryPromise({
      try: () =>
        client.readContract({
          address: input.token,
          abi: erc20Abi,
          functionName: "allowance",
          args: [getAddress(input.owner), getAddress(input.spender)]
        }),
      catch: () =>
        new ChainUnavailable({
          reason: `the ${options.chainName} node could not be asked for an allowance; retry later`
        })
    })

  return {
    chain: Chain.of({
      tokens: options.tokens,
      token: tokenLookup(options.tokens),
      recordedTxHash: (txHash) => txHash,
      verifyTransfer,
      verifyRefund,
      receiptTransfers,
      allowance
    }),
    checkDecimals
  }
}

/** ChainLive from configuration: CHAIN_RPC_URL is required, and every token's decimals are checked onchain at start-up. */
export const ChainLive = Layer.effect(
  Chain,
  Effect.gen(function*() {
    const config = yield* AppConfig
    const rpcUrl = yield* Option.match(config.chainRpcUrl, {
      onNone: () => Effect.fail(invalidSetting("CHAIN_RPC_URL", "the live chain needs a JSON-RPC URL")),
      onSome: Effect.succeed
    })
    const live = makeChainLive({
      rpcUrl,
      chainName: config.chainName,
      tokens: tokensFromConfig(config),
      confirmations: config.chainConfirmations
    })
    yield* live.checkDecimals
    if (Option.isSome(config.chainId)) {
      const expected = config.chainId.value
      const actual = yield* Effect.tryPromise({
        try: () => createPublicClient({ transport: http(Redacted.value(rpcUrl), { timeout: 10_000 }) }).getChainId(),
        catch: () => invalidSetting("CHAIN_RPC_URL", "the node did not answer eth_chainId")
      })
      if (actual !== expected) {
        return yield* Effect.fail(
          invalidSetting("CHAIN_ID", `the node at CHAIN_RPC_URL is chain ${actual}, not ${expected}`)
        )
      }
    }
    return live.chain
  })
)
