/**
 * Batch payouts (R-BATCH-1, R-BATCH-2): a batch with valid and invalid items makes a payout of each valid one, as
 * the API answers it, and gives each invalid one its error; its totals are the exact sums and its calls move exactly
 * what the user pays; a batch without KYC, with nothing valid or from COPm is refused whole; another integration
 * does not see it (R-BATCH-2). In mock mode one hash confirms every payout of a batch, the batch is listed and its
 * `payout_batch.confirmed` event is there (R-BATCH-3).
 */
import type { Payout, PayoutBatch } from "@cop-integrations/contracts"
import { Effect } from "effect"
import { ok, rejected } from "../api.ts"
import { check, checkNamesField } from "../check.ts"
import { approvedUser, freshAddress, payoutRequest, randomTxHash } from "../fixtures.ts"
import { type Kit, scenario } from "../scenario.ts"

const MADE_RULE = "each valid item of a batch is a payout as the API answers it; each invalid one is its error"
const TOTALS_RULE = "a batch's totals are the exact sums of its payouts, and its calls move exactly totals.sourceAmount"
/** A payout whose deposit is in: confirmed, or moved on since. */
const FUNDED: ReadonlySet<string> = new Set(["deposit_confirmed", "processing", "completed", "failed", "refunded"])
const BATCH_FUNDED: ReadonlySet<string> = new Set(["confirmed", "completed", "completed_with_failures"])

const CONFIRM_RULE =
  "one txHash confirms every payout of a batch its transaction pays; the same hash again answers the same batch; another is 409"
const LIVE_RULE =
  "a batch of no items is a 400 naming items; an unknown batch is 404 to read and to confirm; the list answers pages"
const REFUSED_RULE =
  "a batch is refused whole without KYC, with nothing valid, or from COPm; another integration's is 404"

const item = (user: string, reference: string) => {
  const { accountOwnerName, breBKey, destinationCop } = payoutRequest(user)
  return { destinationCop, breBKey, accountOwnerName, reference }
}

/** A decimal string in base units of `decimals` (exact; the contract's amounts have at most that many). */
const units = (amount: string, decimals: number): bigint => {
  const [whole, fraction = ""] = amount.split(".")
  return BigInt(`${whole}${fraction.padEnd(decimals, "0").slice(0, decimals)}`)
}

/** The amount an ERC-20 `transfer(address,uint256)` call moves: the last 32 bytes of its calldata. */
const transferAmount = (data: string): bigint => BigInt(`0x${data.slice(-64)}`)

const USDC_DECIMALS = 6

const createBatch = (kit: Kit, body: unknown) =>
  Effect.flatMap(
    kit.call("createPayoutBatch", { json: body }),
    (reply) => Effect.map(ok(reply, "201 PayoutBatch"), (batch) => ({ batch, exchange: reply.exchange }))
  )

