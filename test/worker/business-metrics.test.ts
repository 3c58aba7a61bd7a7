/**
 * The business metrics as the admin listener exports them, moved by one server of this file (Effect's metric registry
 * is the process's): payout transitions by status and failure category, provider and chain calls by operation and
 * outcome, webhook delivery attempts by outcome and reason, job runs and their lag by kind, and the gauges the worker
 * samples from the database (outbox backlog, job queue, payouts in flight and stuck), each checked against the rows.
 */
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, vi } from "vitest"
import { type AdminListener, serveAdmin } from "../../src/http/AdminServer.ts"
import { httpTest } from "../support/fixture.ts"
import { newTxHash, type Partner, PAYOUTS, sql } from "../support/flows.ts"
import { scrape, valueOf } from "../support/metrics.ts"
import type { TestServer } from "../support/server.ts"
import { type Delivery, receiverForTests } from "../support/webhookReceiver.ts"

const API = "/api/integrations"

const scope = Effect.runSync(Scope.make())
let admin: AdminListener
beforeAll(async () => {
  admin = await Effect.runPromise(Scope.provide(serveAdmin({ host: "127.0.0.1", port: 0 }), scope))
})
afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

const metrics = () => scrape(admin.metricsUrl)

const it = httpTest({
  env: {
    // the sampler runs (it does while the admin listener is on), every 100 ms
    ADMIN_PORT: "0",
    METRICS_SAMPLE_INTERVAL_MS: "100",
    // the mock lifecycle stays out of the way: outcomes come from the test helpers
    MOCK_LIFECYCLE_DELAY_MS: "600000",
    // a failed delivery waits (its retry is 5-10 minutes away)
    WEBHOOK_RETRY_BASE_MS: "600000",
    JOBS_MAX_ATTEMPTS: "1",
    PAYOUT_DELAYED_AFTER_MINUTES: "5"
  }
})

const receiver = receiverForTests()

const register = async (partner: Partner) => {
  const wire = await partner.post(`${API}/webhook-endpoints`, { url: receiver.url, events: ["*"] })
  expect(wire.status, wire.text).toBe(201)
}

const advance = async (partner: Partner, payoutId: string, body: Record<string, string>) => {
  const wire = await partner.post(`${API}/test-helpers/payouts/${payoutId}/advance`, body)
  expect(wire.status, wire.text).toBe(200)
}

const confirmedPayout = async (partner: Partner, user: string) => {
  const payout = await partner.payout(user)
  const wire = await partner.confirm(payout.payoutId, { txHash: newTxHash() })
  expect(wire.status, wire.text).toBe(200)
  return payout
}

const forPayout = (payoutId: string) => (delivery: Delivery) => delivery.event.data.object["payoutId"] === payoutId

/** How `name{labels}` moved from `before` to `after`. */
const moved = (before: string, after: string, name: string, labels: Record<string, string> = {}) =>
  valueOf(after, name, labels) - valueOf(before, name, labels)

/** Waits until `check` passes on a fresh scrape (the counters move once a transaction commits), and answers it. */
const settled = (check: (text: string) => void) =>
  vi.waitFor(async () => {
    const text = await metrics()
    check(text)
    return text
  }, { timeout: 15_000, interval: 50 })

const one = async <Row extends object>(server: TestServer, query: Parameters<typeof sql<Row>>[1]) =>
  (await sql<Row>(server, query))[0]!

