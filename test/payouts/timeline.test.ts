/**
 * A payout's timeline (issue #22): each hop of a mock payout, in order, with who reported it; the `expired` hop from
 * the expiry sweep; and stuck payouts: `payout.delayed` once, for a payout in flight unchanged past
 * PAYOUT_DELAYED_AFTER_MINUTES, never for one awaiting its deposit or finished. Time is driven through the database
 * (the payouts' `updated_at` moved back), the sweeps run by hand (the worker is off). A deposit's block time, which
 * mock mode's chain has none of, comes from a chain stand-in that reports chosen block times for chosen hashes.
 */
import type { Payout, PayoutTimelineHop } from "@cop-integrations/contracts"
import { Effect, Layer } from "effect"
import { describe, expect } from "vitest"
import { mockMode, serverLayerFor } from "../../src/App.ts"
import { now } from "../../src/base/Clock.ts"
import { Chain } from "../../src/chain/Chain.ts"
import { ChainMock } from "../../src/chain/ChainMock.ts"
import { Lifecycle } from "../../src/payouts/Lifecycle.ts"
import { bridgeProgress } from "../../src/provider/bridge/TransferStates.ts"
import { PayoutRepo } from "../../src/payouts/PayoutRepo.ts"
import { orderedTimeline } from "../../src/payouts/Present.ts"
import { makeDelaySweep } from "../../src/worker/DelaySweep.ts"
import { httpTest } from "../support/fixture.ts"
import { decodePayout, expirePayoutWindow, newTxHash, type Partner, sql } from "../support/flows.ts"
import type { TestServer } from "../support/server.ts"

const API = "/api/integrations"

/** Block times the chain stand-in reports, by txHash: a deposit "read from the chain" (any other hash: mock mode's). */
const blockTimes = new Map<string, Date>()
const BlockTimeChain = Layer.effect(
  Chain,
  Effect.map(Chain, (mock) =>
    Chain.of({
      ...mock,
      verifyTransfer: (check) => {
        const minedAt = blockTimes.get(check.txHash)
        return minedAt === undefined ? mock.verifyTransfer(check) : Effect.succeed({ minedAt, transfers: [] })
      }
    }))
).pipe(Layer.provide(ChainMock))

const it = httpTest({
  // no worker: the mock lifecycle's jobs and the sweeps run only when a test says so
  env: { WORKER_ENABLED: "false", PAYOUT_DELAYED_AFTER_MINUTES: "5" },
  app: (config) => {
    const mode = mockMode(config)
    return serverLayerFor(config, { ...mode, ports: Layer.merge(mode.ports, BlockTimeChain) })
  }
})

/** Runs an Effect on the whole app's services (the harness's runtime is the app). */
const runOnApp = <A, E>(server: TestServer, effect: Effect.Effect<A, E, unknown>) =>
  (server.run as <A1, E1>(e: Effect.Effect<A1, E1, unknown>) => Promise<A1>)(effect)

const current = async (partner: Partner, payoutId: string) => decodePayout((await partner.getPayout(payoutId)).json)

const confirmed = async (partner: Partner, user: string) => {
  const payout = await partner.payout(user)
  const wire = await partner.confirm(payout.payoutId, { txHash: newTxHash() })
  expect(wire.status, wire.text).toBe(200)
  return decodePayout(wire.json)
}

const advance = async (partner: Partner, payoutId: string, to: string) => {
  const wire = await partner.post(`${API}/test-helpers/payouts/${payoutId}/advance`, { to })
  expect(wire.status, wire.text).toBe(200)
  return decodePayout(wire.json)
}

const hopsOf = (payout: Payout) => payout.timeline.map((hop) => [hop.status, hop.source])

/** The payout as each of its events carried it, oldest first. */
const eventsOf = async (server: TestServer, payoutId: string) =>
  (await sql<{ type: string; body: string }>(
    server,
    (q) => q`SELECT type, body FROM events WHERE resource_id = ${payoutId} ORDER BY sequence`
  )).map((row) => ({ type: row.type, payout: decodePayout(JSON.parse(row.body).data.object) }))

/** Unchanged for `minutes`: its last change moved back (the sweep reads `updated_at` against the clock). */
const unchangedFor = (server: TestServer, payoutId: string, minutes: number) =>
  sql(
    server,
    (q) =>
      q`UPDATE payouts SET updated_at = now() - make_interval(mins => ${minutes}) WHERE id = ${payoutId} RETURNING id`
  )

