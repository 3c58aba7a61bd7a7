import { Cause, Effect, Exit } from "effect"

export interface PollOptions {
  /** Names the loop in its log lines. */
  readonly name: string
  /** Delay between runs while they succeed. */
  readonly everyMs: number
  /** The longest delay after consecutive failures. */
  readonly maxBackoffMs: number
}

/** The delay before the next run after `failures` consecutive failures: doubling from `everyMs`, capped. */
export const delayAfter = (failures: number, options: PollOptions): number =>
  failures === 0 ? options.everyMs : Math.min(options.maxBackoffMs, options.everyMs * 2 ** failures)

/** One short line for a log: the failure's message, no stack trace. */
const reasonOf = (cause: Cause.Cause<unknown>): string => {
  const error = Cause.squash(cause)
  const text = error instanceof Error ? error.message : String(error)
  return (text.split("\n")[0] ?? "").slice(0, 160)
}

/**
 * Runs `task` forever, `everyMs` apart. After a failure the delay doubles (up to `maxBackoffMs`), and a failure
 * streak logs two short lines: one when it starts and one when the loop recovers.
 */
export const pollWithBackoff = <E, R>(task: Effect.Effect<unknown, E, R>, options: PollOptions): Effect.Effect<never, never, R> =>
  Effect.iterate(0, {
    while: () => true,
    body: (failures) =>
      Effect.exit(task).pipe(
        Effect.flatMap((exit): Effect.Effect<number> => {
          if (Exit.isSuccess(exit)) {
            return failures === 0
              ? Effect.succeed(0)
              : Effect.as(Effect.logInfo(`${options.name}: recovered after ${failures} failed attempt(s)`), 0)
          }
          return failures === 0
            ? Effect.as(
              Effect.logWarning(`${options.name}: failing (${reasonOf(exit.cause)}); retrying with exponential backoff`),
              1
            )
            : Effect.succeed(failures + 1)
        }),
        Effect.tap((next) => Effect.sleep(delayAfter(next, options)))
      )
  }).pipe(Effect.zipRight(Effect.never))
