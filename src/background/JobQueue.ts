import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { PayoutStatus } from "@cop-integrations/contracts"
import { currentTraceparent } from "../base/Tracing.ts"

/** Simulated provider progress on a transfer (mock mode), in payout terms, applied like a provider callback. */
export const TransferProgressJob = Schema.TaggedStruct("TransferProgress", {
  transferId: Schema.String,
  status: PayoutStatus,
  fundsArrived: Schema.Boolean
})

export const Job = Schema.Union([TransferProgressJob])
export type Job = typeof Job.Type

/** The kinds this version can run (the record type makes it list every one); a newer replica's are left for it. */
export const KNOWN_KINDS = Object.keys({ TransferProgress: null } satisfies Record<Job["_tag"], null>)

/** A claimed job; its payload is decoded by the worker, so an unreadable one counts as a failed attempt. */
const DueJob = Schema.Struct({
  id: Schema.String,
  kind: Schema.String,
  payload: Schema.Unknown,
  attempts: Schema.Number,
  run_at: Schema.Date,
  /** The trace of the span that queued it (null: tracing was off); the job's span continues it. */
  traceparent: Schema.NullOr(Schema.String)
})
export type DueJob = typeof DueJob.Type

/**
 * Scheduled work lives in PostgreSQL, not in one process's timers: any replica can run a due job
 * (claimed with FOR UPDATE SKIP LOCKED) and a restart loses nothing. A job is pending, done (`done_at`) or,
 * after its last allowed attempt failed, dead (`dead_at`: kept for inspection, never claimed again).
 */
export class JobQueue extends Context.Service<JobQueue>()("JobQueue", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const claimDue = SqlSchema.findOneOption({
      Request: Schema.Date,
      Result: DueJob,
      execute: (at) =>
        sql`SELECT id::text AS id, kind, payload, attempts, run_at, traceparent FROM jobs
            WHERE done_at IS NULL AND dead_at IS NULL AND run_at <= ${at} AND kind IN ${sql.in(KNOWN_KINDS)}
            ORDER BY run_at, id LIMIT 1 FOR UPDATE SKIP LOCKED`
    })

    const nextRunAt = SqlSchema.findOne({
      Request: Schema.Void,
      Result: Schema.Struct({ next: Schema.NullOr(Schema.Date) }),
      execute: () => sql`SELECT min(run_at) AS next FROM jobs WHERE done_at IS NULL AND dead_at IS NULL`
    })

    /**
     * The queue by kind, for the metrics: unfinished jobs, those due at `at`, and the oldest due one's run_at. The
     * kinds this version knows only, from the due-jobs index (unfinished jobs; finished and dead ones are not read).
     */
    const depthByKind = SqlSchema.findAll({
      Request: Schema.Date,
      Result: Schema.Struct({
        kind: Schema.String,
        depth: Schema.FiniteFromString,
        due: Schema.FiniteFromString,
        oldest_due: Schema.NullOr(Schema.Date)
      }),
      execute: (at) =>
        sql`SELECT kind, count(*)::text AS depth, count(*) FILTER (WHERE run_at <= ${at})::text AS due,
                   min(run_at) FILTER (WHERE run_at <= ${at}) AS oldest_due
            FROM jobs WHERE done_at IS NULL AND dead_at IS NULL AND kind IN ${sql.in(KNOWN_KINDS)}
            GROUP BY kind`
    })

    return {
      depthByKind: (at: Date) =>
        depthByKind(at).pipe(
          Effect.map((rows) =>
            rows.map(({ depth, due, kind, oldest_due }) => ({ kind, depth, due, oldestDue: oldest_due }))
          ),
          Effect.catchTag("SchemaError", Effect.die)
        ),
      /** When the earliest unfinished job is due (null: none). */
      nextRunAt: nextRunAt(undefined).pipe(
        Effect.map((row) => row.next),
        Effect.catchTags({ SchemaError: Effect.die, NoSuchElementError: Effect.die })
      ),
      enqueue: (job: Job, runAt: Date) =>
        Effect.flatMap(
          currentTraceparent,
          (traceparent) =>
            sql`INSERT INTO jobs (kind, payload, run_at, traceparent)
                VALUES (${job._tag}, ${JSON.stringify(job)}::jsonb, ${runAt}, ${traceparent})`
        ).pipe(
          Effect.orDie,
          Effect.asVoid
        ),
      /** Must run inside a transaction: the row stays locked until the caller commits. */
      claimDue: (at: Date) => claimDue(at).pipe(Effect.catchTag("SchemaError", Effect.die)),
      markDone: (id: string, at: Date) => sql`UPDATE jobs SET done_at = ${at} WHERE id = ${id}`,
      markFailed: (id: string, error: string, retryAt: Date) =>
        sql`UPDATE jobs SET attempts = attempts + 1, last_error = ${error}, run_at = ${retryAt} WHERE id = ${id}`,
      markDead: (id: string, error: string, at: Date) =>
        sql`UPDATE jobs SET attempts = attempts + 1, last_error = ${error}, dead_at = ${at} WHERE id = ${id}`
    } as const
  })
}) {
  static readonly Default = Layer.effect(this, this.make)
}
