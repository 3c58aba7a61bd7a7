/**
 * A batch confirmed by one transaction (issue #34, part 1): every payout its transaction pays in full moves to
 * `deposit_confirmed` with the batch's hash; an item whose transfer is missing or short stays awaiting, its
 * `depositError` saying why; the fee legs are verified from the same receipt; the batch gets its hash and the event
 * `payout_batch.confirmed`, and `payout_batch.finished` once its last payout finished. The hash is the batch's alone.
 *
 * The app runs over the mock chain with `receiptTransfers` scripted per test: by default the mock's (mined now,
 * simulated: every deposit paid); a test may answer with the transfers a real wallet's batch would log, read from the
 * batch's own `calls` (each an ERC-20 `transfer`), with one of them cut short or left out.
 */
import { EventList, PayoutBatch, PayoutBatchList } from "@cop-integrations/contracts"
import { Deferred, Effect, Fiber, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { afterEach, describe, expect } from "vitest"
import { Chain, type TokenTransfer, type VerifiedTransfer } from "../../src/chain/Chain.ts"
import { ChainMock } from "../../src/chain/ChainMock.ts"
import { httpTest } from "../support/fixture.ts"
import { mockModeWith } from "../support/mockModeWith.ts"
import { TransferLifecycleMock } from "../../src/provider/mock/TransferLifecycleMock.ts"
import {
  BREB,
  decodePayoutList,
  expectContractEncoding,
  expectError,
  newPartner,
  newTxHash,
  type Partner,
  PAYOUTS,
  runApp,
  sql
} from "../support/flows.ts"
import { Lifecycle } from "../../src/payouts/Lifecycle.ts"
import { bridgeProgress } from "../../src/provider/bridge/TransferStates.ts"

type Receipt = (txHash: string, mock: Chain["Service"]) => Effect.Effect<VerifiedTransfer, never>
const mockReceipt: Receipt = (txHash, mock) => Effect.orDie(mock.receiptTransfers({ txHash }))
let receipt: Receipt = mockReceipt
let receiptReads: Array<string> = []

const ScriptedChain = Layer.effect(
  Chain,
  Effect.map(Chain, (mock) =>
    Chain.of({
      ...mock,
      receiptTransfers: ({ txHash }) =>
        Effect.suspend(() => {
          receiptReads.push(txHash)
          return receipt(txHash, mock)
        })
    }))
).pipe(Layer.provide(ChainMock))

const it = httpTest({
  // confirmed payouts stay deposit_confirmed until a test moves them; CHAIN_ID: batches carry their `calls`
  env: { MOCK_LIFECYCLE_DELAY_MS: "3600000", CHAIN_ID: "42220" },
  app: mockModeWith({ chain: ScriptedChain, outbox: TransferLifecycleMock })
})
afterEach(() => {
  receipt = mockReceipt
  receiptReads = []
})

const BATCHES = `${BREB}/payout-batches`
const API = "/api/integrations"
const decodeBatch = Schema.decodeUnknownSync(PayoutBatch)

const item = (destinationCop: string, reference: string) => ({
  destinationCop,
  breBKey: `@${reference.replace(/[^A-Za-z0-9]/g, "")}`,
  accountOwnerName: "Lucia Gomez",
  reference
})

const createBatch = async (partner: Partner, user: string, amounts: ReadonlyArray<string>) => {
  const created = await partner.post(BATCHES, {
    userAddress: user,
    items: amounts.map((amount, index) => item(amount, `ref-${index}`))
  })
  expect(created.status, created.text).toBe(201)
  return decodeBatch(created.json)
}

const confirmBatch = (partner: Partner, batchId: string, txHash: string) =>
  partner.post(`${BATCHES}/${batchId}/confirm`, { txHash })

const confirmed = async (partner: Partner, batchId: string, txHash: string) => {
  const answer = await confirmBatch(partner, batchId, txHash)
  expect(answer.status, answer.text).toBe(200)
  expectContractEncoding(PayoutBatch, answer, 200)
  return decodeBatch(answer.json)
}

const eventsOf = async (partner: Partner, batchId: string) => {
  const listed = await partner.get(`${API}/events`, { resourceId: batchId })
  expect(listed.status, listed.text).toBe(200)
  return Schema.decodeUnknownSync(EventList)(listed.json).items
}

/** What the user's wallet logs sending the batch's `calls`: one Transfer per `transfer(to, amount)` call. */
const transfersOfCalls = (batch: PayoutBatch): Array<TokenTransfer> =>
  batch.calls!.calls.map((call) => ({
    token: call.to,
    from: batch.userAddress,
    to: `0x${call.data.slice(34, 74)}`,
    value: BigInt(`0x${call.data.slice(-64)}`)
  }))

/** Backends of this database waiting to lock a batch's row. */
const batchLockWaiters = (q: SqlClient.SqlClient) =>
  q<{ n: number }>`
    SELECT count(*)::int AS n FROM pg_stat_activity
    WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%FROM payout_batches WHERE id%'`
    .pipe(Effect.map((rows) => rows[0]?.n ?? 0))

const minedWith = (transfers: ReadonlyArray<TokenTransfer>): Receipt => () =>
  Effect.succeed({ minedAt: new Date(), transfers })

describe("confirming a batch with one transaction", () => {
  it("mock: confirms every payout with the batch's hash; the same hash again is the same answer, read once", async ({ partner, user }) => {
    const batch = await createBatch(partner, user, ["250000", "120000.50", "90000"])
    const txHash = newTxHash()
    const answer = await confirmed(partner, batch.batchId, txHash)
    expect(answer.status).toBe("confirmed")
    expect(answer.txHash).toBe(txHash)
    for (const entry of answer.items) {
      expect(entry.payout?.status).toBe("deposit_confirmed")
      expect(entry.payout?.txHash).toBe(txHash)
      expect(entry.depositError).toBeNull()
    }
    expect(await confirmed(partner, batch.batchId, txHash.toUpperCase().replace("0X", "0x"))).toEqual(answer)
    expect(receiptReads).toEqual([txHash])

    // the list of payouts finds them all by the one hash
    const byHash = await partner.get(PAYOUTS, { txHash })
    expect(decodePayoutList(byHash.json).items.map((payout) => payout.payoutId).sort()).toEqual(
      answer.items.map((entry) => entry.payout!.payoutId).sort()
    )
    const events = await eventsOf(partner, batch.batchId)
    expect(events.map((event) => [event.type, event.sequence])).toEqual([["payout_batch.confirmed", 1]])
    expect((events[0]!.data.object as PayoutBatch).status).toBe("confirmed")
  })

  it("a hash is the batch's alone: another hash after it is 409, and it confirms no other payout, batch or swap", async ({ partner, user }) => {
    const batch = await createBatch(partner, user, ["250000"])
    const txHash = newTxHash()
    await confirmed(partner, batch.batchId, txHash)
    expectError(await confirmBatch(partner, batch.batchId, newTxHash()), 409)

    const other = await createBatch(partner, user, ["100000"])
    expectError(await confirmBatch(partner, other.batchId, txHash), 409, "tx_hash_reused")
    const single = await partner.payout(user)
    expectError(await partner.confirm(single.payoutId, { txHash }), 409, "tx_hash_reused")

    // and a hash a payout already has does not confirm a batch
    const singleHash = newTxHash()
    expect((await partner.confirm(single.payoutId, { txHash: singleHash })).status).toBe(200)
    expectError(await confirmBatch(partner, other.batchId, singleHash), 409, "tx_hash_reused")
  })

  it("live receipt: an item whose transfer is short stays awaiting with its reason; the fee is verified from the same receipt", async ({ partner, user }) => {
    const batch = await createBatch(partner, user, ["250000", "120000", "90000"])
    const transfers = transfersOfCalls(batch)
    const shortIndex = 1
    const short = transfers[shortIndex]!
    transfers[shortIndex] = { ...short, value: short.value - 1n }
    receipt = minedWith(transfers)

    const answer = await confirmed(partner, batch.batchId, newTxHash())
    expect(answer.status).toBe("partially_confirmed")
    expect(answer.items.map((entry) => entry.payout?.status)).toEqual([
      "deposit_confirmed",
      "awaiting_deposit",
      "deposit_confirmed"
    ])
    expect(answer.items[shortIndex]!.depositError?.error).toMatch(
      /^items\.1: txHash transfers [0-9]+\.[0-9]{6} USDC to its deposit address 0x[0-9a-fA-F]{40}, less than its deposit of [0-9]+\.[0-9]{6} USDC$/
    )
    expect(answer.items[shortIndex]!.payout?.txHash).toBeNull()
    const paid = answer.items.filter((entry) => entry.index !== shortIndex)
    for (const entry of paid) {
      expect(entry.depositError).toBeNull()
      expect(entry.payout?.feeTxHash).toBe(answer.txHash)
      expect(entry.payout?.fees.find((leg) => leg.code === "copby")?.status).toBe("verified")
    }
    // what GET answers later says the same
    const read = await partner.get(`${BATCHES}/${batch.batchId}`)
    expect(decodeBatch(read.json)).toEqual(answer)
  })

  it("live receipt: payouts sharing a deposit address are paid only together: what reached it must cover all of them", async ({ server, partner, user }) => {
    const batch = await createBatch(partner, user, ["250000", "120000", "90000"])
    const [first, second] = batch.items.map((entry) => entry.payout!)
    const shared = first!.deposit.address
    await sql(
      server,
      (q) => q`UPDATE payouts SET deposit_address = ${shared} WHERE id = ${second!.payoutId} RETURNING id`
    )
    const transfers = transfersOfCalls(batch)
    // both deposits reach the shared address, one base unit short in all; the third and the fee in full
    transfers[0] = { ...transfers[0]!, to: shared }
    transfers[1] = { ...transfers[1]!, to: shared, value: transfers[1]!.value - 1n }
    receipt = minedWith(transfers)
    const answer = await confirmed(partner, batch.batchId, newTxHash())
    expect(answer.items.map((entry) => entry.payout?.status)).toEqual([
      "awaiting_deposit",
      "awaiting_deposit",
      "deposit_confirmed"
    ])
    for (const index of [0, 1]) {
      expect(answer.items[index]!.depositError?.error).toMatch(
        new RegExp(
          `^items\\.${index}: txHash transfers [0-9.]+ USDC to its deposit address ${shared}, less than the deposits of the 2 payouts of the batch that share it`
        )
      )
    }
  })

  it("live receipt: a fee transfer short of the confirmed payouts' fees leaves their fee legs pending", async ({ partner, user }) => {
    const batch = await createBatch(partner, user, ["250000", "120000"])
    const transfers = transfersOfCalls(batch)
    const fee = transfers.at(-1)!
    transfers[transfers.length - 1] = { ...fee, value: fee.value - 1n }
    receipt = minedWith(transfers)
    const answer = await confirmed(partner, batch.batchId, newTxHash())
    expect(answer.status).toBe("confirmed")
    for (const entry of answer.items) {
      expect(entry.payout?.feeTxHash).toBeNull()
      expect(entry.payout?.fees.find((leg) => leg.code === "copby")?.status).toBe("pending")
    }
  })

  it("live receipt: a transaction that pays none of the items is refused whole, and its hash stays free", async ({ server, partner, user }) => {
    const batch = await createBatch(partner, user, ["250000", "120000"])
    const stranger = transfersOfCalls(batch).map((transfer) => ({
      ...transfer,
      from: "0x000000000000000000000000000000000000dEaD"
    }))
    receipt = minedWith(stranger)
    const txHash = newTxHash()
    const refused = expectError(await confirmBatch(partner, batch.batchId, txHash), 409)
    expect(refused).toMatch(/confirms none of the batch's payouts/)
    expect(refused).toMatch(/items\.0: txHash has no USDC transfer from/)
    const claims = await sql(server, (q) => q`SELECT tx_hash FROM tx_hash_claims WHERE tx_hash = ${txHash}`)
    expect(claims).toEqual([])
    const read = decodeBatch((await partner.get(`${BATCHES}/${batch.batchId}`)).json)
    expect(read.txHash).toBeNull()
    expect(read.items.map((entry) => entry.payout?.status)).toEqual(["awaiting_deposit", "awaiting_deposit"])

    // the wallet's real transaction confirms it afterwards
    receipt = minedWith(transfersOfCalls(batch))
    expect((await confirmed(partner, batch.batchId, newTxHash())).status).toBe("confirmed")
  })

  it("an item whose deposit window closed before the transaction was mined says requote; the others are confirmed", async ({ server, partner, user }) => {
    const batch = await createBatch(partner, user, ["250000", "120000"])
    // mined a minute after the first payout's window closed, inside the second's (moved later)
    const late = batch.items[0]!.payout!
    const minedAt = new Date(Date.parse(late.expiresAt) + 60_000)
    const inTime = batch.items[1]!.payout!.payoutId
    await sql(
      server,
      (q) =>
        q`UPDATE payouts SET expires_at = ${new Date(minedAt.getTime() + 60_000)} WHERE id = ${inTime} RETURNING id`
    )
    receipt = () => Effect.succeed({ minedAt, transfers: transfersOfCalls(batch) })
    const answer = await confirmed(partner, batch.batchId, newTxHash())
    expect(answer.items[0]!.depositError?.errorCode).toBe("requote")
    expect(answer.items[0]!.payout?.status).toBe("awaiting_deposit")
    expect(answer.items[1]!.payout?.status).toBe("deposit_confirmed")
  })

  it("payout_batch.finished is sent once, when its last payout finishes, with the batch's final status", async ({ server, partner, user }) => {
    const batch = await createBatch(partner, user, ["250000", "120000"])
    await confirmed(partner, batch.batchId, newTxHash())
    const [first, second] = batch.items.map((entry) => entry.payout!.payoutId)
    // the provider's word on each transfer, as its webhooks bring it
    const report = async (payoutId: string, state: string) => {
      const [row] = await sql<{ provider_transfer_id: string }>(
        server,
        (q) => q`SELECT provider_transfer_id FROM payouts WHERE id = ${payoutId}`
      )
      const moved = await runApp(
        server,
        Effect.flatMap(Lifecycle, (lifecycle) =>
          lifecycle.applyTransferProgress({
            progress: bridgeProgress({ id: row!.provider_transfer_id, state }),
            source: "provider_webhook"
          }))
      )
      expect(moved).toBe(true)
    }
    await report(first!, "payment_processed")
    expect((await eventsOf(partner, batch.batchId)).map((event) => event.type)).toEqual(["payout_batch.confirmed"])
    await report(second!, "error")
    await report(second!, "returned") // failed, then refunded: a second finished status, no second batch event
    const events = await eventsOf(partner, batch.batchId)
    expect(events.map((event) => [event.type, event.sequence])).toEqual([
      ["payout_batch.confirmed", 1],
      ["payout_batch.finished", 2]
    ])
    expect((events[1]!.data.object as PayoutBatch).status).toBe("completed_with_failures")
    const read = decodeBatch((await partner.get(`${BATCHES}/${batch.batchId}`)).json)
    expect(read.status).toBe("completed_with_failures")
  })

  it("two payouts of a batch finishing at once: the second waits for the first's transaction, and the batch's finished is sent once", async ({ server, partner, user }) => {
    const batch = await createBatch(partner, user, ["250000", "120000"])
    await confirmed(partner, batch.batchId, newTxHash())
    const transferIds = await Promise.all(batch.items.map(async (entry) => {
      const [row] = await sql<{ provider_transfer_id: string }>(
        server,
        (q) => q`SELECT provider_transfer_id FROM payouts WHERE id = ${entry.payout!.payoutId}`
      )
      return row!.provider_transfer_id
    }))
    const waited = await runApp(
      server,
      Effect.gen(function*() {
        const q = yield* SqlClient.SqlClient
        const lifecycle = yield* Lifecycle
        const completed = (transferId: string) =>
          lifecycle.applyTransferProgress({
            progress: bridgeProgress({ id: transferId, state: "payment_processed" }),
            source: "provider_webhook"
          })
        const applied = yield* Deferred.make<void>()
        const commit = yield* Deferred.make<void>()
        // The first payout's completion inside a transaction kept open.
        const first = yield* Effect.forkChild(
          q.withTransaction(
            completed(transferIds[0]!).pipe(
              Effect.andThen(Deferred.succeed(applied, undefined)),
              Effect.andThen(Deferred.await(commit))
            )
          )
        )
        yield* Deferred.await(applied)
        const second = yield* Effect.forkChild(completed(transferIds[1]!))
        const outcome = yield* Effect.raceFirst(
          Effect.gen(function*() {
            while ((yield* batchLockWaiters(q)) === 0) yield* Effect.sleep("20 millis")
            return "waited for the batch" as const
          }),
          Fiber.join(second).pipe(Effect.as("went on beside the open transaction" as const))
        ).pipe(Effect.timeoutOrElse({ duration: "20 seconds", orElse: () => Effect.succeed("neither" as const) }))
        yield* Deferred.succeed(commit, undefined)
        yield* Fiber.join(first)
        yield* Fiber.join(second)
        return outcome
      })
    )
    expect(waited).toBe("waited for the batch")
    const events = await eventsOf(partner, batch.batchId)
    expect(events.map((event) => event.type)).toEqual(["payout_batch.confirmed", "payout_batch.finished"])
    expect((events[1]!.data.object as PayoutBatch).status).toBe("completed")
  })

  it("another integration's batch is 404 to confirm", async ({ server, partner, user }) => {
    const batch = await createBatch(partner, user, ["250000"])
    const stranger = await newPartner(server)
    expectError(await confirmBatch(stranger, batch.batchId, newTxHash()), 404)
  })
})

describe("the list of batches", () => {
  it("pages the integration's batches oldest first, each summed up; another integration's are not in it", async ({ server, user, partner }) => {
    const own = await newPartner(server)
    const owner = await own.approvedUser()
    const made = [
      await createBatch(own, owner, ["250000"]),
      await createBatch(own, owner, ["120000", "90000"]),
      await createBatch(own, owner, ["80000"])
    ]
    await createBatch(partner, user, ["250000"])
    await confirmed(own, made[1]!.batchId, newTxHash())

    const first = await own.get(BATCHES, { limit: "2" })
    expect(first.status, first.text).toBe(200)
    expectContractEncoding(PayoutBatchList, first, 200)
    const page1 = Schema.decodeUnknownSync(PayoutBatchList)(first.json)
    expect(page1.items).toHaveLength(2)
    const second = await own.get(BATCHES, { limit: "2", cursor: page1.nextCursor! })
    const page2 = Schema.decodeUnknownSync(PayoutBatchList)(second.json)
    expect(page2.nextCursor).toBeNull()
    const listed = [...page1.items, ...page2.items]
    expect(listed.map((summary) => summary.batchId)).toEqual(made.map((batch) => batch.batchId))
    expect(listed.map((summary) => summary.status)).toEqual(["prepared", "confirmed", "prepared"])
    expect(listed.map((summary) => summary.itemCount)).toEqual([1, 2, 1])
    expect(listed.map((summary) => summary.totals)).toEqual(made.map((batch) => batch.totals))
  })
})
