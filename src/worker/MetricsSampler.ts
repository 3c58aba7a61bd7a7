/**
 * The metrics read from the database rather than counted as things happen: the outbox's backlog, the job queue by
 * kind and the payouts in flight (how many stuck). Every replica with a worker samples them, one indexed query each a
 * round (METRICS_SAMPLE_INTERVAL_MS), only while the admin listener exports them (ADMIN_PORT); never per request.
 * The values are the whole database's, so every replica reports the same: alert rules aggregate them with max().
 */
import { Effect } from "effect"
import { now } from "../base/Clock.ts"
import { setJobQueueDepths } from "../background/JobMetrics.ts"
import { JobQueue } from "../background/JobQueue.ts"
import { AppConfig } from "../config/Config.ts"
import { setOutboxBacklog } from "../partnerEvents/DeliveryMetrics.ts"
import { DeliveryRepo } from "../partnerEvents/DeliveryRepo.ts"
import { setInFlight } from "../payouts/PayoutMetrics.ts"
import { PayoutRepo } from "../payouts/PayoutRepo.ts"

/** One round: the three samples, each setting its gauges. */
export const makeMetricsSample = Effect.gen(function*() {
  const config = yield* AppConfig
  const deliveries = yield* DeliveryRepo
  const jobs = yield* JobQueue
  const payouts = yield* PayoutRepo
  return Effect.gen(function*() {
    const at = yield* now
    setOutboxBacklog(yield* deliveries.backlog, at)
    setJobQueueDepths(yield* jobs.depthByKind(at), at)
    const cutoff = new Date(at.getTime() - config.payoutDelayedAfterMinutes * 60_000)
    setInFlight(yield* payouts.inFlight(cutoff), at)
  })
})
