import { Cause, Clock, Context, Effect, Latch, Layer } from "effect"
import { SqlError } from "effect/sql"
import { AppConfig } from "../config/Config.ts"
import { type RequestLogEntry, RequestLogRepo } from "./RequestLogRepo.ts"

/** Rows per INSERT. */
export const REQUEST_LOG_BATCH = 500
/** How long the writer lets entries gather after the first one arrives, so each INSERT carries many. */
const GATHER_MS = 200
/** A batch the database has not taken within this long is given up (and its entries counted as failed). */
const WRITE_TIMEOUT_MS = 10_000
/** At most one warning about dropped entries this often. */
const DROP_WARNING_INTERVAL_MS = 10_000
/** On shutdown, what is still buffered gets this long to be written. */
const FINAL_FLUSH_MS = 2_000

/** One short line: the database's own message when it gave one (the SqlError's driver error), else the failure's. */
const reasonOf = (cause: Cause.Cause<unknown>): string => {
  const error = Cause.squash(cause)
  const driver = SqlError.isSqlError(error) ? error.reason.cause : error
  const text = driver instanceof Error ? driver.message : String(driver)
  return (text.split("\n")[0] ?? "").slice(0, 160)
}

/**
 * The request logs' writer. `record` only puts the entry in a bounded buffer (REQUEST_LOG_BUFFER_SIZE entries) and
 * returns: a request never waits for the database for its log. When the buffer is full the entry is dropped and
 * counted (`dropped`), with a warning at most every 10 s. A background fiber takes the buffer in batches, one
 * multi-row INSERT each; a batch that fails or takes over 10 s is given up (`failed`) with a warning, and the
 * writer goes on with the next.
 */
export class RequestLogRecorder extends Context.Service<RequestLogRecorder, {
  readonly record: (entry: RequestLogEntry) => Effect.Effect<void>
  /** Entries dropped because the buffer was full, since start. */
  readonly dropped: Effect.Effect<number>
  /** Entries given up because the database did not take their batch, since start. */
  readonly failed: Effect.Effect<number>
}>()("RequestLogRecorder") {
  static readonly Default = Layer.effect(
    RequestLogRecorder,
    Effect.gen(function*() {
      const config = yield* AppConfig
      const repo = yield* RequestLogRepo
      const capacity = config.requestLogBufferSize
      const buffer: Array<RequestLogEntry> = []
      const waiting = Latch.makeUnsafe(false)
      let dropped = 0
      let droppedSinceWarning = 0
      let lastWarningAt = Number.NEGATIVE_INFINITY
      let failed = 0

      const warnDropped = Effect.flatMap(Clock.currentTimeMillis, (at) => {
        if (at - lastWarningAt < DROP_WARNING_INTERVAL_MS) return Effect.void
        lastWarningAt = at
        const since = droppedSinceWarning
        droppedSinceWarning = 0
        return Effect.logWarning(
          `request logs: buffer full (${capacity} entries), ${since} dropped since the last warning (${dropped} in all)`
        )
      })

      const record = (entry: RequestLogEntry): Effect.Effect<void> =>
        Effect.suspend(() => {
          if (buffer.length < capacity) {
            buffer.push(entry)
            if (buffer.length === 1) waiting.openUnsafe()
            return Effect.void
          }
          dropped++
          droppedSinceWarning++
          return warnDropped
        })

      const writeBatch = Effect.suspend(() => {
        const batch = buffer.splice(0, REQUEST_LOG_BATCH)
        return repo.insertMany(batch).pipe(
          Effect.timeout(WRITE_TIMEOUT_MS),
          Effect.catchCause((cause) => {
            failed += batch.length
            return Effect.logWarning(
              `request logs: a batch of ${batch.length} could not be written (${reasonOf(cause)})`
            )
          })
        )
      })

      const writeAll = Effect.whileLoop({ while: () => buffer.length > 0, body: () => writeBatch, step: () => {} })

      const writer = Effect.forever(
        Effect.gen(function*() {
          yield* waiting.await
          yield* Effect.sleep(GATHER_MS)
          // closed before the buffer is taken: an entry recorded from now on opens it again
          waiting.closeUnsafe()
          yield* writeAll
        })
      )

      // Added before the writer is started, so run after it is stopped: what is left is written once more.
      yield* Effect.addFinalizer(() => writeAll.pipe(Effect.timeout(FINAL_FLUSH_MS), Effect.ignore))
      yield* Effect.forkScoped(writer)

      return RequestLogRecorder.of({
        record,
        dropped: Effect.sync(() => dropped),
        failed: Effect.sync(() => failed)
      })
    })
  )
}
