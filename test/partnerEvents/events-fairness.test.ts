/**
 * One slow partner must not delay everyone: a receiver that never answers, with 200 deliveries pending, beside a
 * healthy receiver of another integration. Every attempt to the hanging one holds a delivery slot until the
 * timeout (long here, so it holds them for the whole test); the healthy one's events must still arrive at once.
 * The caps count the attempts every replica has in flight (the leases), so they hold across replicas: the same with
 * two app instances on one database, both woken by the commit that adds the backlog.
 */
import { WebhookEndpointWithSecret } from "@cop-integrations/contracts"
import { SqlClient } from "effect/sql"
import { Effect, Schema } from "effect"
import { afterAll, beforeAll, describe, expect } from "vitest"
import { DELIVERY_PER_ENDPOINT, DELIVERY_PER_INTEGRATION } from "../../src/partnerEvents/Delivery.ts"
import { Outbox } from "../../src/outbox/Outbox.ts"
import { httpTest } from "../support/fixture.ts"
import { newPartner, type Partner } from "../support/flows.ts"
import type { TestServer } from "../support/server.ts"
import { type Receiver, startReceiver } from "../support/webhookReceiver.ts"

const API = "/api/integrations"
const BACKLOG = 200
const HEALTHY_EVENTS = 10
/** Longer than the test: an attempt to the hanging receiver holds its slot until the test ends. */
const ENV = { WEBHOOK_TIMEOUT_MS: "120000", MOCK_LIFECYCLE_DELAY_MS: "3600000" }
/** Generous: a healthy delivery takes milliseconds; this only bounds one that waits behind the hanging receiver. */
const DEADLINE_MS = 20_000

/** A server per describe, each with a backlog of its own; the last with its replica (two app instances). */
const itOneEndpoint = httpTest({ env: ENV })
const itAllEndpoints = httpTest({ env: ENV })
const itReplicas = httpTest({ env: ENV })

/**
 * Receivers are closed when the file ends, just before the servers (which the fixture keeps until then): a server
 * whose hanging receiver had gone would retry its backlog (refused at once) beside a later describe's measurement.
 */
const receivers: Array<Receiver> = []
const newReceiver = async () => {
  const receiver = await startReceiver()
  receivers.push(receiver)
  return receiver
}
afterAll(async () => {
  for (const receiver of receivers) await receiver.close()
})

const register = async (partner: Partner, url: string) => {
  const wire = await partner.post(`${API}/webhook-endpoints`, { url })
  expect(wire.status, wire.text).toBe(201)
  return Schema.decodeUnknownSync(WebhookEndpointWithSecret)(wire.json)
}

/** Runs an Effect with the app's services (the runtime behind `run` is the whole app, the Outbox included). */
const runWithOutbox = <A, E>(server: TestServer, effect: Effect.Effect<A, E, SqlClient.SqlClient | Outbox>) =>
  (server.run as <A1, E1>(e: Effect.Effect<A1, E1, SqlClient.SqlClient | Outbox>) => Promise<A1>)(effect)

/** `count` events of distinct payouts for the partner's endpoints, committed together (one wake-up for every replica). */
const backlog = (server: TestServer, partner: Partner, count: number) =>
  runWithOutbox(
    server,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const outbox = yield* Outbox
      const at = new Date()
      yield* Effect.forEach(
        Array.from({ length: count }, (_, i) => `po_backlog_${i}_${crypto.randomUUID()}`),
        (payoutId) =>
          outbox.record({
            integrationId: partner.integrationId,
            type: "payout.created",
            resourceId: payoutId,
            object: { payoutId },
            at
          }),
        {
          discard: true
        }
      ).pipe(sql.withTransaction)
    })
  )

/** Resolves when the receivers hold `count` requests open between them (bounded by DEADLINE_MS). */
const holdingAtLeast = (receivers: ReadonlyArray<Receiver>, count: number) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`the hanging receivers did not hold ${count} requests within ${DEADLINE_MS} ms`)),
      DEADLINE_MS
    )
    for (const receiver of receivers) {
      receiver.onHeld(() => {
        if (receivers.reduce((sum, r) => sum + r.holding(), 0) < count) return
        clearTimeout(timer)
        resolve()
      })
    }
  })

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN

/**
 * Pings the healthy endpoint one after another and answers each one's latency (event creation to receipt); each
 * must arrive within DEADLINE_MS while `stillHeld` holds.
 */
const pingLatencies = async (partner: Partner, endpointId: string, healthy: Receiver, stillHeld: () => boolean) => {
  const latencies: Array<number> = []
  for (let i = 0; i < HEALTHY_EVENTS; i++) {
    const ping = await partner.post(`${API}/webhook-endpoints/${endpointId}/ping`, {})
    expect(ping.status, ping.text).toBe(202)
    const { createdAt, id } = ping.json as { id: string; createdAt: string }
    const delivered = await healthy.next((d) => d.id === id, DEADLINE_MS)
    expect(stillHeld(), "the hanging receivers still hold every slot they may when the healthy one is served").toBe(
      true
    )
    latencies.push(delivered.receivedAt - Date.parse(createdAt))
  }
  return latencies.sort((a, b) => a - b)
}

