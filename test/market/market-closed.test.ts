/**
 * A closed market's 409 `mercado_cerrado` says when to come back: `Retry-After` (the seconds until the next opening)
 * and the moment in the message, on the quote and on payout creation, when the market knows it; without a known
 * opening, neither. The sandbox's `market_closed` scenario closes the market as though it had just closed: it opens
 * again when the live default hours next open a session.
 */
import { Effect, Layer } from "effect"
import { describe, expect } from "vitest"
import { mockMode, serverLayerFor } from "../../src/App.ts"
import { Market, MarketState } from "../../src/market/Market.ts"
import { defaultMarketHours, nextOpening } from "../../src/market/MarketHours.ts"
import { httpTest } from "../support/fixture.ts"
import { BREB, call, payoutBody, type Wire } from "../support/flows.ts"

const CLOSED = { "x-mock-scenario": "market_closed" }
const POINTER = "(see /docs#error-mercado_cerrado)"

/** The answer, and the moments just before it was asked and just after it came. */
const timed = async (send: () => Promise<Wire>) => {
  const before = Date.now()
  const answer = await send()
  return { answer, before, after: Date.now() }
}

const mercadoCerrado = (answer: Wire) => {
  expect(answer.status, answer.text).toBe(409)
  const body = answer.json as { error: string; errorCode: string }
  expect(body.errorCode).toBe("mercado_cerrado")
  return body.error
}

const it = httpTest()

const closedForGood = Layer.succeed(
  Market,
  Market.of({ state: Effect.succeed(MarketState.Closed({ reopensAt: undefined })) })
)
const itClosedForGood = httpTest({
  app: (config) => {
    const mode = mockMode(config)
    return serverLayerFor(config, { ...mode, ports: Layer.merge(mode.ports, closedForGood) })
  }
})

describe("mock mode's market_closed", () => {
  it("names the next opening of the default hours, and Retry-After counts the seconds to it, on quote and payout", async ({ server, partner, user }) => {
    const quote = (query: Record<string, string>) => () =>
      call(server.baseUrl, partner.apiKey, "GET", `${BREB}/quote`, { query, headers: CLOSED })
    const sends: ReadonlyArray<readonly [string, () => Promise<Wire>]> = [
      ["quote without an amount", quote({})],
      ["quote with an amount", quote({ destinationCop: "250000" })],
      ["payout", () => partner.createPayout(payoutBody(user), CLOSED)]
    ]
    for (const [what, send] of sends) {
      const { after, answer, before } = await timed(send)
      const error = mercadoCerrado(answer)
      const named = /resume when it opens, at (\S+) \(see /.exec(error)?.[1]
      expect(named, `${what}: ${error}`).toBeDefined()
      const reopensAt = new Date(named!)
      // The opening after the moment the service answered, between the two moments the test saw.
      const candidates = [before, after].map((at) => nextOpening(new Date(at), defaultMarketHours)!.toISOString())
      expect(candidates, what).toContain(named)
      expect(error.startsWith("the USD/COP market is closed; quotes and payouts resume when it opens")).toBe(true)
      expect(error.endsWith(POINTER)).toBe(true)
      const retryAfter = Number(answer.headers.get("retry-after"))
      expect(retryAfter, `${what}: Retry-After ${answer.headers.get("retry-after")}`).toBeGreaterThanOrEqual(
        Math.ceil((reopensAt.getTime() - after) / 1000)
      )
      expect(retryAfter).toBeLessThanOrEqual(Math.ceil((reopensAt.getTime() - before) / 1000))
    }
  })
})

describe("a closed market that does not know when it opens", () => {
  itClosedForGood(
    "answers mercado_cerrado without Retry-After, the message pointing at what to do",
    async ({ partner }) => {
      const answer = await partner.get(`${BREB}/quote`, { destinationCop: "250000" })
      expect(mercadoCerrado(answer)).toBe(
        `the USD/COP market is closed; quotes and payouts resume when it opens ${POINTER}`
      )
      expect(answer.headers.get("retry-after")).toBeNull()
    }
  )
})
