/**
 * What the provider reports, in the payout (issue #7 item 4; DESIGN §3 Payout): a signed `transfer` event whose
 * receipt carries `final_amount` (COP delivered) sets `receipt.totalReceived`; until then it is the requested
 * destinationCop. Provider fee legs (`bridge`, `bridge_fx`) are `verified` once the transfer settles; `copby`
 * keeps its own status. An unreadable receipt or amount is logged and ignored, never a 500.
 */
import { SqlClient } from "effect/sql"
import type { Payout } from "@cop-integrations/contracts"
import { Effect, Option } from "effect"
import { describe, expect } from "vitest"
import { httpTest } from "../support/fixture.ts"
import type { TestServer } from "../support/server.ts"
import { Lifecycle } from "../../src/payouts/Lifecycle.ts"
import { bridgeProgress } from "../../src/provider/bridge/TransferStates.ts"
import { normalizeCop } from "../../src/payouts/TotalReceived.ts"
import { type Partner, runApp } from "../support/flows.ts"
import { BREB, call, createPayout, newTxHash } from "../support/http.ts"
import {
  deliverProviderWebhook,
  newProviderKeyPair,
  providerEnvelope,
  signProviderWebhook
} from "../support/providerWebhooks.ts"

const providerKeys = newProviderKeyPair()

const it = httpTest({
  captureLogs: true,
  env: { PROVIDER_WEBHOOK_PUBLIC_KEY: providerKeys.publicKey, MOCK_LIFECYCLE_DELAY_MS: "600000" }
})

const transferIdOf = async (server: TestServer, payoutId: string) => {
  const rows = await server.run(Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<{ provider_transfer_id: string }>`SELECT provider_transfer_id FROM payouts WHERE id = ${payoutId}`
  ))
  expect(rows).toHaveLength(1)
  return rows[0]!.provider_transfer_id
}

/** Bridge's receipt once the funds arrived (scripts/simulators/provider/shapes.ts), with `final_amount` as given. */
const settledReceipt = (finalAmount: unknown) => ({
  initial_amount: "63.291140",
  developer_fee: "0.316456",
  exchange_fee: "0.000000",
  subtotal_amount: "62.974684",
  gas_fee: "0.000000",
  exchange_rate: "3990.5",
  final_amount: finalAmount,
  destination_currency: "cop",
  url: "https://provider.example/receipt"
})

/** A signed `transfer` event about the payout; `receipt` omitted when undefined. */
const providerSays = async (server: TestServer, payoutId: string, state: string, receipt?: unknown) => {
  const object: Record<string, unknown> = { id: await transferIdOf(server, payoutId), state }
  if (receipt !== undefined) object["receipt"] = receipt
  const body = providerEnvelope({ category: "transfer", type: "transfer.updated.status_transitioned", object })
  const answer = await deliverProviderWebhook(server, body, signProviderWebhook(body, providerKeys.privateKey))
  expect(answer.status, answer.text).toBe(200)
  expect(answer.body).toEqual({ received: true, duplicate: false })
}

const payoutOf = async (server: TestServer, partner: Partner, payoutId: string) => {
  const answer = await call(server, `${BREB}/payouts/${payoutId}`, { apiKey: partner.apiKey })
  expect(answer.status, answer.text).toBe(200)
  return answer.body as Payout
}

const legs = (payout: Payout) => Object.fromEntries(payout.fees.map((leg) => [leg.code, leg.status]))