describe("payout transitions, provider and chain calls, deliveries", () => {
  it("a payout through to failed: each status once, the failure's category, the calls, every event delivered", async ({ partner, user }) => {
    await register(partner)
    const before = await metrics()
    const payout = await confirmedPayout(partner, user)
    await advance(partner, payout.payoutId, { to: "processing" })
    await advance(partner, payout.payoutId, { to: "failed", failureCode: "breb_key_not_found" })
    await receiver.count(forPayout(payout.payoutId), 4)

    const after = await settled((text) =>
      expect(moved(before, text, "cop_webhook_delivery_attempts_total", { outcome: "delivered", reason: "2xx" }))
        .toBe(4)
    )
    const transitions = (status: string, category = "none") =>
      moved(before, after, "cop_payout_transitions_total", { status, failure_category: category })
    expect({
      awaiting_deposit: transitions("awaiting_deposit"),
      deposit_confirmed: transitions("deposit_confirmed"),
      processing: transitions("processing"),
      completed: transitions("completed"),
      failedDestination: transitions("failed", "destination"),
      failedProvider: transitions("failed", "provider"),
      failedNone: transitions("failed")
    }).toEqual({
      awaiting_deposit: 1,
      deposit_confirmed: 1,
      processing: 1,
      completed: 0,
      failedDestination: 1,
      failedProvider: 0,
      failedNone: 0
    })
    expect(moved(before, after, "cop_provider_calls_total", { operation: "create_transfer", outcome: "ok" })).toBe(1)
    expect(
      moved(before, after, "cop_provider_call_duration_seconds_count", { operation: "create_transfer", outcome: "ok" })
    ).toBe(1)
    expect(moved(before, after, "cop_chain_calls_total", { operation: "verify_transfer", outcome: "ok" })).toBe(1)
    expect(
      moved(before, after, "cop_chain_call_duration_seconds_count", { operation: "verify_transfer", outcome: "ok" })
    ).toBe(1)
    expect(moved(before, after, "cop_webhook_delivery_duration_seconds_count", { outcome: "delivered" })).toBe(4)
    // No label names the payout, the integration or the receiver.
    expect(after).not.toContain(payout.payoutId)
    expect(after).not.toContain(partner.integrationId)
    expect(after).not.toContain(receiver.url)
  })

  it("a delivery the receiver answers 503 is counted retrying, reason 5xx; a provider that cannot be reached, unavailable", async ({ partner, user }) => {
    const before = await metrics()
    receiver.answer = () => 503
    const payout = await partner.payout(user)
    await receiver.next((delivery) => forPayout(payout.payoutId)(delivery) && delivery.answered === 503)
    const canceled = await partner.post(`${PAYOUTS}/${payout.payoutId}/cancel`, {}, {
      "x-mock-scenario": "provider_unavailable"
    })
    expect(canceled.status, canceled.text).toBe(503)

    const after = await settled((text) =>
      expect(moved(before, text, "cop_webhook_delivery_attempts_total", { outcome: "retrying", reason: "5xx" }))
        .toBe(1)
    )
    expect(moved(before, after, "cop_webhook_delivery_attempts_total", { outcome: "delivered", reason: "2xx" }))
      .toBe(0)
    expect(moved(before, after, "cop_webhook_delivery_attempts_total", { outcome: "failed", reason: "5xx" })).toBe(0)
    expect(moved(before, after, "cop_webhook_delivery_duration_seconds_count", { outcome: "retrying" })).toBe(1)
    expect(moved(before, after, "cop_provider_calls_total", { operation: "cancel_transfer", outcome: "unavailable" }))
      .toBe(1)
    expect(moved(before, after, "cop_provider_calls_total", { operation: "cancel_transfer", outcome: "ok" })).toBe(0)
  })
})

describe("jobs", () => {
  it("a job taken 5 s after it was due: its lag in the histogram, its run counted done; a job that cannot run, dead", async ({ server }) => {
    const before = await metrics()
    const due = (payload: string) =>
      sql<{ id: string }>(
        server,
        (q) =>
          q`INSERT INTO jobs (kind, payload, run_at)
            VALUES ('TransferProgress', ${payload}::jsonb, now() - interval '5 seconds') RETURNING id::text AS id`
      )
    // a transfer no payout has: the job runs and changes nothing
    const [done] = await due(
      JSON.stringify({ _tag: "TransferProgress", transferId: "tr_none", status: "processing", fundsArrived: true })
    )
    const [dead] = await due(JSON.stringify({ _tag: "TransferProgress", transferId: 42 }))
    await vi.waitFor(async () => {
      const rows = await sql<{ finished: number }>(
        server,
        (q) =>
          q`SELECT count(*)::int AS finished FROM jobs
            WHERE id IN (${done!.id}, ${dead!.id}) AND (done_at IS NOT NULL OR dead_at IS NOT NULL)`
      )
      expect(rows[0]!.finished).toBe(2)
    }, { timeout: 15_000, interval: 50 })

    const kind = { kind: "TransferProgress" }
    const after = await settled((text) =>
      expect(moved(before, text, "cop_job_runs_total", { ...kind, outcome: "dead" })).toBe(1)
    )
    expect(moved(before, after, "cop_job_runs_total", { ...kind, outcome: "done" })).toBe(1)
    expect(moved(before, after, "cop_job_runs_total", { ...kind, outcome: "retrying" })).toBe(0)
    expect(moved(before, after, "cop_job_lag_seconds_count", kind)).toBe(2)
    expect(moved(before, after, "cop_job_lag_seconds_bucket", { ...kind, le: "2.5" })).toBe(0)
    expect(moved(before, after, "cop_job_lag_seconds_bucket", { ...kind, le: "+Inf" })).toBe(2)
    expect(moved(before, after, "cop_job_lag_seconds_sum", kind)).toBeGreaterThanOrEqual(10)
  })
})

