import type { Payout } from "@cop-integrations/contracts"
import { Effect } from "effect"
import { ok, rejected } from "../api.ts"
import { check, checkEqual, checkNamesField } from "../check.ts"
import { show } from "../failure.ts"
import { confirmPayout, preparedPayout, randomTxHash, uniqueSuffix } from "../fixtures.ts"
import type { Answered } from "../http.ts"
import { type Kit, scenario } from "../scenario.ts"

const confirm = (kit: Kit, payoutId: string, body: unknown, headers: Record<string, string> = {}) =>
  kit.call("confirmPayout", { path: { payoutId }, json: body, headers })

const get = (kit: Kit, payoutId: string) =>
  Effect.flatMap(
    kit.call("getPayout", { path: { payoutId } }),
    (reply) => Effect.map(ok(reply, "200 with the payout"), (payout) => ({ payout, exchange: reply.exchange }))
  )

const CONFIRMED = new Set(["deposit_confirmed", "processing", "completed"])

/** The hash with its hex digits in upper case (the same hash, another case). */
const otherCase = (hash: string): string => `0x${hash.slice(2).toUpperCase()}`

const sameHash = (a: string | null, b: string): boolean => a !== null && a.toLowerCase() === b.toLowerCase()

const REUSE_RULE = "a txHash confirms one payout only: a second payout with it is 409 tx_hash_reused"

const checkUnclaimed = (payout: Payout, exchange: Answered, rule: string) =>
  check(payout.status === "awaiting_deposit" && payout.txHash === null, rule, {
    expected: "the payout still awaiting_deposit, txHash null",
    actual: show({ status: payout.status, txHash: payout.txHash }),
    exchange
  })

/** A prepared payout confirmed with a fresh txHash. */
const confirmedPayout = (kit: Kit) =>
  Effect.gen(function*() {
    const payout = yield* preparedPayout(kit)
    const txHash = randomTxHash()
    const confirmed = yield* confirmPayout(kit, payout.payoutId, { txHash })
    return { payout, txHash, confirmed }
  })

/** Two prepared payouts; the first confirmed with `hash`. */
const oneConfirmedOneNot = (kit: Kit, hash: string) =>
  Effect.gen(function*() {
    const first = yield* preparedPayout(kit)
    const second = yield* preparedPayout(kit)
    yield* confirmPayout(kit, first.payoutId, { txHash: hash })
    return { first, second }
  })