const delaySweep = (server: TestServer) => runOnApp(server, Effect.flatMap(makeDelaySweep, (sweep) => sweep))

describe("payout timeline", () => {
  it("a mock payout through create → confirm → processing → completed: every hop, in order, with its source", async ({ server, partner, user }) => {
    const created = await partner.payout(user)
    expect(hopsOf(created)).toEqual([["created", "api"]])
    expect(created.timeline[0]!.at).toBe(created.createdAt)

    const wire = await partner.confirm(created.payoutId, { txHash: newTxHash() })
    expect(wire.status, wire.text).toBe(200)
    await advance(partner, created.payoutId, "processing")
    const completed = await advance(partner, created.payoutId, "completed")

    expect(hopsOf(completed)).toEqual([
      ["created", "api"],
      ["deposit_mined", "mock_chain"],
      ["deposit_confirmed", "api"],
      ["funds_received", "test_helper"],
      ["processing", "test_helper"],
      ["completed", "test_helper"]
    ])
    const times = completed.timeline.map((hop) => Date.parse(hop.at))
    expect(times).toEqual([...times].sort((a, b) => a - b))
    expect(completed.timeline.at(-1)!.at).toBe(completed.receipt.completedAt)
    // GET answers the same timeline, and each event carries the timeline as it was when it was written
    expect((await current(partner, created.payoutId)).timeline).toEqual(completed.timeline)
    const events = await eventsOf(server, created.payoutId)
    expect(events.map((event) => [event.type, event.payout.timeline.at(-1)?.status])).toEqual([
      ["payout.created", "created"],
      ["payout.deposit_confirmed", "deposit_confirmed"],
      ["payout.processing", "processing"],
      ["payout.completed", "completed"]
    ])
  })

  it("the provider's word that the funds arrived, after the partner confirmed, is a hop of its own (status unchanged)", async ({ server, partner, user }) => {
    const payout = await confirmed(partner, user)
    const [row] = await sql<{ provider_transfer_id: string }>(
      server,
      (q) => q`SELECT provider_transfer_id FROM payouts WHERE id = ${payout.payoutId}`
    )
    const apply = (state: string) =>
      runOnApp(
        server,
        Effect.flatMap(Lifecycle, (lifecycle) =>
          lifecycle.applyTransferProgress({
            progress: bridgeProgress({ id: row!.provider_transfer_id, state }),
            source: "provider_webhook"
          }))
      )
    expect(await apply("funds_received")).toBe(true)
    expect(await apply("funds_received")).toBe(false) // a duplicate adds nothing
    const after = await current(partner, payout.payoutId)
    expect(after.status).toBe("deposit_confirmed")
    expect(hopsOf(after)).toEqual([
      ["created", "api"],
      ["deposit_mined", "mock_chain"],
      ["deposit_confirmed", "api"],
      ["funds_received", "provider_webhook"]
    ])
  })

  it("an expired payout: the sweep's hop", async ({ server, partner, user }) => {
    const payout = await partner.payout(user)
    await expirePayoutWindow(server, payout.payoutId)
    await runOnApp(server, Effect.flatMap(PayoutRepo, (payouts) => Effect.flatMap(now, payouts.expireOverdue)))
    const expired = await current(partner, payout.payoutId)
    expect(expired.status).toBe("expired")
    expect(hopsOf(expired)).toEqual([["created", "api"], ["expired", "sweep"]])
    expect(expired.timeline[1]!.at).toBe(expired.updatedAt)
  })

  /** A payout confirmed with a deposit whose block the chain dates at `blockTime(createdAt)`; its timeline. */
  const confirmedWithBlockAt = async (partner: Partner, user: string, blockTime: (createdAt: number) => Date) => {
    const payout = await partner.payout(user)
    const txHash = newTxHash()
    const minedAt = blockTime(Date.parse(payout.createdAt))
    blockTimes.set(txHash, minedAt)
    const wire = await partner.confirm(payout.payoutId, { txHash })
    expect(wire.status, wire.text).toBe(200)
    return { payout: decodePayout(wire.json), minedAt }
  }

  const expectInOrder = (payout: Payout) => {
    expect(hopsOf(payout)).toEqual([["created", "api"], ["deposit_mined", "chain"], ["deposit_confirmed", "api"]])
    const times = payout.timeline.map((hop) => Date.parse(hop.at))
    expect(times).toEqual([...times].sort((a, b) => a - b))
  }

  it("a deposit whose block is dated in the payout's first second (block times are whole seconds) comes after `created`, at it", async ({ partner, user }) => {
    // the whole second that began before the payout was created (the one before it, when created on the second)
    const { minedAt, payout } = await confirmedWithBlockAt(
      partner,
      user,
      (createdAt) => new Date(Math.floor((createdAt - 1) / 1000) * 1000)
    )
    expect(minedAt.getTime()).toBeLessThan(Date.parse(payout.createdAt))
    expectInOrder(payout)
    expect(payout.timeline[1]).toEqual({
      status: "deposit_mined",
      at: payout.createdAt,
      source: "chain",
      blockTime: minedAt.toISOString()
    })
  })

  it("a deposit whose block the chain dates after the confirm that read it (its clock ahead of ours) comes before the confirm", async ({ partner, user }) => {
    const { minedAt, payout } = await confirmedWithBlockAt(partner, user, (createdAt) => new Date(createdAt + 60_000))
    expectInOrder(payout)
    expect(payout.timeline[1]).toEqual({
      status: "deposit_mined",
      at: payout.timeline[2]!.at,
      source: "chain",
      blockTime: minedAt.toISOString()
    })
  })

  it("a deposit whose block is dated between the two keeps its block's time", async ({ partner, user }) => {
    const { minedAt, payout } = await confirmedWithBlockAt(partner, user, (createdAt) => new Date(createdAt + 1))
    expectInOrder(payout)
    expect(payout.timeline[1]).toEqual({
      status: "deposit_mined",
      at: minedAt.toISOString(),
      source: "chain",
      blockTime: minedAt.toISOString()
    })
  })

  it("orders hops by `at`, hops at the same moment in the order they were recorded", () => {
    const hop = (status: PayoutTimelineHop["status"], at: string): PayoutTimelineHop => ({ status, at, source: "api" })
    const recorded = [
      hop("created", "2026-11-25T04:00:00.000Z"),
      hop("funds_received", "2026-11-25T04:02:00.000Z"),
      hop("deposit_confirmed", "2026-11-25T04:02:00.000Z"),
      hop("deposit_mined", "2026-11-25T04:01:00.000Z")
    ]
    expect(orderedTimeline(recorded).map((h) => h.status))
      .toEqual(["created", "deposit_mined", "funds_received", "deposit_confirmed"])
  })
})