describe("sampled from the database", () => {
  it("the outbox's backlog, the job queue and the payouts in flight, stuck ones included, as the rows say", async ({ server, partner, user }) => {
    // a backlog: the receiver fails, so every delivery of this test stays pending (a resource's later events wait)
    receiver.answer = () => 500
    // in flight: one processing and unchanged for 10 minutes (stuck), one deposit_confirmed just now
    const stuck = await confirmedPayout(partner, user)
    await advance(partner, stuck.payoutId, { to: "processing" })
    await sql(
      server,
      (q) => q`UPDATE payouts SET updated_at = now() - interval '10 minutes' WHERE id = ${stuck.payoutId} RETURNING id`
    )
    await confirmedPayout(partner, user)

    // (the delay sweep may add the stuck payout's `payout.delayed` meanwhile: each try reads the rows again)
    const readRows = async () => ({
      outbox: await one<{ pending: number; oldest: Date }>(
        server,
        (q) =>
          q`SELECT count(*)::int AS pending, min(created_at) AS oldest FROM event_deliveries WHERE state = 'pending'`
      ),
      jobs: await one<{ depth: number }>(
        server,
        (q) => q`SELECT count(*)::int AS depth FROM jobs WHERE done_at IS NULL AND dead_at IS NULL`
      ),
      confirmed: await one<{ n: number }>(
        server,
        (q) => q`SELECT count(*)::int AS n FROM payouts WHERE status = 'deposit_confirmed'`
      )
    })

    const kind = { kind: "TransferProgress" }
    const { rows, text } = await vi.waitFor(async () => {
      const rows = await readRows()
      const text = await metrics()
      expect(valueOf(text, "cop_payouts_stuck", { status: "processing" })).toBe(1)
      expect(valueOf(text, "cop_outbox_pending_deliveries")).toBe(rows.outbox.pending)
      expect(valueOf(text, "cop_job_queue_depth", kind)).toBe(rows.jobs.depth)
      expect(valueOf(text, "cop_payouts_in_flight", { status: "deposit_confirmed" })).toBe(rows.confirmed.n)
      return { rows, text }
    }, { timeout: 15_000, interval: 50 })
    expect(rows.outbox.pending).toBeGreaterThan(0)
    // the mock lifecycle queued two steps per confirmed payout, 10 minutes ahead: not due
    expect(rows.jobs.depth).toBeGreaterThanOrEqual(4)
    expect(valueOf(text, "cop_payouts_in_flight", { status: "processing" })).toBe(1)
    expect(valueOf(text, "cop_payouts_stuck", { status: "deposit_confirmed" })).toBe(0)
    expect(valueOf(text, "cop_payouts_in_flight_oldest_age_seconds", { status: "processing" }))
      .toBeGreaterThanOrEqual(600)
    expect(valueOf(text, "cop_payouts_in_flight_oldest_age_seconds", { status: "processing" })).toBeLessThan(700)
    expect(valueOf(text, "cop_job_queue_due", kind)).toBe(0)
    expect(valueOf(text, "cop_job_queue_lag_seconds", kind)).toBe(0)
    const age = valueOf(text, "cop_outbox_oldest_pending_age_seconds")
    expect(age).toBeGreaterThan(0)
    expect(age).toBeLessThanOrEqual((Date.now() - rows.outbox.oldest.getTime()) / 1000 + 1)
  })
})