export const confirmScenarios = [
  scenario({
    id: "PAYOUT-CONFIRM-001",
    title: "confirming with a txHash answers 200 with the payout confirmed and the hash recorded",
    rules: ["R-CONFIRM-1"],
    tags: ["confirm", "payout"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const payout = yield* preparedPayout(kit)
        const txHash = randomTxHash()
        const reply = yield* confirm(kit, payout.payoutId, { txHash })
        const confirmed = yield* ok(reply, "200 with the updated payout")
        yield* check(
          CONFIRMED.has(confirmed.status) && confirmed.receipt.status === confirmed.status,
          "a confirmed payout has moved on from awaiting_deposit",
          {
            expected: "status deposit_confirmed (or later), the same on the receipt",
            actual: show({ status: confirmed.status, receiptStatus: confirmed.receipt.status }),
            exchange: reply.exchange
          }
        )
        yield* check(sameHash(confirmed.txHash, txHash), "the payout records its txHash", {
          expected: txHash,
          actual: show(confirmed.txHash),
          exchange: reply.exchange
        })
        yield* checkEqual("the same payout comes back", confirmed.payoutId, payout.payoutId, reply.exchange)
        const legsAfterConfirm = confirmed.fees.every((leg) =>
          leg.code === "copby" ? leg.status === "pending" : leg.status === "pending" || leg.status === "verified"
        )
        yield* check(
          legsAfterConfirm,
          "after confirmation provider legs are pending until settled, copby pending without a feeTxHash",
          {
            expected: "bridge_fx and bridge pending (or verified), copby pending",
            actual: confirmed.fees.map((leg) => `${leg.code}:${leg.status}`).join(", "),
            exchange: reply.exchange
          }
        )
      })
  }),
  scenario({
    id: "PAYOUT-CONFIRM-002",
    title: "confirming again with the same txHash, in any letter case, answers the payout unchanged",
    rules: ["R-CONFIRM-2"],
    tags: ["confirm", "payout", "idempotency"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const { confirmed: first, payout, txHash } = yield* confirmedPayout(kit)
        for (const again of [txHash, otherCase(txHash)]) {
          const reply = yield* confirm(kit, payout.payoutId, { txHash: again })
          const repeated = yield* ok(
            reply,
            "200: a repeated confirmation is idempotent (hashes compare case-insensitively)"
          )
          yield* check(
            repeated.payoutId === first.payoutId && sameHash(repeated.txHash, txHash) && CONFIRMED.has(repeated.status),
            "a repeated confirmation changes nothing",
            {
              expected: show({ payoutId: first.payoutId, txHash: first.txHash, status: `${first.status} or later` }),
              actual: show({ payoutId: repeated.payoutId, txHash: repeated.txHash, status: repeated.status }),
              exchange: reply.exchange
            }
          )
        }
      })
  }),
  scenario({
    id: "PAYOUT-CONFIRM-003",
    title: "a txHash that already confirms another payout is 409 tx_hash_reused",
    rules: ["R-TXHASH-1"],
    tags: ["confirm", "payout", "errors"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const hash = randomTxHash()
        const { second } = yield* oneConfirmedOneNot(kit, hash)
        yield* rejected(yield* confirm(kit, second.payoutId, { txHash: hash }), 409, "tx_hash_reused", REUSE_RULE)
        const after = yield* get(kit, second.payoutId)
        yield* checkUnclaimed(after.payout, after.exchange, "a rejected confirmation leaves the payout as it was")
      })
  }),
  scenario({
    id: "PAYOUT-CONFIRM-004",
    title: "the same txHash in another letter case is also 409 tx_hash_reused",
    rules: ["R-TXHASH-1"],
    tags: ["confirm", "payout", "errors"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const hash = randomTxHash()
        const { second } = yield* oneConfirmedOneNot(kit, hash)
        yield* rejected(
          yield* confirm(kit, second.payoutId, { txHash: otherCase(hash) }),
          409,
          "tx_hash_reused",
          "hashes compare case-insensitively"
        )
      })
  }),
  scenario({
    id: "PAYOUT-CONFIRM-005",
    title: "after a rejected reuse the payout can still be confirmed with its own hash",
    rules: ["R-CONFIRM-6", "R-TXHASH-1"],
    tags: ["confirm", "payout"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const hash = randomTxHash()
        const { second } = yield* oneConfirmedOneNot(kit, hash)
        yield* rejected(yield* confirm(kit, second.payoutId, { txHash: hash }), 409, "tx_hash_reused", REUSE_RULE)
        yield* confirmPayout(kit, second.payoutId, { txHash: randomTxHash() })
      })
  }),
  scenario({
    id: "PAYOUT-CONFIRM-006",
    title: "a txHash not matching ^0x[a-fA-F0-9]{64}$, or none, is 400 naming txHash",
    rules: ["R-CONFIRM-4"],
    tags: ["confirm", "validation", "read-only"],
    run: (kit) =>
      Effect.gen(function*() {
        const valid = randomTxHash()
        const payoutId = `po_conformance_${uniqueSuffix()}`
        const invalid = [valid.slice(0, -1), `${valid}0`, valid.slice(2), `0x${"g".repeat(64)}`, ` ${valid}`, 42, null]
        for (const txHash of invalid) {
          const reply = yield* confirm(kit, payoutId, { txHash })
          const error = yield* rejected(reply, 400, "none", `txHash ${JSON.stringify(txHash)} is not a TxHash`)
          yield* checkNamesField("the 400 names txHash", error, "txHash", reply.exchange)
        }
        const reply = yield* confirm(kit, payoutId, {})
        const error = yield* rejected(reply, 400, "none", "a confirmation without txHash is 400")
        yield* checkNamesField("the 400 names txHash", error, "txHash", reply.exchange)
      })
  }),
  scenario({
    id: "PAYOUT-CONFIRM-007",
    title: "confirming a confirmed payout with a different txHash is 409 and keeps the first hash",
    rules: ["R-CONFIRM-3"],
    tags: ["confirm", "payout", "errors"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const { payout, txHash } = yield* confirmedPayout(kit)
        yield* rejected(
          yield* confirm(kit, payout.payoutId, { txHash: randomTxHash() }),
          409,
          undefined,
          "a payout is confirmed once"
        )
        const after = yield* get(kit, payout.payoutId)
        yield* check(sameHash(after.payout.txHash, txHash), "the first txHash stays", {
          expected: txHash,
          actual: show(after.payout.txHash),
          exchange: after.exchange
        })
      })
  }),
  scenario({
    id: "PAYOUT-CONFIRM-008",
    title: "confirming a payout that does not exist is 404 ErrorBody",
    rules: ["R-TENANT-1"],
    tags: ["confirm", "errors", "read-only"],
    run: (kit) =>
      Effect.flatMap(
        confirm(kit, `po_conformance_${uniqueSuffix()}`, { txHash: randomTxHash() }),
        (reply) => rejected(reply, 404, "none", "an unknown payoutId is 404")
      )
  }),
  scenario({
    id: "PAYOUT-CONFIRM-009",
    title: "a feeTxHash is recorded and, in mock mode, verifies the copby leg at confirmation",
    rules: ["R-CONFIRM-5"],
    tags: ["confirm", "payout", "fees"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const payout = yield* preparedPayout(kit)
        const feeTxHash = randomTxHash()
        const reply = yield* confirm(kit, payout.payoutId, { txHash: randomTxHash(), feeTxHash })
        const confirmed = yield* ok(reply, "200 with the updated payout")
        yield* check(sameHash(confirmed.feeTxHash, feeTxHash), "the payout records its feeTxHash", {
          expected: feeTxHash,
          actual: show(confirmed.feeTxHash),
          exchange: reply.exchange
        })
        const copby = confirmed.fees.find((leg) => leg.code === "copby")
        yield* checkEqual("the copby leg is verified", copby?.status, "verified", reply.exchange)
        yield* checkEqual(
          "fees and receipt.feesItemized stay the same legs",
          confirmed.receipt.feesItemized,
          confirmed.fees,
          reply.exchange
        )
      })
  }),
  scenario({
    id: "PAYOUT-CONFIRM-010",
    title: "confirming after the deposit window closed is 409 requote",
    rules: ["R-CONFIRM-6", "R-MOCK-1"],
    tags: ["confirm", "payout", "errors"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const payout = yield* preparedPayout(kit)
        const reply = yield* confirm(kit, payout.payoutId, { txHash: randomTxHash() }, { "X-Mock-Scenario": "requote" })
        yield* rejected(reply, 409, "requote", "a closed deposit window is requote")
        const after = yield* get(kit, payout.payoutId)
        yield* checkUnclaimed(after.payout, after.exchange, "a rejected confirmation leaves the payout as it was")
      })
  })
]
