/**
 * A local swap aggregator for the live stack: the subset of 0x's Swap API v2 the service's SwapRouterLive calls
 * (`GET /swap/allowance-holder/quote` with `0x-api-key` and `0x-version: v2`), on 127.0.0.1. It prices from the test
 * router's onchain `quote`, and its `transaction` calls that router's `swap` (test/chain/SwapFixtures.sol):
 * minBuyAmount = buyAmount × (10000 − slippageBps) / 10000 rounded down, output to `recipient` (else the taker).
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { createPublicClient, encodeFunctionData, erc20Abi, getAddress, http, isAddress } from "viem"
import { routerAbi } from "../../src/router/RouterAbi.ts"
import { swapFixturesArtifact } from "./swapFixtures.ts"

export interface Aggregator {
  readonly url: string
  readonly apiKey: string
  /** Answers the next quote with `liquidityAvailable: false`. */
  readonly noLiquidityOnce: () => void
  readonly close: () => Promise<void>
}

export const startAggregator = async (
  options: { readonly rpcUrl: string; readonly router: `0x${string}`; readonly chainId: number }
): Promise<Aggregator> => {
  const apiKey = "0x-test-key"
  const client = createPublicClient({ transport: http(options.rpcUrl), cacheTime: 0 })
  const routerView = swapFixturesArtifact().TestRouter.abi
  let noLiquidity = false

  const quote = async (params: URLSearchParams) => {
    const missing = ["chainId", "sellToken", "buyToken", "sellAmount", "taker"].find((name) => !params.get(name))
    if (missing !== undefined) {
      return { status: 400, body: { name: "INPUT_INVALID", message: `${missing} is required` } }
    }
    if (Number(params.get("chainId")) !== options.chainId) {
      return { status: 400, body: { name: "INPUT_INVALID", message: "chainId" } }
    }
    const [sellToken, buyToken, taker] = ["sellToken", "buyToken", "taker"].map((name) => params.get(name) ?? "")
    const recipient = params.get("recipient") ?? taker
    if (![sellToken, buyToken, taker, recipient].every((value) => isAddress(value ?? "", { strict: false }))) {
      return { status: 400, body: { name: "INPUT_INVALID", message: "addresses" } }
    }
    if (noLiquidity) {
      noLiquidity = false
      return { status: 200, body: { liquidityAvailable: false } }
    }
    const sellAmount = BigInt(params.get("sellAmount") ?? "0")
    const slippageBps = BigInt(params.get("slippageBps") ?? "100")
    const buyAmount = (await client.readContract({
      address: options.router,
      abi: routerView,
      functionName: "quote",
      args: [getAddress(sellToken!), getAddress(buyToken!), sellAmount]
    })) as bigint
    const minBuyAmount = (buyAmount * (10_000n - slippageBps)) / 10_000n
    const allowance = await client.readContract({
      address: getAddress(sellToken!),
      abi: erc20Abi,
      functionName: "allowance",
      args: [getAddress(taker!), options.router]
    })
    return {
      status: 200,
      body: {
        liquidityAvailable: true,
        buyToken,
        sellToken,
        sellAmount: String(sellAmount),
        buyAmount: String(buyAmount),
        minBuyAmount: String(minBuyAmount),
        issues: {
          allowance: allowance < sellAmount ? { actual: String(allowance), spender: options.router } : null,
          balance: null,
          simulationIncomplete: false
        },
        transaction: {
          to: options.router,
          data: encodeFunctionData({
            abi: routerAbi,
            functionName: "swap",
            args: [getAddress(sellToken!), getAddress(buyToken!), sellAmount, minBuyAmount, getAddress(recipient!)]
          }),
          gas: "200000",
          gasPrice: "1",
          value: "0"
        }
      }
    }
  }

  const server = createServer((req, res) => {
    req.resume()
    const url = new URL(req.url ?? "/", "http://127.0.0.1")
    const answer = (status: number, body: unknown) =>
      res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body))
    if (req.method !== "GET" || url.pathname !== "/swap/allowance-holder/quote") {
      return answer(404, { name: "NOT_FOUND" })
    }
    if (req.headers["0x-api-key"] !== apiKey || req.headers["0x-version"] !== "v2") {
      return answer(401, { name: "UNAUTHORIZED" })
    }
    quote(url.searchParams).then(
      ({ body, status }) => answer(status, body),
      (error: unknown) => answer(500, { name: "INTERNAL", message: String(error) })
    )
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    apiKey,
    noLiquidityOnce: () => void (noLiquidity = true),
    close: () => {
      server.closeAllConnections()
      return new Promise((resolve) => server.close(() => resolve()))
    }
  }
}
