/**
 * Batch payouts (issue #34, part 1): POST breb/payout-batches makes each valid item a normal payout (as GET
 * payouts/{id} answers it, in GET payouts) and gives each invalid item its error naming the field and the rule;
 * `totals` are the exact sums of the payouts, and `calls` carry every deposit and one transfer of the summed fee, so
 * what the wallet sends is exactly `totals.sourceAmount`. Refused as a whole without KYC, with nothing valid, from
 * COPm; replayed by its Idempotency-Key; another integration's batch is 404.
 */
import { PayoutBatch } from "@cop-integrations/contracts"
import { Schema } from "effect"
import { describe, expect } from "vitest"
import { httpTest } from "../support/fixture.ts"
import {
  BREB,
  countPayouts,
  expectBadRequest,
  expectContractEncoding,
  expectError,
  fixed,
  newAddress,
  newPartner,
  unitsOf
} from "../support/flows.ts"

// CHAIN_ID: payouts and batches carry their `calls` (EIP-5792) only with the deployment's chain id.
const it = httpTest({ env: { MOCK_LIFECYCLE_DELAY_MS: "600000", CHAIN_ID: "42220" } })

const BATCHES = `${BREB}/payout-batches`
const USDC_DECIMALS = 6

const decodeBatch = (json: unknown) => Schema.decodeUnknownSync(PayoutBatch)(json)

const item = (destinationCop: string, reference?: string) => ({
  destinationCop,
  breBKey: `@batch${destinationCop.replace(".", "")}`,
  accountOwnerName: "Lucia Gomez",
  ...(reference === undefined ? {} : { reference })
})

/** The amount an ERC-20 `transfer(address,uint256)` call moves: its calldata's last 32 bytes. */
const transferAmount = (data: string): bigint => BigInt(`0x${data.slice(-64)}`)

const sumUnits = (amounts: ReadonlyArray<string>, decimals: number) =>
  amounts.reduce((total, amount) => total + unitsOf(amount, decimals), 0n)

