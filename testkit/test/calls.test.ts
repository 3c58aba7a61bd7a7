/**
 * R-PAYOUT-10: the one-signature batch a payout offers (`calls`, live and USDC only, so null on the mock deployment)
 * must batch exactly its two prepared transactions. A proxy in front of the real mock service adds a `calls` to the
 * created payout: built from the payout's own transactions, PAYOUT-005 passes; with the fee call paying one base unit
 * less, or from another address, it fails naming the rule.
 */
import { decodeFunctionData, encodeFunctionData, erc20Abi } from "viem"
import { describe, expect, it } from "vitest"
import { runConformance } from "../src/index.ts"
import { jsonOf, type Proxy, urlParts, withJson } from "./support/proxy.ts"
import { serviceBehindProxies } from "./support/service.ts"

type Json = Record<string, unknown>
type Tx = { readonly to: string; readonly data: `0x${string}` }

const service = serviceBehindProxies()

const shortByOne = (data: `0x${string}`): `0x${string}` => {
  const { args } = decodeFunctionData({ abi: erc20Abi, data })
  const [to, amount] = args as readonly [`0x${string}`, bigint]
  return encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [to, amount - 1n] })
}

/** The created payout with `calls` as `batch` makes it from the payout's own fields. */
const offering = async (batch: (payout: Json) => Json) => {
  const proxy = await service.through({
    response: (request, response) => {
      const isCreate = request.method === "POST" && urlParts(request.url).path === "/api/integrations/breb/payouts"
      if (!isCreate || response.status !== 201) return response
      const payout = jsonOf(response.body) as Json
      return withJson(response, { ...payout, calls: batch(payout) })
    }
  })
  return proxy
}

const callsOf = (payout: Json, fee: (tx: Tx) => Tx = (tx) => tx, from = payout["userAddress"]) => ({
  version: "2.0.0",
  chainId: "0xa4ec",
  from,
  atomicRequired: true,
  calls: [payout["transaction"] as Tx, fee(payout["feeTransaction"] as Tx)].map(({ data, to }) => ({
    to,
    data,
    value: "0x0"
  }))
})

const payout005 = async (proxy: Proxy) => {
  const report = await runConformance({ baseUrl: proxy.baseUrl, apiKey: service.apiKey, grep: ["PAYOUT-005"] })
  return report.scenarios[0]
}

describe("a payout's calls (R-PAYOUT-10)", () => {
  it("batching exactly its transaction and feeTransaction, from userAddress: PAYOUT-005 passes", async () => {
    const result = await payout005(await offering((payout) => callsOf(payout)))
    expect(result?.status, JSON.stringify(result?.failure)).toBe("passed")
  }, 60_000)

  it("whose fee call pays one base unit less: PAYOUT-005 fails on the rule", async () => {
    const result = await payout005(
      await offering((payout) => callsOf(payout, (fee) => ({ ...fee, data: shortByOne(fee.data) })))
    )
    expect(result?.status).toBe("failed")
    expect(result?.failure?.message).toBe("calls batches exactly transaction then feeTransaction (R-PAYOUT-10)")
  }, 60_000)

  it("from another address: PAYOUT-005 fails on the rule", async () => {
    const stranger = "0x000000000000000000000000000000000000dEaD"
    const result = await payout005(await offering((payout) => callsOf(payout, undefined, stranger)))
    expect(result?.status).toBe("failed")
    expect(result?.failure?.message).toBe(
      "calls is an atomic EIP-5792 batch from userAddress that moves no native value (R-PAYOUT-10)"
    )
  }, 60_000)
})