export const batchScenarios = [
  scenario({
    id: "BATCH-001",
    title: "a batch makes a payout of each valid item and gives each invalid one its error; totals and calls are exact",
    rules: ["R-BATCH-1"],
    tags: ["batches", "money"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const user = yield* approvedUser(kit)
        const { batch, exchange } = yield* createBatch(kit, {
          userAddress: user,
          items: [item(user, "kit-1"), { destinationCop: "50000", accountOwnerName: "Kit" }, item(user, "kit-3")]
        })
        const missing = batch.items[1]
        yield* check(
          missing?.payout === null && (missing.error?.error ?? "").includes("items.1.breBKey"),
          MADE_RULE,
          {
            expected: "item 1 (no breBKey): no payout, an error naming items.1.breBKey",
            actual: JSON.stringify(missing ?? null),
            exchange
          }
        )
        const made: Array<Payout> = []
        for (const entry of batch.items) if (entry.payout !== null) made.push(entry.payout)
        yield* check(made.length === 2 && batch.totals.count === 2, MADE_RULE, {
          expected: "2 payouts (items 0 and 2)",
          actual: `${made.length} payouts, totals.count ${batch.totals.count}`,
          exchange
        })
        for (const payout of made) {
          const one = yield* kit.call("getPayout", { path: { payoutId: payout.payoutId } })
          const answered = yield* ok(one, "the batch's payout")
          yield* check(JSON.stringify(answered) === JSON.stringify(payout), MADE_RULE, {
            expected: `${payout.payoutId} in the batch as GET payouts/${payout.payoutId} answers it`,
            actual: "they differ",
            exchange: one.exchange
          })
        }
        yield* checkTotals(batch, made, exchange)
      })
  }),
  scenario({
    id: "BATCH-003",
    title: "one hash confirms every payout of a batch (mock chain); again answers the same batch, another hash is 409",
    rules: ["R-BATCH-3"],
    tags: ["batches", "events"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const user = yield* approvedUser(kit)
        const { batch } = yield* createBatch(kit, {
          userAddress: user,
          items: [item(user, "kit-a"), item(user, "kit-b")]
        })
        const txHash = randomTxHash()
        const confirm = (hash: string) =>
          kit.call("confirmPayoutBatch", { path: { batchId: batch.batchId }, json: { txHash: hash } })
        const first = yield* confirm(txHash)
        const confirmed = yield* ok(first, "200 PayoutBatch")
        const statuses = confirmed.items.map((entry) => `${entry.payout?.status}:${entry.payout?.txHash === txHash}`)
        yield* check(
          confirmed.txHash === txHash && confirmed.status === "confirmed" &&
            statuses.every((status) => status === "deposit_confirmed:true"),
          CONFIRM_RULE,
          {
            expected: `the batch and both payouts deposit_confirmed with txHash ${txHash}`,
            actual: `batch ${confirmed.status} ${confirmed.txHash}; payouts ${statuses.join(", ")}`,
            exchange: first.exchange
          }
        )
        // Again: the same batch and hash, its payouts as they are now (the mock lifecycle may have moved them on).
        const again = yield* confirm(txHash)
        const replayed = yield* ok(again, "200 PayoutBatch")
        const paidBy = (batch: PayoutBatch) =>
          batch.items.map((entry) => `${entry.payout?.payoutId}:${entry.payout?.txHash}`).join(",")
        yield* check(
          replayed.batchId === confirmed.batchId && replayed.txHash === txHash &&
            paidBy(replayed) === paidBy(confirmed) &&
            replayed.items.every((entry) => FUNDED.has(entry.payout?.status ?? "")),
          CONFIRM_RULE,
          {
            expected: "the same batch, hash and payouts for the same hash, each still funded",
            actual: `${replayed.batchId} ${replayed.txHash}; ${
              replayed.items.map((entry) => entry.payout?.status).join(", ")
            }`,
            exchange: again.exchange
          }
        )
        yield* rejected(yield* confirm(randomTxHash()), 409, "none", CONFIRM_RULE)

        const events = yield* kit.call("listEvents", { query: { resourceId: batch.batchId } })
        const types = (yield* ok(events, "200 EventList")).items.map((event) => `${event.type}#${event.sequence}`)
        // (payout_batch.finished may follow, once the mock lifecycle has finished every payout)
        yield* check(types[0] === "payout_batch.confirmed#1", CONFIRM_RULE, {
          expected: "the batch's first event: payout_batch.confirmed, sequence 1",
          actual: types.join(", ") || "none",
          exchange: events.exchange
        })
        const listed = yield* kit.call("listPayoutBatches", { query: { limit: "500" } })
        const summary = (yield* ok(listed, "200 PayoutBatchList")).items.find((entry) =>
          entry.batchId === batch.batchId
        )
        yield* check(BATCH_FUNDED.has(summary?.status ?? "") && summary?.txHash === txHash, CONFIRM_RULE, {
          expected: `${batch.batchId} listed, confirmed (or completed since) with ${txHash}`,
          actual: JSON.stringify(summary ?? null),
          exchange: listed.exchange
        })
      })
  }),
  scenario({
    id: "BATCH-004",
    title: "batch endpoints answer by the contract in any mode: empty batch 400, unknown batch 404, the list pages",
    rules: ["R-BATCH-4"],
    tags: ["batches"],
    run: (kit) =>
      Effect.gen(function*() {
        const empty = yield* kit.call("createPayoutBatch", { json: { userAddress: freshAddress(), items: [] } })
        yield* checkNamesField(LIVE_RULE, yield* rejected(empty, 400, "none", LIVE_RULE), "items", empty.exchange)
        const unknown = "pb_conformanceUnknown0000"
        yield* rejected(yield* kit.call("getPayoutBatch", { path: { batchId: unknown } }), 404, "none", LIVE_RULE)
        yield* rejected(
          yield* kit.call("confirmPayoutBatch", { path: { batchId: unknown }, json: { txHash: randomTxHash() } }),
          404,
          "none",
          LIVE_RULE
        )
        const listed = yield* kit.call("listPayoutBatches", { query: { limit: "1" } })
        const page = yield* ok(listed, "200 PayoutBatchList")
        yield* check(page.items.length <= 1, LIVE_RULE, {
          expected: "at most 1 batch (limit 1)",
          actual: `${page.items.length}`,
          exchange: listed.exchange
        })
      })
  }),
  scenario({
    id: "BATCH-002",
    title: "a batch is refused whole without KYC, with nothing valid or from COPm; another integration's batch is 404",
    rules: ["R-BATCH-2"],
    tags: ["batches", "isolation"],
    requires: { mock: true, moneyMoving: true, secondKey: true },
    run: (kit) =>
      Effect.gen(function*() {
        const stranger = freshAddress()
        yield* rejected(
          yield* kit.call("createPayoutBatch", { json: { userAddress: stranger, items: [item(stranger, "x")] } }),
          409,
          "needs_kyc",
          REFUSED_RULE
        )
        const user = yield* approvedUser(kit)
        const nothing = yield* kit.call("createPayoutBatch", {
          json: { userAddress: user, items: [{ destinationCop: "50000" }] }
        })
        yield* checkNamesField(
          REFUSED_RULE,
          yield* rejected(nothing, 400, "none", REFUSED_RULE),
          "items",
          nothing.exchange
        )
        const copm = yield* kit.call("createPayoutBatch", {
          json: { userAddress: user, fromToken: "COPm", items: [item(user, "c")] }
        })
        yield* checkNamesField(
          REFUSED_RULE,
          yield* rejected(copm, 400, "none", REFUSED_RULE),
          "fromToken",
          copm.exchange
        )
        const { batch } = yield* createBatch(kit, { userAddress: user, items: [item(user, "mine")] })
        yield* rejected(
          yield* kit.call("getPayoutBatch", { path: { batchId: batch.batchId }, auth: "second" }),
          404,
          "none",
          REFUSED_RULE
        )
      })
  })
]

