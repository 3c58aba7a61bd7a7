/**
 * The live swap router (a 0x-style aggregator) bounds a whole call, retries included, by its timeout, as the payout
 * provider does (issue #18 item 2): with a timeout per try, four tries against an aggregator that never answered
 * stretched a swap's 503 to four timeouts and the backoff between them.
 */
import { Duration, Effect, Exit, Redacted } from "effect"
import { FetchHttpClient } from "effect/http"
import { createServer, type IncomingMessage, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeSwapRouterLive } from "../../src/router/SwapRouterLive.ts"

let server: Server
let url: string
const held: Array<IncomingMessage> = []

beforeAll(async () => {
  // Takes every request in and never answers it.
  server = createServer((request) => void held.push(request))
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(async () => {
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
})

const token = (address: `0x${string}`, decimals: number, symbol: "USDC" | "COPm") => ({
  address,
  decimals,
  symbol,
  chain: "celo"
})

describe("SwapRouterLive against an aggregator that never answers", () => {
  it("is unavailable within the configured timeout, retries included, having retried", async () => {
    const router = await Effect.runPromise(
      makeSwapRouterLive({
        baseUrl: url,
        apiKey: Redacted.make("k"),
        chainId: 31337,
        timeout: Duration.millis(1000),
        retries: 3
      })
        .pipe(Effect.provide(FetchHttpClient.layer))
    )
    const before = held.length
    const started = performance.now()
    const exit = await Effect.runPromiseExit(router.quote({
      sellToken: token("0x8A567e2aE79CA692Bd748aB832081C45de4041eA", 18, "COPm"),
      buyToken: token("0xcebA9300f2b948710d2653dD7B07f33A8B32118C", 6, "USDC"),
      sellAmount: 10n ** 21n,
      taker: "0x52908400098527886E0F7030069857D2E4169EE7",
      recipient: "0x52908400098527886E0F7030069857D2E4169EE7",
      slippageBps: 100
    }))
    const elapsed = performance.now() - started
    expect(Exit.isFailure(exit) && JSON.stringify(exit.cause)).toContain("SwapRouterUnavailable")
    expect(elapsed).toBeLessThan(1500)
    // the time is shared among the tries: one that hangs leaves room for a retry
    expect(held.length - before).toBeGreaterThan(1)
  })
})