const summary = (latencies: ReadonlyArray<number>) =>
  `p50 ${percentile(latencies, 0.5)} ms, max ${latencies[latencies.length - 1]} ms`

/** The most requests a set of hanging receivers held open at once. */
const peakHolding = (receivers: ReadonlyArray<Receiver>) => {
  let peak = 0
  const total = () => receivers.reduce((sum, r) => sum + r.holding(), 0)
  for (const receiver of receivers) receiver.onHeld(() => void (peak = Math.max(peak, total())))
  return { peak: () => peak, total }
}

describe("a hanging endpoint with a backlog beside a healthy endpoint of another integration", () => {
  let hanging: Receiver
  let healthy: Receiver

  beforeAll(async () => {
    hanging = await newReceiver()
    hanging.answer = () => "hold"
    healthy = await newReceiver()
  })

  itOneEndpoint(
    `holds at most ${DELIVERY_PER_ENDPOINT} of the slots; the healthy endpoint's events arrive while it hangs`,
    async ({ server, partner: slow }) => {
      const fast = await newPartner(server)
      await register(slow, hanging.url)
      const healthyEndpoint = await register(fast, healthy.url)
      const baseline = await pingLatencies(fast, healthyEndpoint.endpointId, healthy, () => true)

      const held = peakHolding([hanging])
      const reached = holdingAtLeast([hanging], DELIVERY_PER_ENDPOINT)
      await backlog(server, slow, BACKLOG)
      await reached
      const beside = await pingLatencies(
        fast,
        healthyEndpoint.endpointId,
        healthy,
        () => hanging.holding() === DELIVERY_PER_ENDPOINT
      )

      console.info(
        `healthy endpoint alone: ${summary(baseline)}; beside ${BACKLOG} pending to a hanging endpoint: ${
          summary(beside)
        } (hanging receiver held at most ${held.peak()} at once)`
      )
      expect(held.peak()).toBeLessThanOrEqual(DELIVERY_PER_ENDPOINT)
    }
  )
})

describe("an integration whose endpoints all hang", () => {
  let hanging: ReadonlyArray<Receiver>
  let healthy: Receiver

  beforeAll(async () => {
    hanging = await Promise.all([newReceiver(), newReceiver(), newReceiver()])
    for (const receiver of hanging) receiver.answer = () => "hold"
    healthy = await newReceiver()
  })

  itAllEndpoints(
    `holds at most ${DELIVERY_PER_INTEGRATION} slots over its endpoints; another integration is still served`,
    async ({ server, partner: slow }) => {
      const fast = await newPartner(server)
      for (const receiver of hanging) await register(slow, receiver.url)
      const healthyEndpoint = await register(fast, healthy.url)

      const held = peakHolding(hanging)
      const reached = holdingAtLeast(hanging, DELIVERY_PER_INTEGRATION)
      await backlog(server, slow, BACKLOG)
      await reached
      const beside = await pingLatencies(
        fast,
        healthyEndpoint.endpointId,
        healthy,
        () => held.total() === DELIVERY_PER_INTEGRATION
      )

      console.info(
        `beside ${hanging.length} hanging endpoints of one integration (${BACKLOG} pending each): ${
          summary(beside)
        } (held at most ${held.peak()} at once, per endpoint at most ${
          Math.max(...hanging.map((r) => r.holding()))
        } at the end)`
      )
      expect(held.peak()).toBeLessThanOrEqual(DELIVERY_PER_INTEGRATION)
      for (const receiver of hanging) expect(receiver.holding()).toBeLessThanOrEqual(DELIVERY_PER_ENDPOINT)
    }
  )
})

describe("two replicas on one database", () => {
  let hanging: Receiver
  let healthy: Receiver

  beforeAll(async () => {
    hanging = await newReceiver()
    hanging.answer = () => "hold"
    healthy = await newReceiver()
  })

  itReplicas(
    `hold at most ${DELIVERY_PER_ENDPOINT} attempts to one hanging endpoint between them; the healthy endpoint is served`,
    async ({ server: first, replica, partner: slow }) => {
      void replica // started, not called: it takes deliveries from the backlog as the first replica does
      const fast = await newPartner(first)
      await register(slow, hanging.url)
      const healthyEndpoint = await register(fast, healthy.url)

      const held = peakHolding([hanging])
      const reached = holdingAtLeast([hanging], DELIVERY_PER_ENDPOINT)
      await backlog(first, slow, BACKLOG)
      await reached
      const beside = await pingLatencies(
        fast,
        healthyEndpoint.endpointId,
        healthy,
        () => hanging.holding() === DELIVERY_PER_ENDPOINT
      )

      console.info(
        `two replicas: beside ${BACKLOG} pending to a hanging endpoint: ${
          summary(beside)
        } (held at most ${held.peak()} at once)`
      )
      expect(held.peak()).toBeLessThanOrEqual(DELIVERY_PER_ENDPOINT)
    }
  )
})
