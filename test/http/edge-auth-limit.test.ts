/**
 * Failed authentications are limited per client address: a flood of unknown keys is answered 429 (with
 * Retry-After) after a small budget, while a correct key is never refused for it: one that has authenticated keeps
 * working from the same address, and one this replica has never seen is still looked up and served. Requests
 * refused without a lookup (no key, a malformed key) cost nothing and spend nothing: they stay 401 and never bring
 * on a 429. All requests here come from 127.0.0.1, and TRUSTED_PROXIES is unset (edge-auth-proxies.test.ts sets it).
 */
import { describe, expect, vi } from "vitest"
import { generateApiKey } from "../../src/auth/ApiKey.ts"
import { Layer } from "effect"
import { FAILED_AUTH_BURST, FailedAuthBudget } from "../../src/http/FailedAuthLimit.ts"
import { httpTest } from "../support/fixture.ts"
import { type Answer, BREB, call, expectErrorBody } from "../support/http.ts"
import type { TestServer } from "../support/server.ts"

const LIST = `${BREB}/payouts`

/** The budget as deployed, but a guess given back every 1,000 s: an address over budget stays so for the file. */
const it = httpTest({
  overrides: Layer.succeed(FailedAuthBudget, { burst: FAILED_AUTH_BURST, perSecond: 0.001 })
})
/** A small budget refilled once a second: the refill is seen within the test's deadline, however busy the machine. */
const itRefilling = httpTest({ overrides: Layer.succeed(FailedAuthBudget, { burst: 5, perSecond: 1 }) })
/** The last describe's server: fresh, no failed authentication spent on it. */
const itFresh = httpTest()

/** A key no request has used yet. */
let unusedKey: string
it.beforeAll(async ({ server }) => {
  ;({ apiKey: unusedKey } = await server.newIntegration())
})

const list = (server: TestServer, apiKey: string) => call(server, LIST, { apiKey })
const tally = (answers: ReadonlyArray<Answer>) =>
  answers.reduce<Record<number, number>>(
    (counts, answer) => ({ ...counts, [answer.status]: (counts[answer.status] ?? 0) + 1 }),
    {}
  )

describe("failed authentications per client address", () => {
  it("serves a partner's first burst with a key not seen before: one lookup, no failure spent", async ({ server, partner }) => {
    const answers = await Promise.all(Array.from({ length: 4 * FAILED_AUTH_BURST }, () => list(server, partner.apiKey)))
    expect(tally(answers)).toEqual({ 200: 4 * FAILED_AUTH_BURST })
  })

  it("answers 600 concurrent unknown keys with 429 after the budget: at most the budget are 401", async ({ server }) => {
    const answers = await Promise.all(Array.from({ length: 600 }, () => list(server, generateApiKey("test"))))
    const counts = tally(answers)
    expect(Object.keys(counts).sort()).toEqual(["401", "429"])
    // each 401 is a failure within the budget; a guess over it is looked up in a batch (FailedAuthLimit) and is 429
    expect(counts[401]).toBeLessThanOrEqual(FAILED_AUTH_BURST + 5)
    expect(counts[429]).toBeGreaterThanOrEqual(600 - FAILED_AUTH_BURST - 5)
    for (const answer of answers) expectErrorBody(answer, answer.status)
    const limited = answers.find((answer) => answer.status === 429)!
    expect(limited.body.error).toMatch(/failed authentication/i)
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
  })

  it("serves a valid key this replica has never seen while the address is over budget", async ({ server }) => {
    const answer = await list(server, unusedKey)
    expect(answer.status, answer.text).toBe(200)
  })

  it("still answers another guess from the address 429 with Retry-After while it is over budget", async ({ server }) => {
    const answer = await list(server, generateApiKey("test"))
    expectErrorBody(answer, 429)
    expect(answer.headers.get("retry-after")).toMatch(/^[1-9]\d*$/)
  })

  it("ignores X-Forwarded-For and Forwarded from a peer that is not a trusted proxy (TRUSTED_PROXIES unset)", async ({ server }) => {
    for (const headers of [{ "x-forwarded-for": "198.51.100.23" }, { forwarded: "for=198.51.100.23" }]) {
      const answer = await call(server, LIST, { apiKey: generateApiKey("test"), headers })
      expectErrorBody(answer, 429)
    }
  })

  it("answers requests refused without a lookup 401 all the same: no key, another scheme, malformed, the wrong kind", async ({ server }) => {
    const refusals = [
      () => call(server, LIST),
      () => call(server, LIST, { headers: { authorization: "Basic dXNlcjpwYXNz" } }),
      () => list(server, "not-a-key"),
      () => list(server, generateApiKey("live"))
    ]
    for (const attempt of refusals) expectErrorBody(await attempt(), 401)
  })

  it("still serves the partner key that authenticated before, from the same address", async ({ server, partner }) => {
    for (let i = 0; i < 3; i++) expect((await list(server, partner.apiKey)).status).toBe(200)
  })
})

describe("a budget refilling", () => {
  itRefilling("looks a guess up again (401, not 429) once the budget has refilled", async ({ server }) => {
    const flood = tally(await Promise.all(Array.from({ length: 40 }, () => list(server, generateApiKey("test")))))
    expect(flood[429]).toBeGreaterThan(0)
    await vi.waitFor(async () => expect((await list(server, generateApiKey("test"))).status).toBe(401), {
      timeout: 20_000,
      interval: 200
    })
  })
})

describe("requests refused without a lookup spend nothing", () => {
  itFresh(
    "600 without a key or with a malformed one are all 401, and a guess afterwards is still looked up (401, not 429)",
    async ({ server: fresh }) => {
      const unauthenticated = (authorization?: string) =>
        call(fresh, LIST, authorization === undefined ? {} : { headers: { authorization } })
      const answers = await Promise.all(
        Array.from({ length: 600 }, (_, i) => unauthenticated(i % 2 === 0 ? undefined : "Bearer not-a-key"))
      )
      expect(tally(answers)).toEqual({ 401: 600 })
      const guess = await call(fresh, LIST, { apiKey: generateApiKey("test") })
      expectErrorBody(guess, 401)
    }
  )
})
