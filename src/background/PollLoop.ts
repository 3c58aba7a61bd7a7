import { Cause, Effect, Exit } from "effect"
import { now } from "../base/Clock.ts"

export interface PollOptions {
  /** Names the loop in its log lines. */
  readonly name: string
  /** Delay between runs while they succeed. */
  readonly everyMs: number
  /** The longest delay after consecutive failures. */
  readonly maxBackoffMs: number
  /**
   * For a task that answers an `IdleHint`: after a round without work, wait until `armed` (taken before the round)
   * completes, the next known due time, or `ms`, whichever comes first, instead of `everyMs`.
   */
  readonly idle?: { readonly ms: number; readonly armed: Effect.Effect<Effect.Effect<void>> }
}

/** What a round of an idle-aware task found: work (poll again soon), or none and when the next known work is due. */
export type IdleHint = { readonly busy: true } | { readonly busy: false; readonly nextDueInMs: number | null }

/** An idle round's hint from the due time of the next known work (null: none known). */
export const idleUntil = (next: Date | null): Effect.Effect<IdleHint> =>
  Effect.map(now, (at) => ({ busy: false, nextDueInMs: next === null ? null : next.getTime() - at.getTime() }))

const isIdle = (value: unknown): value is { readonly busy: false; readonly nextDueInMs: number | null } =>
  typeof value === "object" && value !== null && "busy" in value && value.busy === false

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
 * streak logs two short lines: one when it starts and one when the loop recovers. With `idle`, a round that found
 * no work waits for new work (or `idle.ms`) instead.
 */
export const pollWithBackoff = <E, R>(
  task: Effect.Effect<unknown, E, R>,
  options: PollOptions
): Effect.Effect<never, never, R> => {
  const idle = options.idle
  const round = (failures: number) =>
    Effect.gen(function*() {
      const woken = idle === undefined ? Effect.never : yield* idle.armed
      const exit = yield* Effect.exit(task)
      if (Exit.isSuccess(exit)) {
        if (failures > 0) yield* Effect.logInfo(`${options.name}: recovered after ${failures} failed attempt(s)`)
        if (idle !== undefined && isIdle(exit.value)) {
          const dueIn = exit.value.nextDueInMs ?? idle.ms
          yield* Effect.raceFirst(Effect.sleep(Math.min(idle.ms, Math.max(options.everyMs, dueIn))), woken)
        } else yield* Effect.sleep(options.everyMs)
        return 0
      }
      if (failures === 0) {
        yield* Effect.logWarning(
          `${options.name}: failing (${reasonOf(exit.cause)}); retrying with exponential backoff`
        )
      }
      yield* Effect.sleep(delayAfter(failures + 1, options))
      return failures + 1
    })
  return Effect.gen(function*() {
    let failures = 0
    while (true) failures = yield* round(failures)
  })
}
