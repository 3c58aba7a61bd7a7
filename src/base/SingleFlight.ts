import { Cause, Deferred, Effect, Exit } from "effect"

export interface Flight<A> {
  readonly value: A
  /** Whether this call ran the work (false: it shared another call's run). */
  readonly leader: boolean
}

/**
 * What becomes of a run when the caller that started it is interrupted:
 * - "finish": the run is a daemon fiber and goes on for the callers still waiting (a client hanging up does not
 *   cancel a lookup the others share);
 * - "handOver": the run is the caller's own (inside its transaction, if it is in one) and stops with it; a waiting
 *   caller then starts a new run.
 */
export type WhenStarterInterrupted = "finish" | "handOver"

/**
 * Concurrent calls with the same key share one run of `run`: the first caller starts it, the others wait for its
 * outcome, success or failure alike. The next call after a run settles starts a new one (nothing is cached).
 */
export const singleFlight = <Args extends ReadonlyArray<unknown>, A, E>(options: {
  readonly key: (...args: Args) => string
  readonly run: (...args: Args) => Effect.Effect<A, E>
  readonly whenStarterInterrupted: WhenStarterInterrupted
}) => {
  const running = new Map<string, Deferred.Deferred<A, E>>()

  const call = (...args: Args): Effect.Effect<Flight<A>, E> =>
    Effect.uninterruptibleMask((restore) =>
      Effect.suspend(() => {
        const key = options.key(...args)
        const inFlight = running.get(key)
        if (inFlight !== undefined) {
          return Effect.flatMap(restore(Effect.exit(Deferred.await(inFlight))), (outcome) =>
            options.whenStarterInterrupted === "handOver" && Exit.isFailure(outcome) &&
              Cause.hasInterruptsOnly(outcome.cause)
              ? restore(call(...args))
              : Effect.map(outcome, (value): Flight<A> => ({ value, leader: false })))
        }
        const flight = Deferred.makeUnsafe<A, E>()
        running.set(key, flight)
        const settle = (exit: Exit.Exit<A, E>) =>
          Effect.andThen(
            Effect.sync(() =>
              running.delete(key)
            ),
            Deferred.done(flight, exit)
          )
        const run = restore(options.run(...args))
        const led = options.whenStarterInterrupted === "handOver"
          ? Effect.onExit(run, settle)
          : Effect.andThen(
            Effect.forkDetach(Effect.flatMap(Effect.exit(run), settle)),
            restore(Deferred.await(flight))
          )
        return Effect.map(led, (value): Flight<A> => ({ value, leader: true }))
      })
    )

  return call
}