describe("receipt.totalReceived from the provider's transfer receipt", () => {
  it("is destinationCop until the provider reports final_amount, then that amount (2 decimals); a later event without it keeps it", async ({ server, partner }) => {
    const payout = await createPayout(server, partner.apiKey)
    const created = await payoutOf(server, partner, payout.payoutId)
    expect(created.receipt.totalReceived).toEqual({ amount: created.destinationCop, currency: "COP" })

    // before the funds arrive Bridge's receipt is the estimate, without final_amount
    const { final_amount: _, ...estimate } = settledReceipt(undefined)
    await providerSays(server, payout.payoutId, "awaiting_funds", estimate)
    expect((await payoutOf(server, partner, payout.payoutId)).receipt.totalReceived.amount).toBe(created.destinationCop)

    await providerSays(server, payout.payoutId, "funds_received", settledReceipt("251265.8"))
    const received = await payoutOf(server, partner, payout.payoutId)
    expect(received.status).toBe("deposit_confirmed")
    expect(received.receipt.totalReceived).toEqual({ amount: "251265.80", currency: "COP" })
    expect(received.destinationCop).toBe(created.destinationCop)

    await providerSays(server, payout.payoutId, "payment_submitted")
    await providerSays(server, payout.payoutId, "payment_processed", { url: "https://provider.example/receipt" })
    const completed = await payoutOf(server, partner, payout.payoutId)
    expect(completed.status).toBe("completed")
    expect(completed.receipt.totalReceived.amount).toBe("251265.80")
  })

  it("is taken from the event that settles the payout, and a late or duplicated event does not replace it", async ({ server, partner }) => {
    const payout = await createPayout(server, partner.apiKey)
    await providerSays(server, payout.payoutId, "funds_received", settledReceipt("100000"))
    expect((await payoutOf(server, partner, payout.payoutId)).receipt.totalReceived.amount).toBe("100000.00")
    await providerSays(server, payout.payoutId, "payment_processed", settledReceipt("100000.50"))
    expect((await payoutOf(server, partner, payout.payoutId)).receipt.totalReceived.amount).toBe("100000.50")

    // out of order: an older state with its older receipt moves nothing and changes nothing
    await providerSays(server, payout.payoutId, "funds_received", settledReceipt("99999.00"))
    await providerSays(server, payout.payoutId, "payment_processed", settledReceipt("1.00"))
    const after = await payoutOf(server, partner, payout.payoutId)
    expect(after.status).toBe("completed")
    expect(after.receipt.totalReceived.amount).toBe("100000.50")
  })

  it("is recorded by a later event when the settling one carried no amount", async ({ server, partner }) => {
    const payout = await createPayout(server, partner.apiKey)
    await providerSays(server, payout.payoutId, "payment_processed")
    const completed = await payoutOf(server, partner, payout.payoutId)
    expect(completed.receipt.totalReceived.amount).toBe(completed.destinationCop)
    await providerSays(server, payout.payoutId, "payment_processed", settledReceipt("250000.10"))
    const reported = await payoutOf(server, partner, payout.payoutId)
    expect(reported.status).toBe("completed")
    expect(reported.receipt.totalReceived.amount).toBe("250000.10")
  })

  it("ignores (and logs) an unreadable final_amount or receipt: the state still applies, never a 500", async ({ server, partner }) => {
    const garbage: ReadonlyArray<unknown> = [
      "abc",
      "1e5",
      "-5.00",
      " 100.00",
      "100.005",
      "",
      251265.8,
      { amount: "1" },
      true
    ]
    for (const finalAmount of garbage) {
      const payout = await createPayout(server, partner.apiKey)
      const created = await payoutOf(server, partner, payout.payoutId)
      await providerSays(server, payout.payoutId, "payment_processed", settledReceipt(finalAmount))
      const completed = await payoutOf(server, partner, payout.payoutId)
      expect(`${JSON.stringify(finalAmount)}: ${completed.status}`).toBe(`${JSON.stringify(finalAmount)}: completed`)
      expect(completed.receipt.totalReceived.amount).toBe(created.destinationCop)
    }
    for (const receipt of ["not a receipt", 42, ["final_amount", "1.00"], null]) {
      const payout = await createPayout(server, partner.apiKey)
      const created = await payoutOf(server, partner, payout.payoutId)
      await providerSays(server, payout.payoutId, "payment_processed", receipt)
      const completed = await payoutOf(server, partner, payout.payoutId)
      expect(completed.status).toBe("completed")
      expect(completed.receipt.totalReceived.amount).toBe(created.destinationCop)
    }
    expect(server.logs.some((line) => line.includes("final_amount is not a COP amount"))).toBe(true)
  })
})