const checkTotals = (
  batch: PayoutBatch,
  made: ReadonlyArray<Payout>,
  exchange: Parameters<typeof check>[2]["exchange"]
) =>
  Effect.gen(function*() {
    const sum = (amounts: ReadonlyArray<string>, decimals: number) =>
      amounts.reduce((total, amount) => total + units(amount, decimals), 0n)
    const sources = sum(made.map((payout) => payout.sourceAmount), USDC_DECIMALS)
    const deposits = sum(made.map((payout) => payout.deposit.amount), USDC_DECIMALS)
    const wrong = [
      ["sourceAmount", units(batch.totals.sourceAmount, USDC_DECIMALS), sources],
      ["depositAmount", units(batch.totals.depositAmount, USDC_DECIMALS), deposits],
      ["serviceFee", units(batch.totals.serviceFee, USDC_DECIMALS), sources - deposits],
      ["destinationCop", units(batch.totals.destinationCop, 2), sum(made.map((payout) => payout.destinationCop), 2)]
    ].filter(([, stated, summed]) => stated !== summed)
    yield* check(wrong.length === 0, TOTALS_RULE, {
      expected: "totals equal to the sums of the payouts' amounts",
      actual: wrong.map(([name, stated, summed]) =>
        `${String(name)}: ${String(stated)} units, the sum ${String(summed)}`
      )
        .join("; "),
      exchange
    })
    const moved = [...made.map((payout) => payout.transaction.data), batch.feeTransaction.data]
      .reduce((total, data) => total + transferAmount(data), 0n)
    yield* check(moved === sources, TOTALS_RULE, {
      expected: `the deposits and the one fee transfer moving ${batch.totals.sourceAmount} in all`,
      actual: `${moved} base units`,
      exchange
    })
  })
