/**
 * Behind a load balancer every partner reaches the service from the balancer's address. With TRUSTED_PROXIES
 * covering it, the failed-authentication budget is the forwarded client's (X-Forwarded-For or Forwarded), so one
 * client's forged keys do not limit another's; from a peer that is not trusted the headers change nothing. The
 * loopback test client plays the balancer here.
 */
import { describe, expect } from "vitest"
import { generateApiKey } from "../../src/auth/ApiKey.ts"
import { Layer } from "effect"
import { FAILED_AUTH_BURST, FailedAuthBudget } from "../../src/http/FailedAuthLimit.ts"
import { httpTest } from "../support/fixture.ts"
import { type Answer, BREB, call, expectErrorBody } from "../support/http.ts"
import type { TestServer } from "../support/server.ts"

const LIST = `${BREB}/payouts`
const GUESSES = 4 * FAILED_AUTH_BURST

/** The budget as deployed, but a guess given back every 1,000 s: an address over budget stays so for the file. */
const overBudgetStays = Layer.succeed(FailedAuthBudget, { burst: FAILED_AUTH_BURST, perSecond: 0.001 })
/** One server per describe: one whose TRUSTED_PROXIES covers the peer (loopback), one whose does not. */
const itTrusted = httpTest({ env: { TRUSTED_PROXIES: "127.0.0.0/8, ::1" }, overrides: overBudgetStays })
const itUntrusted = httpTest({ env: { TRUSTED_PROXIES: "10.0.0.0/8" }, overrides: overBudgetStays })

const tally = (answers: ReadonlyArray<Answer>) =>
  answers.reduce<Record<number, number>>(
    (counts, answer) => ({ ...counts, [answer.status]: (counts[answer.status] ?? 0) + 1 }),
    {}
  )

/** `GUESSES` forged keys at once from `headers`' client; the answers' statuses counted. */
const floodFrom = async (server: TestServer, headers: Record<string, string>) =>
  tally(
    await Promise.all(
      Array.from({ length: GUESSES }, () => call(server, LIST, { apiKey: generateApiKey("test"), headers }))
    )
  )

describe("behind a trusted proxy (TRUSTED_PROXIES covers the peer)", () => {
  const fromClient = (client: string) => ({ "x-forwarded-for": `198.51.100.250, ${client}` })

  itTrusted("limits the client that forges keys, by its forwarded address", async ({ server }) => {
    const counts = await floodFrom(server, fromClient("203.0.113.7"))
    expect(counts[401]).toBeLessThanOrEqual(FAILED_AUTH_BURST + 5)
    expect(counts[429]).toBeGreaterThanOrEqual(GUESSES - FAILED_AUTH_BURST - 5)
    const limited = await call(server, LIST, { apiKey: generateApiKey("test"), headers: fromClient("203.0.113.7") })
    expectErrorBody(limited, 429)
  })

  itTrusted(
    "does not limit another forwarded client's guesses: they are looked up and answered 401",
    async ({ server }) => {
      const clients = [
        fromClient("203.0.113.8"),
        { forwarded: `for="[2001:db8::c]:4711";proto=https` },
        { "x-forwarded-for": "203.0.113.7, 198.51.100.9" } // the limited address, sent by another client
      ]
      for (const headers of clients) {
        expectErrorBody(await call(server, LIST, { apiKey: generateApiKey("test"), headers }), 401)
      }
    }
  )

  itTrusted("serves a correct key the replica has never seen from the limited client", async ({ server, partner }) => {
    // the partner's key: no request of this file has used it before
    const answer = await call(server, LIST, { apiKey: partner.apiKey, headers: fromClient("203.0.113.7") })
    expect(answer.status, answer.text).toBe(200)
  })
})

describe("behind a proxy that is not trusted (TRUSTED_PROXIES does not cover the peer)", () => {
  itUntrusted(
    "ignores the forwarded address: the budget is the peer's, whatever the header says",
    async ({ server }) => {
      const counts = await floodFrom(server, { "x-forwarded-for": "203.0.113.7" })
      expect(counts[429]).toBeGreaterThanOrEqual(GUESSES - FAILED_AUTH_BURST - 5)
      for (const headers of [{ "x-forwarded-for": "203.0.113.8" }, { forwarded: "for=203.0.113.8" }]) {
        expectErrorBody(await call(server, LIST, { apiKey: generateApiKey("test"), headers }), 429)
      }
    }
  )
})
