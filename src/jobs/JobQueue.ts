import { SqlSchema } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, Schema } from "effect"

/** Simulated provider progress on a transfer (mock mode), applied like a provider webhook. */
export const ProviderTransferStateJob = Schema.TaggedStruct("ProviderTransferState", {
  transferId: Schema.String,
  state: Schema.String
})

export const Job = Schema.Union(ProviderTransferStateJob)
export type Job = typeof Job.Type

const DueJob = Schema.Struct({ id: Schema.String, payload: Job, attempts: Schema.Number })
export type DueJob = typeof DueJob.Type

/**
 * Scheduled work lives in PostgreSQL, not in one process's timers: any replica can run a due job
 * (claimed with FOR UPDATE SKIP LOCKED) and a restart loses nothing.
 */
export class JobQueue extends Effect.Service<JobQueue>()("JobQueue", {
  effect: Effect.gen(function*() {
    const sql = yield* PgClient.PgClient

    const claimDue = SqlSchema.findOne({
      Request: Schema.DateFromSelf,
      Result: DueJob,
      execute: (at) =>
        sql`SELECT id::text AS id, payload, attempts FROM jobs
            WHERE done_at IS NULL AND run_at <= ${at}
            ORDER BY run_at, id LIMIT 1 FOR UPDATE SKIP LOCKED`
    })

    return {
      enqueue: (job: Job, runAt: Date) =>
        sql`INSERT INTO jobs (kind, payload, run_at) VALUES (${job._tag}, ${JSON.stringify(job)}::jsonb, ${runAt})`.pipe(
          Effect.orDie,
          Effect.asVoid
        ),
      /** Must run inside a transaction: the row stays locked until the caller commits. */
      claimDue: (at: Date) => claimDue(at).pipe(Effect.orDie),
      markDone: (id: string, at: Date) => sql`UPDATE jobs SET done_at = ${at} WHERE id = ${id}`.pipe(Effect.orDie),
      markFailed: (id: string, error: string, retryAt: Date) =>
        sql`UPDATE jobs SET attempts = attempts + 1, last_error = ${error}, run_at = ${retryAt} WHERE id = ${id}`.pipe(
          Effect.orDie
        )
    } as const
  })
}) {}
