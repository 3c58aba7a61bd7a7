import { SqlClient } from "@effect/sql"
import { Cause, Effect, Layer, Option, Schedule } from "effect"
import { addSeconds, now } from "../Clock.ts"
import { AppConfig } from "../Config.ts"
import { Lifecycle } from "../payouts/Lifecycle.ts"
import { PayoutRepo } from "../payouts/PayoutRepo.ts"
import { type Job, JobQueue } from "./JobQueue.ts"

const MAX_JOBS_PER_TICK = 50

/** Polls the jobs table and sweeps expired deposit windows, on every replica. */
export const JobWorkerLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const config = yield* AppConfig
    const queue = yield* JobQueue
    const lifecycle = yield* Lifecycle
    const payouts = yield* PayoutRepo

    const perform = (job: Job) => {
      switch (job._tag) {
        case "ProviderTransferState":
          return Effect.asVoid(lifecycle.applyTransferState(job))
      }
    }

    // One job per transaction; returns whether there was one.
    const runOne = Effect.gen(function*() {
      const at = yield* now
      const due = yield* queue.claimDue(at)
      if (Option.isNone(due)) return false
      const job = due.value
      const outcome = yield* Effect.exit(perform(job.payload))
      if (outcome._tag === "Success") {
        yield* queue.markDone(job.id, at)
      } else {
        const backoffSeconds = Math.min(300, 2 ** job.attempts)
        yield* queue.markFailed(job.id, Cause.pretty(outcome.cause).slice(0, 500), addSeconds(at, backoffSeconds))
      }
      return true
    }).pipe(sql.withTransaction, Effect.orDie)

    const tick = Effect.gen(function*() {
      yield* Effect.flatMap(now, payouts.expireOverdue).pipe(sql.withTransaction, Effect.orDie)
      for (let i = 0; i < MAX_JOBS_PER_TICK; i++) {
        if (!(yield* runOne)) break
      }
    }).pipe(
      Effect.catchAllCause((cause) => Effect.logWarning("job tick failed", cause))
    )

    yield* Effect.forkScoped(Effect.repeat(tick, Schedule.spaced(`${config.jobsPollIntervalMs} millis`)))
  })
)
