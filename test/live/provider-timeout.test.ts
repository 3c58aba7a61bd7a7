/**
 * Issue #18 item 2, live through the provider simulator: a keyed payout create whose transfer the provider made but
 * whose answer never came in time answers 503; the retry with the same Idempotency-Key must reach the same provider
 * transfer (the payout id and the provider's key kept for it), so the provider holds ONE transfer for the payout.
 * And the whole provider call, retries included, is bounded by PROVIDER_TIMEOUT_MS.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { OUTSIDE_RETRY_AFTER_SECONDS } from "../../src/http/ServiceUnavailable.ts"
import { call, expectError, PAYOUTS, payoutBody, sql } from "../support/flows.ts"
import {
  completeLiveKyc,
  type LiveStack,
  newWalletUser,
  providerTransfersOf,
  simCall,
  startLiveStack
} from "../support/liveStack.ts"

const TIMEOUT_MS = 1500
const RETRIES = 2

let stack: LiveStack
let apiKey: string

beforeAll(async () => {
  stack = await startLiveStack({ env: { PROVIDER_TIMEOUT_MS: String(TIMEOUT_MS), PROVIDER_RETRIES: String(RETRIES) } })
  apiKey = await stack.newLiveKey()
}, 60_000)
afterAll(() => stack?.close())
beforeEach(() => fetch(`${stack.sim.url}/__sim/faults`, { method: "DELETE" }))

const sim = (path: string, body?: unknown) => simCall(stack, path, body)

const transfersOf = (customerId: string) => providerTransfersOf(stack, customerId)

const approvedUser = async () => {
  const user = await newWalletUser(stack)
  const { customerId } = await completeLiveKyc(
    stack,
    apiKey,
    user.address,
    `t-${user.address.slice(2, 12).toLowerCase()}@example.com`
  )
  return { user, customerId }
}

const create = (body: unknown, key: string) =>
  call(stack.server.baseUrl, apiKey, "POST", PAYOUTS, { body, headers: { "idempotency-key": key } })

describe("a provider transfer whose answer is lost", () => {
  it(
    "503, then the retry with the same key is 201 with the same transfer: one provider transfer for the payout",
    async () => {
      const { user, customerId } = await approvedUser()
      const body = payoutBody(user.address)
      const key = `timeout-${crypto.randomUUID()}`
      // every try of POST /v0/transfers is carried out by the provider, and its answer never arrives
      await sim("/__sim/faults/timeouts", { count: RETRIES + 1, after_processing: true, path: "/v0/transfers" })

      const started = performance.now()
      const lost = await create(body, key)
      const elapsed = performance.now() - started
      expectError(lost, 503)
      expect(await transfersOf(customerId)).toHaveLength(1)

      await fetch(`${stack.sim.url}/__sim/faults`, { method: "DELETE" })
      const retry = await create(body, key)
      expect(retry.status, retry.text).toBe(201)
      const payout = retry.json as { payoutId: string; deposit: { address: string } }

      const transfers = await transfersOf(customerId)
      console.log(
        `provider transfers for the payout after a lost answer + retry: ${transfers.length}; 503 after ${
          Math.round(elapsed)
        } ms`
      )
      expect(transfers).toHaveLength(1)
      expect(transfers[0]).toMatchObject({ client_reference_id: payout.payoutId })
      expect(transfers[0]!.to_address.toLowerCase()).toBe(payout.deposit.address.toLowerCase())
      const [row] = await sql<{ provider_transfer_id: string }>(
        stack.server,
        (q) => q`SELECT provider_transfer_id FROM payouts WHERE id = ${payout.payoutId}`
      )
      expect(row?.provider_transfer_id).toBe(transfers[0]!.id)

      const replay = await create(body, key)
      expect(replay.headers.get("idempotent-replayed")).toBe("true")
      expect(replay.text).toBe(retry.text)
    },
    60_000
  )

  it("the key stays bound to that payout: the same key with another body is 422", async () => {
    const { user, customerId } = await approvedUser()
    const key = `bound-${crypto.randomUUID()}`
    await sim("/__sim/faults/timeouts", { count: RETRIES + 1, after_processing: true, path: "/v0/transfers" })
    expectError(await create(payoutBody(user.address), key), 503)
    await fetch(`${stack.sim.url}/__sim/faults`, { method: "DELETE" })

    expectError(await create(payoutBody(user.address, { destinationCop: "300000" }), key), 422)
    expect(await transfersOf(customerId)).toHaveLength(1)
  }, 60_000)
})

describe("a provider that never answers", () => {
  it("gives the 503 within PROVIDER_TIMEOUT_MS, retries included", async () => {
    const { user } = await approvedUser()
    await sim("/__sim/faults/timeouts", { count: 100 })
    const started = performance.now()
    const answer = await create(payoutBody(user.address), `hang-${crypto.randomUUID()}`)
    const elapsed = performance.now() - started
    console.log(`503 after ${Math.round(elapsed)} ms (PROVIDER_TIMEOUT_MS ${TIMEOUT_MS}, PROVIDER_RETRIES ${RETRIES})`)
    expectError(answer, 503)
    expect(answer.headers.get("retry-after")).toBe(String(OUTSIDE_RETRY_AFTER_SECONDS))
    // the first provider call the create makes (the rates unless cached, else the external account) hangs; its
    // tries and backoff all fit in one PROVIDER_TIMEOUT_MS (a timeout per try took 3 × 1.5 s and the backoff: 5.2 s)
    expect(elapsed).toBeLessThan(TIMEOUT_MS * 2)
  }, 60_000)
})
