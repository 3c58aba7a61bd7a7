import { Deferred, Effect, FiberId } from "effect"

/**
 * Concurrent calls with the same key share one run of `run`: later callers wait for the first one's result.
 * The run is a daemon fiber, so a caller that goes away (a client hanging up) does not cancel it for the rest.
 */
export const singleFlight = <Args extends ReadonlyArray<unknown>, A>(
  keyOf: (...args: Args) => string,
  run: (...args: Args) => Effect.Effect<A>
) => {
  const running = new Map<string, Deferred.Deferred<A>>()
  return (...args: Args): Effect.Effect<A> =>
    Effect.suspend(() => {
      const key = keyOf(...args)
      const inFlight = running.get(key)
      if (inFlight !== undefined) return Deferred.await(inFlight)
      const result = Deferred.unsafeMake<A>(FiberId.none)
      running.set(key, result)
      return run(...args).pipe(
        Effect.exit,
        Effect.flatMap((exit) => Deferred.done(result, exit)),
        Effect.ensuring(Effect.sync(() => running.delete(key))),
        Effect.forkDaemon,
        Effect.zipRight(Deferred.await(result))
      )
    })
}