describe("a batch of payouts", () => {
  it("makes each valid item a payout and gives each invalid one its error; totals and calls are the exact sums", async ({ partner, user }) => {
    const body = {
      userAddress: user,
      items: [
        item("250000", "inv-001"),
        { destinationCop: "120000", accountOwnerName: "No Key" },
        item("1000", "too-small"),
        item("99999.99", "inv-002"),
        { ...item("80000", "with-extra"), nickname: "extra" },
        item("4500000.01", "inv-003")
      ]
    }
    const created = await partner.post(BATCHES, body)
    expect(created.status, created.text).toBe(201)
    expectContractEncoding(PayoutBatch, created, 201)
    const batch = decodeBatch(created.json)
    expect(batch.status).toBe("prepared")
    expect(batch.items.map((entry) => entry.index)).toEqual([0, 1, 2, 3, 4, 5])
    expect(batch.items.map((entry) => entry.reference)).toEqual([
      "inv-001",
      null,
      "too-small",
      "inv-002",
      "with-extra",
      "inv-003"
    ])

    // the invalid ones: the field and the rule, the errorCode a payout would have had; nothing made for them
    const errors = batch.items.map((entry) => entry.error)
    expect(errors[1]?.error).toMatch(/^items\.1\.breBKey: is missing/)
    expect(errors[1]?.errorCode).toBeUndefined()
    expect(errors[2]?.errorCode).toBe("below_minimum")
    expect(errors[2]?.error).toMatch(/^items\.2/)
    expect(errors[4]?.error).toMatch(/^items\.4\.nickname: is not a known field/)
    const made = batch.items.flatMap((entry) => (entry.payout === null ? [] : [entry.payout]))
    expect(batch.items.filter((entry) => entry.payout === null).map((entry) => entry.index)).toEqual([1, 2, 4])
    expect(batch.items.every((entry) => (entry.payout === null) !== (entry.error === null))).toBe(true)

    // each payout as the API answers it, and listed
    for (const payout of made) {
      const one = await partner.getPayout(payout.payoutId)
      expect(one.json).toEqual(payout)
      expect(payout.status).toBe("awaiting_deposit")
      expect(payout.userAddress).toBe(user)
    }
    const listed = await partner.get(`${BREB}/payouts`, { limit: "500" })
    const listedIds = (listed.json as { items: ReadonlyArray<{ payoutId: string }> }).items.map((p) => p.payoutId)
    for (const payout of made) expect(listedIds).toContain(payout.payoutId)

    // totals: the exact sums of the payouts' own amounts
    const deposits = sumUnits(made.map((payout) => payout.deposit.amount), USDC_DECIMALS)
    const sources = sumUnits(made.map((payout) => payout.sourceAmount), USDC_DECIMALS)
    expect(batch.totals).toEqual({
      count: 3,
      sourceAmount: fixed(sources, USDC_DECIMALS),
      depositAmount: fixed(deposits, USDC_DECIMALS),
      serviceFee: fixed(sources - deposits, USDC_DECIMALS),
      destinationCop: fixed(sumUnits(made.map((payout) => payout.destinationCop), 2), 2)
    })

    // calls: every deposit in the items' order, then one transfer of the summed fee; together exactly sourceAmount
    const calls = batch.calls!.calls
    expect(calls.slice(0, -1)).toEqual(made.map((payout) => ({
      to: payout.transaction.to,
      data: payout.transaction.data,
      value: "0x0"
    })))
    const fee = calls.at(-1)!
    expect(fee).toEqual({ to: batch.feeTransaction.to, data: batch.feeTransaction.data, value: "0x0" })
    expect(transferAmount(fee.data)).toBe(sources - deposits)
    expect(calls.reduce((total, call) => total + transferAmount(call.data), 0n)).toBe(sources)
    expect(made.every((payout) => transferAmount(payout.feeTransaction.data) > 0n)).toBe(true)
    expect(transferAmount(fee.data)).toBe(
      made.reduce((total, payout) => total + transferAmount(payout.feeTransaction.data), 0n)
    )

    // in the payouts report, each with the batch's id and its item's reference
    const report = await partner.get("/api/integrations/reports/payouts", {
      from: made[0]!.createdAt,
      to: new Date(Date.parse(made.at(-1)!.createdAt) + 1).toISOString(),
      format: "jsonl"
    })
    const rows = report.text.split("\n").filter((line) => line !== "").map((line) =>
      JSON.parse(line) as { payoutId: string; batchId: string | null; reference: string | null }
    )
    expect(
      made.map((payout) => rows.find((row) => row.payoutId === payout.payoutId)).map((
        row
      ) => [row?.batchId, row?.reference])
    ).toEqual([[batch.batchId, "inv-001"], [batch.batchId, "inv-002"], [batch.batchId, "inv-003"]])
  })

  it("GET answers it as created; another integration's is 404", async ({ server, partner, user }) => {
    const created = await partner.post(BATCHES, { userAddress: user, items: [item("50000"), item("60000")] })
    expect(created.status, created.text).toBe(201)
    const batch = decodeBatch(created.json)
    const read = await partner.get(`${BATCHES}/${batch.batchId}`)
    expect(read.status, read.text).toBe(200)
    expect(read.json).toEqual(created.json)
    const other = await newPartner(server)
    expectError(await other.get(`${BATCHES}/${batch.batchId}`), 404)
    expectError(await partner.get(`${BATCHES}/pb_doesNotExist`), 404)
  })

  it("is refused as a whole without KYC (needs_kyc), with nothing valid, from COPm or past 100 items; nothing is made", async ({ server, partner, user }) => {
    const before = await countPayouts(server, partner.integrationId)
    expectError(await partner.post(BATCHES, { userAddress: newAddress(), items: [item("50000")] }), 409, "needs_kyc")
    const none = expectBadRequest(
      await partner.post(BATCHES, { userAddress: user, items: [item("10"), { breBKey: "@x" }] }),
      "items"
    )
    expect(none).toMatch(/items\.0/)
    expect(none).toMatch(/items\.1\./)
    expectBadRequest(
      await partner.post(BATCHES, { userAddress: user, fromToken: "COPm", items: [item("50000")] }),
      "fromToken"
    )
    expectBadRequest(await partner.post(BATCHES, { userAddress: user, items: [] }), "items")
    expectBadRequest(
      await partner.post(BATCHES, { userAddress: user, items: Array.from({ length: 101 }, () => item("50000")) }),
      "items"
    )
    expect(await countPayouts(server, partner.integrationId)).toBe(before)
  })

  it("with an Idempotency-Key: the same body replays the same bytes and makes nothing more; another body is 422", async ({ server, user }) => {
    const partner = await newPartner(server)
    const payer = await partner.approvedUser(user)
    const body = { userAddress: payer, items: [item("70000", "a"), item("71000", "b")] }
    const key = { "idempotency-key": `batch-${Date.now()}` }
    const first = await partner.post(BATCHES, body, key)
    expect(first.status, first.text).toBe(201)
    const again = await partner.post(BATCHES, body, key)
    expect(again.status).toBe(201)
    expect(again.headers.get("idempotent-replayed")).toBe("true")
    expect(again.text).toBe(first.text)
    expect(await countPayouts(server, partner.integrationId)).toBe(2)
    expectError(await partner.post(BATCHES, { ...body, items: [item("70000", "a")] }, key), 422)
  })
})
