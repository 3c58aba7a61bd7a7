/**
 * The soak run's invariant checks (scripts/soak/invariants.ts) on fabricated inputs: a clean run passes each, and
 * each kind of breakage it exists for fails it with the right count.
 */
import { describe, expect, it } from "vitest"
import {
  acknowledgedWritesPresent,
  allInvariants,
  hashRacesOneWinner,
  type Kill,
  noEventLost,
  noServerErrors,
  oneResourcePerKey,
  oneUsePerHash,
  type ReceivedDelivery,
  sequencesGapFree,
  type Snapshot,
  type Workload
} from "../../scripts/soak/invariants.ts"
import { signatureValid } from "../../scripts/soak/receiver.ts"
import { createHmac } from "node:crypto"

const H1 = `0x${"1".repeat(64)}`
const H2 = `0x${"2".repeat(64)}`

const snapshot: Snapshot = {
  payouts: [
    { id: "po_a", key: "k1", txHash: H1, feeTxHash: null },
    { id: "po_b", key: "k2", txHash: null, feeTxHash: null }
  ],
  swaps: [{ id: "sw_a", key: "sw-1001", txHash: H2 }],
  claims: [
    { txHash: H1, resourceKind: "payout", resourceId: "po_a", state: "claimed" },
    { txHash: H2, resourceKind: "swap", resourceId: "sw_a", state: "claimed" }
  ],
  events: [
    { id: "evt_1", type: "payout.created", resourceId: "po_a", sequence: 1, afterEndpoint: true },
    { id: "evt_2", type: "payout.deposit_confirmed", resourceId: "po_a", sequence: 2, afterEndpoint: true },
    { id: "evt_3", type: "payout.created", resourceId: "po_b", sequence: 1, afterEndpoint: true },
    { id: "evt_0", type: "kyc.approved", resourceId: "cus_x", sequence: 1, afterEndpoint: false }
  ],
  deliveries: [
    { eventId: "evt_1", state: "delivered" },
    { eventId: "evt_2", state: "delivered" },
    { eventId: "evt_3", state: "pending" }
  ]
}

const workload: Workload = {
  created: [
    { kind: "payout", key: "k1", id: "po_a" },
    { kind: "payout", key: "k1", id: "po_a" },
    { kind: "payout", key: "k2", id: "po_b" },
    { kind: "swap", key: "sw-1001", id: "sw_a" }
  ],
  confirmed: [
    { kind: "payout", id: "po_a", txHash: H1 },
    { kind: "payout", id: "po_a", txHash: H1 },
    { kind: "swap", id: "sw_a", txHash: H2.toUpperCase().replace("0X", "0x") }
  ],
  races: [
    {
      hash: H1,
      startedAt: 100,
      endedAt: 200,
      answers: [{ status: 200, errorCode: undefined }, { status: 409, errorCode: "tx_hash_reused" }]
    },
    {
      hash: H2,
      startedAt: 300,
      endedAt: 400,
      answers: [{ status: 409, errorCode: "requote" }, { status: 200, errorCode: undefined }]
    }
  ],
  serverErrors: [{ op: "create payout", status: 503, retryAfter: true, replica: 0, at: 1_000 }],
  connectionErrors: [{ op: "list", replica: 1, at: 5_100, error: "ECONNRESET" }]
}

const delivery = (over: Partial<ReceivedDelivery> & Pick<ReceivedDelivery, "eventId" | "sequence" | "at">) => ({
  type: "payout.created",
  resourceId: "po_a",
  signatureValid: true,
  answered: 200,
  ...over
})

const received: ReadonlyArray<ReceivedDelivery> = [
  delivery({ eventId: "evt_1", sequence: 1, at: 10, answered: 500 }),
  delivery({ eventId: "evt_1", sequence: 1, at: 20 }),
  delivery({ eventId: "evt_1", sequence: 1, at: 25 }), // redelivered after a kill: a duplicate, not a loss
  delivery({ eventId: "evt_2", sequence: 2, at: 30, type: "payout.deposit_confirmed" }),
  delivery({ eventId: "evt_3", sequence: 1, at: 40, resourceId: "po_b", answered: 0 })
]

const kills: ReadonlyArray<Kill> = [{ replica: 1, killedAt: 5_000, readyAt: 7_000 }]