describe("what the reconciler passes (getTransfer's finalAmountCop)", () => {
  const apply = async (server: TestServer, payoutId: string, state: string, finalAmountCop: string | null) => {
    const transferId = await transferIdOf(server, payoutId)
    return runApp(
      server,
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const lifecycle = yield* Lifecycle
        return yield* sql.withTransaction(
          lifecycle.applyTransferProgress({
            progress: bridgeProgress({ id: transferId, state, finalAmount: finalAmountCop }),
            source: "provider_webhook"
          })
        )
      })
    )
  }

  it("records a readable amount with the state, ignores an unreadable one, and null changes nothing", async ({ server, partner }) => {
    const payout = await createPayout(server, partner.apiKey)
    const created = await payoutOf(server, partner, payout.payoutId)
    expect(await apply(server, payout.payoutId, "funds_received", "12.3x")).toBe(true)
    expect((await payoutOf(server, partner, payout.payoutId)).receipt.totalReceived.amount).toBe(created.destinationCop)
    expect(await apply(server, payout.payoutId, "payment_processed", null)).toBe(true)
    expect(await apply(server, payout.payoutId, "payment_processed", null)).toBe(false)
    expect(await apply(server, payout.payoutId, "payment_processed", "4000.1")).toBe(true)
    expect((await payoutOf(server, partner, payout.payoutId)).receipt.totalReceived.amount).toBe("4000.10")
    expect(await apply(server, payout.payoutId, "payment_processed", "5000.00")).toBe(false)
    expect((await payoutOf(server, partner, payout.payoutId)).receipt.totalReceived.amount).toBe("4000.10")
  })

  it("normalizeCop: plain non-negative decimals, to exactly 2 decimals, never rounded", () => {
    expect(normalizeCop("251265.8")).toEqual(Option.some("251265.80"))
    expect(normalizeCop("0")).toEqual(Option.some("0.00"))
    expect(normalizeCop("10.500")).toEqual(Option.some("10.50"))
    expect(normalizeCop("11552000.00")).toEqual(Option.some("11552000.00"))
    expect(normalizeCop("123456789012345678901234.99")).toEqual(Option.some("123456789012345678901234.99"))
    for (const bad of ["", "1.", ".5", "01", "-1", "+1", "1e3", "1,000.00", " 1", "1.005", "NaN"]) {
      expect(`${bad}: ${Option.isNone(normalizeCop(bad))}`).toBe(`${bad}: true`)
    }
  })
})

describe("fee legs on settlement", () => {
  it("bridge and bridge_fx are pending once the deposit is in and verified on completion; copby keeps its own status", async ({ server, partner }) => {
    const confirmedWithFee = await createPayout(server, partner.apiKey)
    const confirm = await call(server, `${BREB}/payouts/${confirmedWithFee.payoutId}/confirm`, {
      apiKey: partner.apiKey,
      body: { txHash: newTxHash(), feeTxHash: newTxHash() }
    })
    expect(confirm.status, confirm.text).toBe(200)
    expect(legs(confirm.body as Payout)).toEqual({ bridge_fx: "pending", bridge: "pending", copby: "verified" })
    await providerSays(server, confirmedWithFee.payoutId, "payment_submitted")
    expect(legs(await payoutOf(server, partner, confirmedWithFee.payoutId))).toEqual({
      bridge_fx: "pending",
      bridge: "pending",
      copby: "verified"
    })
    await providerSays(server, confirmedWithFee.payoutId, "payment_processed", settledReceipt("251265.82"))
    const settled = await payoutOf(server, partner, confirmedWithFee.payoutId)
    expect(settled.status).toBe("completed")
    expect(legs(settled)).toEqual({ bridge_fx: "verified", bridge: "verified", copby: "verified" })
    expect(settled.receipt.feesItemized).toEqual(settled.fees)

    // never confirmed by the partner: the fee transfer was not verified, so copby stays pending after settlement
    const unconfirmed = await createPayout(server, partner.apiKey)
    expect(legs(await payoutOf(server, partner, unconfirmed.payoutId))).toEqual({
      bridge_fx: "quoted",
      bridge: "quoted",
      copby: "quoted"
    })
    await providerSays(server, unconfirmed.payoutId, "funds_received")
    expect(legs(await payoutOf(server, partner, unconfirmed.payoutId))).toEqual({
      bridge_fx: "pending",
      bridge: "pending",
      copby: "pending"
    })
    await providerSays(server, unconfirmed.payoutId, "payment_processed")
    expect(legs(await payoutOf(server, partner, unconfirmed.payoutId))).toEqual({
      bridge_fx: "verified",
      bridge: "verified",
      copby: "pending"
    })
  })

  it("a failed or refunded transfer leaves the provider legs unverified", async ({ server, partner }) => {
    const payout = await createPayout(server, partner.apiKey)
    await providerSays(server, payout.payoutId, "funds_received")
    await providerSays(server, payout.payoutId, "returned")
    const refunded = await payoutOf(server, partner, payout.payoutId)
    expect(refunded.status).toBe("refunded")
    expect(legs(refunded)).toEqual({ bridge_fx: "pending", bridge: "pending", copby: "pending" })
  })
})
