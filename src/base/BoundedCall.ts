import { Clock, Duration, Effect, Schedule } from "effect"

/**
 * A call to an outside system, its tries and the backoff between them all within one `timeout` (the limit of the
 * call, not of a try: a timeout per try let four tries stretch a 503 to ~40 s). A try may use half of the time left
 * (the last one all of it): a slow answer gets most of the time, and a try that hangs still leaves room for a retry.
 * `tryOnce` gets the time its try may take; failures that `retryable` accepts are tried again, up to `retries` times.
 */
export const boundedTries = <A, E>(options: {
  readonly timeout: Duration.Input
  readonly retries: number
  readonly retryBase?: Duration.Input
  readonly tryOnce: (limit: Duration.Duration) => Effect.Effect<A, E>
  readonly retryable: (error: E) => boolean
  /** The failure when the whole call ran out of time. */
  readonly outOfTime: () => E
}): Effect.Effect<A, E> => {
  const totalMillis = Math.max(1, Math.round(Duration.toMillis(options.timeout)))
  const policy = Schedule.max([
    Schedule.exponential(options.retryBase ?? Duration.millis(200)).pipe(Schedule.jittered),
    Schedule.recurs(options.retries)
  ])
  return Effect.gen(function*() {
    const deadline = (yield* Clock.currentTimeMillis) + totalMillis
    let triesLeft = options.retries + 1
    const nextTry = Effect.flatMap(Clock.currentTimeMillis, (at) => {
      const left = Math.max(1, deadline - at)
      triesLeft -= 1
      return options.tryOnce(Duration.millis(triesLeft > 0 ? Math.ceil(left / 2) : left))
    })
    return yield* Effect.retry(nextTry, { schedule: policy, while: options.retryable })
  }).pipe(
    Effect.timeoutOrElse({ duration: Duration.millis(totalMillis), orElse: () => Effect.fail(options.outOfTime()) })
  )
}
