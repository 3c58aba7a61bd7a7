import { SqlClient } from "effect/sql"
import { Cause, Effect, Layer, Option, Schema } from "effect"
import { addSeconds, now } from "../base/Clock.ts"
import { withWorkSpan } from "../base/Tracing.ts"
import { AppConfig } from "../config/Config.ts"
import { makeDelivery } from "../partnerEvents/Delivery.ts"
import { EventRepo } from "../partnerEvents/EventRepo.ts"
import { Lifecycle } from "../payouts/Lifecycle.ts"
import { noProgress } from "../provider/TransferProgress.ts"
import { PayoutRepo } from "../payouts/PayoutRepo.ts"
import { SwapRepo } from "../swaps/SwapRepo.ts"
import { makeDelaySweep } from "./DelaySweep.ts"
import { makeReconciler } from "./Reconciler.ts"
import { makeHousekeeping } from "./Housekeeping.ts"
import { makeMetricsSample } from "./MetricsSampler.ts"
import { type DueJob, Job, JobQueue } from "../background/JobQueue.ts"
import { countJobRun, type JobOutcome } from "../background/JobMetrics.ts"
import { onOneReplica } from "../background/OneReplica.ts"
import { idleUntil, pollWithBackoff, type IdleHint } from "../background/PollLoop.ts"
import { WorkSignal } from "../background/WorkSignal.ts"

const MAX_JOBS_PER_TICK = 50
/**
 * How often events get their list position without a reader asking (a list numbers its own integration's first):
 * keeps the events waiting for one few, for integrations no one lists.
 */
const EVENT_POSITIONS_INTERVAL_MS = 1_000
/** The longest pause of a polling loop while the database keeps failing. */
export const MAX_TICK_BACKOFF_MS = 30_000
/** Delay before a failed job's next attempt: 2^attempts seconds, at most 5 minutes. */
const retryDelaySeconds = (attempts: number) => Math.min(300, 2 ** attempts)

const decodeJob = Schema.decodeUnknownEffect(Job)

/**
 * Runs due jobs, one per transaction. A job's work runs in a savepoint, so a failure (an unreadable payload
 * included) is recorded as an attempt; after `jobsMaxAttempts` the job is dead, with one warning.
 */
const makeJobRunner = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const config = yield* AppConfig
  const queue = yield* JobQueue
  const lifecycle = yield* Lifecycle

  const perform = (job: Job) => {
    switch (job._tag) {
      case "TransferProgress":
        // Only mock mode queues transfer progress (its provider moving the transfer on by itself).
        return Effect.asVoid(lifecycle.applyTransferProgress({
          progress: { ...noProgress(job.transferId), status: job.status, fundsArrived: job.fundsArrived },
          source: "mock_provider"
        }))
    }
  }

  const recordFailure = (job: DueJob, cause: Cause.Cause<unknown>, at: Date) => {
    const error = Cause.pretty(cause).slice(0, 500)
    const attempts = job.attempts + 1
    if (attempts < config.jobsMaxAttempts) {
      return Effect.as(
        queue.markFailed(job.id, error, addSeconds(at, retryDelaySeconds(job.attempts))),
        "retrying" as const
      )
    }
    return Effect.andThen(
      queue.markDead(job.id, error, at),
      Effect.as(
        Effect.logWarning(
          `job ${job.id} (${job.kind}) is dead after ${attempts} failed attempts; its last error is in jobs.last_error`
        ),
        "dead" as const
      )
    )
  }

  const runOne = Effect.gen(function*() {
    const at = yield* now
    const due = yield* queue.claimDue(at)
    if (Option.isNone(due)) return false
    const job = due.value
    const outcome = yield* Effect.exit(
      Effect.flatMap(decodeJob(job.payload), perform).pipe(
        sql.withTransaction,
        withWorkSpan(`job ${job.kind}`, job.traceparent, { "job.kind": job.kind, "job.attempt": job.attempts + 1 })
      )
    )
    const recorded: JobOutcome = outcome._tag === "Success"
      ? yield* Effect.as(queue.markDone(job.id, at), "done" as const)
      : yield* recordFailure(job, outcome.cause, at)
    yield* sql.afterCommit(
      Effect.sync(() => countJobRun(job.kind, recorded, (at.getTime() - job.run_at.getTime()) / 1000))
    )
    return true
  }).pipe(sql.withTransaction)

  /** Busy when it ran a job; otherwise when the next one is due. */
  const runDue = Effect.gen(function*() {
    let ran = 0
    while (ran < MAX_JOBS_PER_TICK && (yield* runOne)) ran++
    if (ran > 0) return { busy: true } as const
    return yield* idleUntil(yield* queue.nextRunAt)
  })

  return { runDue } as const
})