describe("soak invariants", () => {
  it("a clean run passes every one", () => {
    const verdicts = allInvariants(snapshot, workload, received, kills)
    expect(verdicts.filter((v) => !v.ok)).toEqual([])
    expect(verdicts).toHaveLength(7)
  })

  it("two payouts for one key, or one key answered with two ids, break one resource per key", () => {
    const duplicated = {
      ...snapshot,
      payouts: [...snapshot.payouts, { id: "po_c", key: "k1", txHash: null, feeTxHash: null }]
    }
    const answeredTwice = {
      ...workload,
      created: [...workload.created, { kind: "payout" as const, key: "k1", id: "po_c" }]
    }
    expect(oneResourcePerKey(duplicated, workload)).toMatchObject({ ok: false, violations: 1 })
    expect(oneResourcePerKey(snapshot, answeredTwice)).toMatchObject({ ok: false, violations: 1 })
    expect(oneResourcePerKey(duplicated, answeredTwice).violations).toBe(2)
  })

  it("one hash on two resources, in the rows or in the 200s, breaks one use per hash (any letter case)", () => {
    const twice = {
      ...snapshot,
      swaps: [...snapshot.swaps, { id: "sw_b", key: "sw-1002", txHash: H1.toUpperCase().replace("0X", "0x") }]
    }
    expect(oneUsePerHash(twice, workload)).toMatchObject({ ok: false, violations: 1 })
    const bothWon = {
      ...workload,
      confirmed: [...workload.confirmed, { kind: "payout" as const, id: "po_b", txHash: H1 }]
    }
    expect(oneUsePerHash(snapshot, bothWon)).toMatchObject({ ok: false, violations: 1 })
    const asFee = {
      ...snapshot,
      payouts: [snapshot.payouts[0]!, { id: "po_b", key: "k2", txHash: null, feeTxHash: H1 }]
    }
    expect(oneUsePerHash(asFee, workload).ok).toBe(false)
  })

  it("a race with two winners, or whose loser is not told tx_hash_reused away from a kill, breaks the race check", () => {
    const race = (answers: Workload["races"][number]["answers"], startedAt = 100) => ({
      ...workload,
      races: [{ hash: H1, startedAt, endedAt: startedAt + 100, answers }]
    })
    const won = { status: 200, errorCode: undefined }
    expect(hashRacesOneWinner(race([won, won]), kills)).toMatchObject({ ok: false, violations: 1 })
    const plain409 = [won, { status: 409, errorCode: undefined, error: "this payout is already confirmed" }]
    const broken = hashRacesOneWinner(race(plain409), kills)
    expect(broken).toMatchObject({ ok: false, violations: 1 })
    // a codeless answer is told apart by its text
    expect(broken.examples.join("\n")).toContain(`409 "this payout is already confirmed"`)
    const noWinner = [{ status: 409, errorCode: "tx_hash_reused" }, { status: 409, errorCode: undefined }]
    expect(hashRacesOneWinner(race(noWinner), kills)).toMatchObject({ ok: false, violations: 1 })
    // while replica 1 was down (5 s to 7 s, and 2 s after), a confirm cut off mid-claim is excused
    expect(hashRacesOneWinner(race(noWinner, 6_000), kills)).toMatchObject({ ok: true })
    expect(hashRacesOneWinner(race([won, won], 6_000), kills)).toMatchObject({ ok: false, violations: 1 })
  })

  it("a 201 whose resource is missing, or a 200 confirm whose hash is not on it, breaks acknowledged writes", () => {
    const lost = { ...snapshot, payouts: snapshot.payouts.filter((p) => p.id !== "po_b") }
    expect(acknowledgedWritesPresent(lost, workload)).toMatchObject({ ok: false, violations: 1 })
    const unconfirmed = {
      ...snapshot,
      payouts: snapshot.payouts.map((p) => (p.id === "po_a" ? { ...p, txHash: null } : p))
    }
    // po_a was answered 200 twice
    expect(acknowledgedWritesPresent(unconfirmed, workload)).toMatchObject({ ok: false, violations: 2 })
    const foreign = { ...snapshot, swaps: [{ id: "sw_a", key: "sw-9999", txHash: H2 }] }
    expect(acknowledgedWritesPresent(foreign, workload)).toMatchObject({ ok: false, violations: 1 })
  })

  it("an owed event without a delivery, one failed, or delivered but never acknowledged is lost", () => {
    const missing = { ...snapshot, deliveries: snapshot.deliveries.filter((d) => d.eventId !== "evt_3") }
    expect(noEventLost(missing, received)).toMatchObject({ ok: false, violations: 1 })
    const failed = {
      ...snapshot,
      // given up on (the receiver did acknowledge it once, which does not make the database's record right)
      deliveries: snapshot.deliveries.map((d) => (d.eventId === "evt_2" ? { ...d, state: "failed" } : d))
    }
    expect(noEventLost(failed, received)).toMatchObject({ ok: false, violations: 1 })
    const neverAcknowledged = received.filter((r) => r.eventId !== "evt_2")
    expect(noEventLost(snapshot, neverAcknowledged)).toMatchObject({ ok: false, violations: 1 })
    // an event from before the endpoint owes nothing; pending is not lost
    expect(noEventLost(snapshot, received).checked).toContain("3 events owed, 1 still pending")
  })

  it("a delivery the database does not hold, or with a bad signature, fails the delivery check", () => {
    expect(noEventLost(snapshot, [...received, delivery({ eventId: "evt_x", sequence: 3, at: 50 })]).violations).toBe(1)
    expect(
      noEventLost(snapshot, [...received, delivery({ eventId: "evt_1", sequence: 1, at: 50, signatureValid: false })])
    )
      .toMatchObject({ ok: false, violations: 1 })
  })

  it("a gap or a repeat in the database's sequences, or the receiver's, or one out of order, is found", () => {
    const gap = {
      ...snapshot,
      events: snapshot.events.map((e) => (e.id === "evt_2" ? { ...e, sequence: 3 } : e))
    }
    expect(sequencesGapFree(gap, []).ok).toBe(false)
    const repeat = {
      ...snapshot,
      events: snapshot.events.map((e) => (e.id === "evt_2" ? { ...e, sequence: 1 } : e))
    }
    expect(sequencesGapFree(repeat, []).ok).toBe(false)
    const skipped = received.filter((r) => r.eventId !== "evt_1")
    expect(sequencesGapFree(snapshot, skipped)).toMatchObject({ ok: false })
    const outOfOrder = received.map((r) => (r.eventId === "evt_2" ? { ...r, at: 15 } : r))
    expect(sequencesGapFree(snapshot, outOfOrder)).toMatchObject({ ok: false, violations: 1 })
  })

  it("a 500, a 503 without Retry-After, or a lost connection away from a kill breaks the server-error check", () => {
    const with500 = {
      ...workload,
      serverErrors: [...workload.serverErrors, { ...workload.serverErrors[0]!, status: 500 }]
    }
    expect(noServerErrors(with500, kills)).toMatchObject({ ok: false, violations: 1 })
    const bare503 = { ...workload, serverErrors: [{ ...workload.serverErrors[0]!, retryAfter: false }] }
    expect(noServerErrors(bare503, kills)).toMatchObject({ ok: false, violations: 1 })
    const otherReplica = {
      ...workload,
      connectionErrors: [{ op: "list", replica: 0, at: 5_100, error: "ECONNREFUSED" }]
    }
    expect(noServerErrors(otherReplica, kills)).toMatchObject({ ok: false, violations: 1 })
    const longAfter = { ...workload, connectionErrors: [{ op: "list", replica: 1, at: 60_000, error: "ECONNRESET" }] }
    expect(noServerErrors(longAfter, kills)).toMatchObject({ ok: false, violations: 1 })
    expect(noServerErrors(workload, kills).checked).toBe("1 503s with Retry-After, 1 connection errors around kills")
  })

  it("checks a Standard Webhooks signature with the endpoint's secret, any of several", () => {
    const secret = `whsec_${Buffer.from("0123456789abcdef0123456789abcdef").toString("base64")}`
    const sign = (body: string) =>
      createHmac("sha256", Buffer.from(secret.slice(6), "base64")).update(`evt_1.1700000000.${body}`).digest("base64")
    const body = "{\"id\":\"evt_1\"}"
    expect(signatureValid(secret, "evt_1", "1700000000", body, `v1,${sign(body)}`)).toBe(true)
    expect(signatureValid(secret, "evt_1", "1700000000", body, `v1,AAAA v1,${sign(body)}`)).toBe(true)
    expect(signatureValid(secret, "evt_1", "1700000000", `${body} `, `v1,${sign(body)}`)).toBe(false)
    expect(signatureValid(secret, "evt_1", "1700000001", body, `v1,${sign(body)}`)).toBe(false)
  })
})