describe("payout.delayed", () => {
  it("is emitted once for a payout in flight unchanged past the threshold, never for one awaiting its deposit or finished", async ({ server, partner, user }) => {
    const stuck = await confirmed(partner, user)
    const submitted = await confirmed(partner, user)
    await advance(partner, submitted.payoutId, "processing")
    const recent = await confirmed(partner, user)
    const awaiting = await partner.payout(user)
    const completed = await confirmed(partner, user)
    await advance(partner, completed.payoutId, "completed")
    const failed = await partner.payout(user)
    await advance(partner, failed.payoutId, "failed")
    for (const payout of [stuck, submitted, awaiting, completed, failed]) await unchangedFor(server, payout.payoutId, 6)
    await unchangedFor(server, recent.payoutId, 4)

    expect(await delaySweep(server)).toBe(2)
    expect(await delaySweep(server)).toBe(0) // a second round finds nothing more to report

    for (const payout of [stuck, submitted]) {
      const events = await eventsOf(server, payout.payoutId)
      expect(events.filter((event) => event.type === "payout.delayed")).toHaveLength(1)
      const after = await current(partner, payout.payoutId)
      expect(after.status).toBe(payout.payoutId === stuck.payoutId ? "deposit_confirmed" : "processing")
      expect(after.timeline.at(-1)).toMatchObject({ status: "delayed", source: "sweep" })
      expect(events.at(-1)!.payout.timeline).toEqual(after.timeline)
    }
    for (const payout of [recent, awaiting, completed, failed]) {
      expect((await eventsOf(server, payout.payoutId)).map((event) => event.type)).not.toContain("payout.delayed")
      expect((await current(partner, payout.payoutId)).timeline.map((hop) => hop.status)).not.toContain("delayed")
    }
    // still stuck later: reported once in its life
    await unchangedFor(server, stuck.payoutId, 60)
    expect(await delaySweep(server)).toBe(0)
  })
})
