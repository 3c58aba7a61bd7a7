/**
 * Issue #18 item 2, the SIGTERM variant: a keyed payout create whose provider transfer is in flight (made by the
 * provider, its answer not yet back) when SIGTERM's grace period runs out is cut off. The retry with the same
 * Idempotency-Key against the restarted service must reach the same provider transfer: one transfer, one payout.
 * The service runs as a real process in live mode, beside the local live stack (anvil, the provider simulator),
 * on the stack's database.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { waitUntil } from "../simulators/support.ts"
import { PAYOUTS, payoutBody } from "../support/flows.ts"
import {
  completeLiveKyc,
  type LiveStack,
  liveEnv,
  newWalletUser,
  providerTransfersOf,
  simCall,
  startLiveStack
} from "../support/liveStack.ts"
import { type StartedProcess, startServiceProcess } from "../support/process.ts"

let stack: LiveStack
let apiKey: string
const services: Array<StartedProcess> = []

beforeAll(async () => {
  stack = await startLiveStack()
  apiKey = await stack.newLiveKey()
}, 60_000)
afterAll(async () => {
  for (const service of services) await service.stop("SIGKILL")
  await stack?.close()
})

const startService = async () => {
  const service = await startServiceProcess({
    ...liveEnv({
      sim: stack.sim,
      mail: stack.mail,
      rpcUrl: stack.anvil.rpcUrl,
      token: stack.token,
      copToken: stack.copToken,
      aggregator: stack.aggregator,
      feeWallet: stack.feeWallet
    }),
    DATABASE_URL: stack.server.database.url,
    PROVIDER_TIMEOUT_MS: "60000",
    SHUTDOWN_GRACE_MS: "300"
  })
  services.push(service)
  return service
}

const transfersOf = (customerId: string) => providerTransfersOf(stack, customerId)

const create = (service: StartedProcess, body: unknown, key: string) =>
  fetch(`${service.baseUrl}${PAYOUTS}`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", "idempotency-key": key },
    body: JSON.stringify(body)
  })

describe("SIGTERM past the grace period while the provider makes the transfer", () => {
  it("the retry with the same key on the restarted service gets the same transfer: one provider transfer", async () => {
    const user = await newWalletUser(stack)
    const { customerId } = await completeLiveKyc(
      stack,
      apiKey,
      user.address,
      `sigterm-${user.address.slice(2, 10).toLowerCase()}@example.com`
    )
    const body = payoutBody(user.address)
    const key = `sigterm-${crypto.randomUUID()}`

    const first = await startService()
    // the provider carries out the next POST /v0/transfers and holds its answer
    await simCall(stack, "/__sim/faults/timeouts", {
      count: 1,
      after_processing: true,
      hang_ms: 60_000,
      path: "/v0/transfers"
    })
    const cut = create(first, body, key).then((response) => response.status, (error: unknown) => String(error))
    await waitUntil("the provider made the transfer", async () => (await transfersOf(customerId)).length === 1, {
      timeoutMs: 20_000
    })

    expect(await first.stop("SIGTERM")).toBe(1) // a request was cut off after the grace period
    expect(first.stdout()).toContain("were cut off")
    expect(await cut).not.toBe(201)

    const second = await startService()
    const retry = await create(second, body, key)
    const text = await retry.text()
    expect(retry.status, text).toBe(201)
    const payout = JSON.parse(text) as { payoutId: string }

    const transfers = await transfersOf(customerId)
    console.log(`provider transfers for the payout after SIGTERM past the grace period + retry: ${transfers.length}`)
    expect(transfers).toHaveLength(1)
    expect(transfers[0]).toMatchObject({ client_reference_id: payout.payoutId })
    await second.stop("SIGTERM")
  }, 120_000)
})