/**
 * Marks payouts whose deposit window has passed, and swaps whose quote has, as expired. One replica at a time (the others skip the round),
 * on its own slower schedule, over the partial index of payouts awaiting a deposit.
 */
const makeExpirySweep = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const payouts = yield* PayoutRepo
  const swaps = yield* SwapRepo
  const expire = (at: Date) => Effect.andThen(payouts.expireOverdue(at), swaps.expireOverdue(at))
  return Effect.flatMap(now, expire).pipe(onOneReplica(sql, "payouts:expiry-sweep"))
})

/**
 * On every replica: polls the jobs table, sends partner webhooks, sweeps expired deposit windows and delayed payouts
 * (on the expiry sweep's schedule), gives committed events their list position, deletes rows past their retention and
 * reconciles (stale txHash claims, payouts a lost webhook left behind), and samples the database for the metrics'
 * gauges while the admin listener is on, each on its own schedule; each loop backs
 * off while the database fails. The jobs and deliveries loops poll every JOBS_POLL_INTERVAL_MS while they find work;
 * idle, they wait for a commit that adds work (WorkSignal) or JOBS_IDLE_INTERVAL_MS, whichever comes first.
 */
export const JobWorkerLive = Layer.effectDiscard(
  Effect.gen(function*() {
    const config = yield* AppConfig
    const runner = yield* makeJobRunner
    const sweep = yield* makeExpirySweep
    const delaySweep = yield* makeDelaySweep
    const housekeeping = yield* makeHousekeeping
    const reconciler = yield* makeReconciler
    const delivery = yield* makeDelivery
    const signal = yield* WorkSignal
    const events = yield* EventRepo
    const loop = (name: string, everyMs: number, task: Effect.Effect<unknown, unknown>) =>
      Effect.forkScoped(pollWithBackoff(task, { name, everyMs, maxBackoffMs: MAX_TICK_BACKOFF_MS }))
    const idle = { ms: Math.max(config.jobsIdleIntervalMs, config.jobsPollIntervalMs), armed: signal.armed }
    const workLoop = (name: string, task: Effect.Effect<IdleHint, unknown>) =>
      Effect.forkScoped(
        pollWithBackoff(task, { name, everyMs: config.jobsPollIntervalMs, maxBackoffMs: MAX_TICK_BACKOFF_MS, idle })
      )

    yield* workLoop("job worker", runner.runDue)
    yield* workLoop("webhook deliveries", delivery.runDue)
    yield* loop("expiry sweep", config.expirySweepIntervalMs, sweep)
    yield* loop("delay sweep", config.expirySweepIntervalMs, delaySweep)
    yield* loop("event positions", EVENT_POSITIONS_INTERVAL_MS, events.positionAllPending)
    yield* loop("housekeeping", config.housekeepingIntervalMs, housekeeping)
    yield* loop("reconciler", config.reconcileIntervalMs, reconciler.run)
    // Only while something exports them: without the admin listener no one reads these gauges.
    if (Option.isSome(config.adminPort)) {
      yield* loop("metrics sampler", config.metricsSampleIntervalMs, yield* makeMetricsSample)
    }
  })
)
