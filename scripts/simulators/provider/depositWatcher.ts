/**
 * Watches a real EVM node for the deposits: ERC-20 `Transfer` logs of the configured token to the deposit
 * address of each transfer still awaiting funds, by polling `eth_getLogs` over the blocks mined since the last
 * poll. The latest block is read before the open addresses are listed, so a transfer created during a poll
 * cannot have its deposit in a block this poll already covered.
 */
import { createPublicClient, erc20Abi, getAddress, http, parseAbiItem } from "viem"
import type { Lifecycle } from "./lifecycle.ts"
import type { SimulatorState } from "./state.ts"

const transferEvent = parseAbiItem("event Transfer(address indexed from, address indexed to, uint256 value)")

export interface DepositWatcherOptions {
  readonly rpcUrl: string
  readonly tokenAddress: `0x${string}`
  readonly pollIntervalMs: number
  /** Blocks a log needs (1 = the latest block counts). */
  readonly confirmations: number
  /** Widest block range one eth_getLogs call asks for. */
  readonly maxBlockRange?: number
  readonly log: (line: string) => void
}

export interface WatcherStatus {
  readonly rpc_url: string
  readonly token_address: string
  /** Every block up to this one has been scanned (null before the first poll). */
  readonly scanned_to_block: string | null
  readonly last_error: string | null
  readonly polls: number
}

export const readTokenDecimals = async (rpcUrl: string, tokenAddress: `0x${string}`): Promise<number> => {
  const client = createPublicClient({ transport: http(rpcUrl), cacheTime: 0 })
  return Number(await client.readContract({ address: tokenAddress, abi: erc20Abi, functionName: "decimals" }))
}

export const startDepositWatcher = async (
  state: SimulatorState,
  lifecycle: Lifecycle,
  options: DepositWatcherOptions
) => {
  const client = createPublicClient({ transport: http(options.rpcUrl), cacheTime: 0 })
  const token = getAddress(options.tokenAddress)
  const maxRange = BigInt(options.maxBlockRange ?? 2000)
  const lag = BigInt(Math.max(options.confirmations, 1) - 1)
  let nextBlock = await client.getBlockNumber()
  let scannedTo: bigint | null = null
  let lastError: string | null = null
  let polls = 0
  let stopped = false
  let timer: NodeJS.Timeout | undefined

  const poll = async () => {
    const latest = (await client.getBlockNumber()) - lag
    if (latest < nextBlock) return
    const open = state.openTransfersByAddress()
    if (open.size > 0) {
      const addresses = [...open.values()].map((transfer) => transfer.depositAddress)
      for (let from = nextBlock; from <= latest; from += maxRange) {
        const to = from + maxRange - 1n < latest ? from + maxRange - 1n : latest
        const logs = await client.getLogs({
          address: token,
          event: transferEvent,
          args: { to: addresses },
          fromBlock: from,
          toBlock: to
        })
        for (const log of logs) {
          const transfer = open.get((log.args.to ?? "").toLowerCase())
          if (transfer === undefined || log.transactionHash === null || log.logIndex === null) continue
          const credited = lifecycle.credit(transfer, {
            txHash: log.transactionHash,
            logIndex: log.logIndex,
            from: log.args.from ?? "",
            units: log.args.value ?? 0n
          })
          if (credited) {
            options.log(`deposit ${log.transactionHash} of ${log.args.value} units to transfer ${transfer.id}`)
          }
        }
      }
    }
    scannedTo = latest
    nextBlock = latest + 1n
  }

  const loop = async () => {
    if (stopped) return
    try {
      await poll()
      lastError = null
    } catch (cause) {
      lastError = cause instanceof Error ? cause.message.split("\n")[0] ?? "error" : String(cause)
    }
    polls++
    if (!stopped) timer = setTimeout(() => void loop(), options.pollIntervalMs)
  }
  timer = setTimeout(() => void loop(), 0)

  return {
    status: (): WatcherStatus => ({
      rpc_url: options.rpcUrl,
      token_address: token,
      scanned_to_block: scannedTo === null ? null : scannedTo.toString(),
      last_error: lastError,
      polls
    }),
    stop: () => {
      stopped = true
      if (timer !== undefined) clearTimeout(timer)
    }
  }
}

export type DepositWatcher = Awaited<ReturnType<typeof startDepositWatcher>>
