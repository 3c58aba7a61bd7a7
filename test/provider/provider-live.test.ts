/**
 * BridgeProvider, the Bridge HTTP client, against the provider simulator over loopback HTTP: the request shapes,
 * the Api-Key, an Idempotency-Key on every POST that is the same on each retry, bounded retries on 5xx and
 * timeouts, and a 502-class failure (never a crash) for an answer it cannot read.
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { Duration, Effect, Redacted } from "effect"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { PayoutProvider } from "../../src/provider/PayoutProvider.ts"
import { BridgeProvider, type BridgeOptions } from "../../src/provider/bridge/BridgeClient.ts"
import { type ProviderSimulator, startProviderSimulator } from "../../scripts/simulators/provider/server.ts"
import { newAddress } from "../support/flows.ts"
import { request } from "../simulators/support.ts"

let sim: ProviderSimulator

beforeAll(async () => {
  sim = await startProviderSimulator({
    apiKey: "sk-test-provider-live",
    port: 0,
    webhookUrl: null,
    hangTimeoutMs: 5000
  })
})
afterAll(() => sim?.close())
beforeEach(() => request(sim, "/__sim/faults", { method: "DELETE" }))

const options = (overrides: Partial<BridgeOptions> = {}): BridgeOptions => ({
  baseUrl: `${sim.url}/v0`,
  apiKey: Redacted.make(sim.apiKey),
  sourceRail: "base",
  destinationRail: "breb",
  timeout: Duration.millis(500),
  retries: 2,
  retryBase: Duration.millis(10),
  ...overrides
})

const withProvider = <A, E>(
  use: (provider: PayoutProvider["Service"]) => Effect.Effect<A, E>,
  overrides?: Partial<BridgeOptions>
) => Effect.runPromise(Effect.flatMap(PayoutProvider, use).pipe(Effect.provide(BridgeProvider(options(overrides)))))

const withProviderExit = <A, E>(
  use: (provider: PayoutProvider["Service"]) => Effect.Effect<A, E>,
  overrides?: Partial<BridgeOptions>
) => Effect.runPromiseExit(Effect.flatMap(PayoutProvider, use).pipe(Effect.provide(BridgeProvider(options(overrides)))))

const requestsLog = async () =>
  (await request(sim, "/__sim/requests")).body.data as Array<{
    method: string
    path: string
    idempotencyKey: string | null
    status: number | null
    fault: string | null
    replayed: boolean
  }>

const approvedCustomer = async (email: string) => {
  const link = await withProvider((provider) =>
    provider.createKycLink({ idempotencyKey: crypto.randomUUID(), email, userAddress: newAddress() })
  )
  await request(sim, `/__sim/customers/${link.customerId}/approve`, { method: "POST" })
  return link
}

describe("BridgeProvider against the simulator", () => {
  it("reads the exchange rates as exact decimals", async () => {
    const rates = await withProvider((provider) => provider.usdCopRates)
    expect([rates.sellRate, rates.midRate].map(String)).toEqual(["BigDecimal(3960)", "BigDecimal(4000)"])
  })

  it("starts KYC through a kyc link: the customer, the hosted URL, status pending", async () => {
    const link = await withProvider((provider) =>
      provider.createKycLink({
        idempotencyKey: crypto.randomUUID(),
        email: "ana@example.com",
        userAddress: newAddress()
      })
    )
    expect(link.kycStatus).toBe("pending")
    expect(link.kycUrl).toContain(`${sim.url}/__sim/kyc/`)
    expect(link.customerId).toMatch(/^[0-9a-f-]{36}$/)
  })

  it("registers a Bre-B external account, and a name the directory does not match is OwnerMismatch", async () => {
    const { customerId } = await approvedCustomer("bre-b@example.com")
    const account = await withProvider((provider) =>
      provider.createExternalAccount({
        idempotencyKey: crypto.randomUUID(),
        customerId,
        breBKey: "1234567890",
        accountOwnerName: "Camila Rojas"
      })
    )
    expect(account).toMatchObject({ _tag: "Verified", accountOwnerName: "Camila Rojas", bankName: expect.any(String) })
    const mismatch = await withProvider((provider) =>
      provider.createExternalAccount({
        idempotencyKey: crypto.randomUUID(),
        customerId,
        breBKey: "@camila",
        accountOwnerName: "Mismatch Person"
      })
    )
    expect(mismatch).toEqual({ _tag: "OwnerMismatch" })
  })

  it("creates a transfer with Bridge's offramp body and returns its deposit instructions; the same key is the same transfer", async () => {
    const { customerId } = await approvedCustomer("transfer@example.com")
    const account = await withProvider((provider) =>
      provider.createExternalAccount({
        idempotencyKey: crypto.randomUUID(),
        customerId,
        breBKey: "@camila",
        accountOwnerName: "Camila Rojas"
      })
    )
    if (account._tag !== "Verified") throw new Error("expected a verified account")
    const input = {
      idempotencyKey: crypto.randomUUID(),
      payoutId: "po_test_1",
      customerId,
      amount: "63.448900",
      userAddress: newAddress(),
      externalAccountId: account.externalAccountId
    }
    const [first, again] = await withProvider((provider) =>
      Effect.all([provider.createTransfer(input), provider.createTransfer(input)])
    )
    expect(again).toEqual(first)
    expect(first).toMatchObject({ depositAmount: "63.448900", currency: "usdc", chain: "base" })
    const stored = await request(sim, `/v0/transfers/${first.transferId}`)
    expect(stored.body).toMatchObject({
      on_behalf_of: customerId,
      developer_fee_percent: "0.5",
      client_reference_id: "po_test_1",
      destination: { payment_rail: "breb", currency: "cop", external_account_id: account.externalAccountId }
    })
    const status = await withProvider((provider) => provider.getTransfer(first.transferId))
    expect(status).toEqual({
      transferId: first.transferId,
      status: null,
      fundsArrived: false,
      finalAmountCop: null,
      failureCode: null,
      refund: null
    })
  })

  it("retries a 5xx with the same Idempotency-Key and succeeds", async () => {
    await request(sim, "/__sim/faults/errors", { body: { count: 2, status: 503 } })
    const key = crypto.randomUUID()
    const link = await withProvider((provider) =>
      provider.createKycLink({ idempotencyKey: key, email: "retry@example.com", userAddress: newAddress() })
    )
    expect(link.customerId).toBeTruthy()
    const attempts = (await requestsLog()).filter((entry) => entry.idempotencyKey === key)
    expect(attempts.map((entry) => entry.status)).toEqual([503, 503, 201])
  })

  it("gives up after the bounded retries: ProviderUnavailable, not a hang", async () => {
    await request(sim, "/__sim/faults/errors", { body: { count: 10, status: 500 } })
    const exit = await withProviderExit((provider) => provider.usdCopRates)
    expect(exit._tag === "Failure" && JSON.stringify(exit.cause)).toContain("ProviderUnavailable")
    await request(sim, "/__sim/faults", { method: "DELETE" })
  })

  it("a request that times out is retried with the same key; a POST carried out before the timeout is replayed, not repeated", async () => {
    await request(sim, "/__sim/faults/timeouts", { body: { count: 1, after_processing: true } })
    const key = crypto.randomUUID()
    const link = await withProvider((provider) =>
      provider.createKycLink({ idempotencyKey: key, email: "slow@example.com", userAddress: newAddress() })
    )
    const attempts = (await requestsLog()).filter((entry) => entry.idempotencyKey === key)
    expect(attempts).toHaveLength(2)
    expect(attempts[1]).toMatchObject({ replayed: true, status: 201 })
    const customers = await request(sim, `/v0/customers/${link.customerId}`)
    expect(customers.status).toBe(200)
  })

  it("a provider that never answers: ProviderUnavailable within the configured timeout, retries included", async () => {
    await request(sim, "/__sim/faults/timeouts", { body: { count: 10 } })
    const logged = (await requestsLog()).length
    const started = performance.now()
    const exit = await withProviderExit((provider) => provider.usdCopRates, {
      timeout: Duration.millis(1000),
      retries: 3
    })
    const elapsed = performance.now() - started
    expect(exit._tag === "Failure" && JSON.stringify(exit.cause)).toContain("ProviderUnavailable")
    expect(elapsed).toBeLessThan(1500)
    // the time is shared among the tries: one that hangs leaves room for a retry
    const tries = (await requestsLog()).slice(logged)
    expect(tries.length).toBeGreaterThan(1)
    expect(tries.every((entry) => entry.path === "/v0/exchange_rates?from=usd&to=cop" && entry.fault === "timeout"))
      .toBe(true)
  })

  it("refuses a wrong Api-Key as a bad response (502 class), without retrying", async () => {
    const exit = await withProviderExit((provider) => provider.usdCopRates, { apiKey: Redacted.make("sk-wrong") })
    expect(exit._tag === "Failure" && JSON.stringify(exit.cause)).toContain("ProviderBadResponse")
  })
})

describe("BridgeProvider against a provider that answers unexpectedly", () => {
  let server: Server
  let url: string
  let answer: { status: number; body: string } = { status: 200, body: "{}" }
  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume()
      res.writeHead(answer.status, { "content-type": "application/json" }).end(answer.body)
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v0`
  })
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

  it.each([
    ["a rate that is not a decimal", {
      status: 200,
      body: JSON.stringify({ midmarket_rate: "4000", sell_rate: "1e3" })
    }],
    ["a missing field", { status: 200, body: JSON.stringify({ midmarket_rate: "4000" }) }],
    ["not JSON", { status: 200, body: "<html>maintenance</html>" }]
  ])("%s is ProviderBadResponse", async (_, next) => {
    answer = next
    const exit = await withProviderExit((provider) => provider.usdCopRates, { baseUrl: url })
    expect(exit._tag === "Failure" && JSON.stringify(exit.cause)).toContain("ProviderBadResponse")
  })

  it("a deposit address that is not an address is ProviderBadResponse", async () => {
    answer = {
      status: 201,
      body: JSON.stringify({
        id: "tr_1",
        state: "awaiting_funds",
        source_deposit_instructions: {
          payment_rail: "base",
          currency: "usdc",
          amount: "10.00",
          to_address: "0xnot-an-address"
        }
      })
    }
    const exit = await withProviderExit((provider) =>
      provider.createTransfer({
        idempotencyKey: crypto.randomUUID(),
        payoutId: "po_x",
        customerId: "cus_x",
        amount: "10.00",
        userAddress: newAddress(),
        externalAccountId: "ea_x"
      }), { baseUrl: url })
    expect(exit._tag === "Failure" && JSON.stringify(exit.cause)).toContain("ProviderBadResponse")
  })
})
