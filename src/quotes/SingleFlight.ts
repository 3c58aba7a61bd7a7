import { Cause, Deferred, Effect, Exit, Option, SynchronizedRef } from "effect"

export interface Flight<A> {
  readonly value: A
  /** Whether this call ran the work (false: it shared another call's run). */
  readonly leader: boolean
}

type Joined<A, E> = { readonly flight: Deferred.Deferred<A, E>; readonly leader: boolean }

/**
 * Concurrent calls share one run of `work`: the first caller runs it itself (so inside its transaction, if it
 * is in one), the others wait for its outcome, success or failure alike. The next call after
 * a run settles starts a new one. If the running caller is interrupted, a waiting caller takes over.
 */
export const makeSingleFlight = <A, E>(work: Effect.Effect<A, E>): Effect.Effect<Effect.Effect<Flight<A>, E>> =>
  Effect.map(SynchronizedRef.make(Option.none<Deferred.Deferred<A, E>>()), (inFlight) => {
    const join = SynchronizedRef.modifyEffect(
      inFlight,
      (current): Effect.Effect<readonly [Joined<A, E>, Option.Option<Deferred.Deferred<A, E>>]> =>
        Option.match(current, {
          onSome: (flight) => Effect.succeed([{ flight, leader: false }, current] as const),
          onNone: () => Effect.map(Deferred.make<A, E>(), (flight) => [{ flight, leader: true }, Option.some(flight)] as const)
        })
    )

    const lead = (flight: Deferred.Deferred<A, E>) =>
      work.pipe(
        Effect.onExit((exit) => Effect.zipRight(SynchronizedRef.set(inFlight, Option.none()), Deferred.done(flight, exit))),
        Effect.map((value): Flight<A> => ({ value, leader: true }))
      )

    const shared: Effect.Effect<Flight<A>, E> = Effect.gen(function*() {
      const { flight, leader } = yield* join
      if (leader) return yield* lead(flight)
      const outcome = yield* Effect.exit(Deferred.await(flight))
      if (Exit.isFailure(outcome) && Cause.isInterruptedOnly(outcome.cause)) return yield* shared
      return { value: yield* outcome, leader: false }
    })
    return shared
  })
