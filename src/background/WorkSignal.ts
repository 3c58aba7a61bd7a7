import { PgClient } from "@effect/sql-pg"
import { Context, Deferred, Effect, Layer, Queue, Ref, Schedule } from "effect"

/** The channel a commit that added jobs or webhook deliveries notifies (migration 0012). */
export const WORK_CHANNEL = "work_available"

/**
 * Wakes the polling loops when another transaction (on any replica) commits new work, so an idle loop can sleep
 * long (JOBS_IDLE_INTERVAL_MS) and still start new work at once. Listens on one dedicated connection. The idle
 * interval stays the fallback: a lost listening connection, or work that becomes due later (a retry's time), is
 * found by the next idle poll.
 */
export class WorkSignal extends Context.Service<WorkSignal>()("WorkSignal", {
  make: Effect.gen(function*() {
    const sql = yield* PgClient.PgClient
    const current = yield* Ref.make(yield* Deferred.make<void>())

    const wakeAll = Effect.flatMap(
      Deferred.make<void>(),
      (next) => Effect.flatMap(Ref.getAndSet(current, next), (woken) => Deferred.succeed(woken, undefined))
    )

    // One WARN line per outage: later retries log at DEBUG until a notification shows listening works again.
    const failing = yield* Ref.make(false)
    const listening = Effect.scoped(
      Effect.flatMap(
        sql.listen(WORK_CHANNEL),
        (notifications) =>
          Effect.forever(Effect.andThen(Queue.take(notifications), Effect.andThen(Ref.set(failing, false), wakeAll)))
      )
    )
    yield* listening.pipe(
      Effect.tapError((error) =>
        Effect.flatMap(Ref.getAndSet(failing, true), (already) => {
          const line = `work notifications: listening failed (${error.message}); polling only until it recovers`
          return already ? Effect.logDebug(line) : Effect.logWarning(line)
        })
      ),
      Effect.retry(Schedule.min([Schedule.exponential("1 second"), Schedule.spaced("30 seconds")])),
      Effect.forkScoped
    )

    /**
     * Taken before a loop's round: completes at the first notification after this point, so one that arrives while
     * the round runs is not missed.
     */
    const armed = Effect.map(Ref.get(current), (deferred) => Deferred.await(deferred))

    return {
      armed,
      /** Wakes this replica's loops now (work became runnable without a new row, e.g. a delivery finished). */
      wake: Effect.asVoid(wakeAll)
    } as const
  })
}) {
  static readonly Default = Layer.effect(this, this.make)
}
