import { Deferred, Effect, Exit, Option } from "effect"

interface Waiting<A> {
  readonly answer: Deferred.Deferred<Option.Option<A>>
  callers: number
}

/**
 * A lookup by key made in batches, one batch at a time: a call that arrives while `run` is busy waits, and every
 * key waiting then goes in the next run together (at most `maxBatch` of them, each once however many callers ask
 * for it). The first call on an idle lookup starts a run at once, so nothing waits for a timer, and however many
 * callers there are, `run` is never running more than once. A caller interrupted while its key waits leaves the
 * batch (its key is dropped when no other caller wants it). A key `run` leaves out of its answer is none; a
 * failed run fails its batch's callers.
 */
export const batched = <A>(options: {
  readonly run: (keys: ReadonlyArray<string>) => Effect.Effect<ReadonlyMap<string, A>>
  readonly maxBatch: number
}) => {
  const waiting = new Map<string, Waiting<A>>()
  let running = false

  const nextBatch = () => {
    const batch = new Map<string, Waiting<A>>()
    for (const [key, entry] of waiting) {
      if (batch.size >= options.maxBatch) break
      batch.set(key, entry)
      waiting.delete(key)
    }
    return batch
  }

  const settle = (batch: ReadonlyMap<string, Waiting<A>>, exit: Exit.Exit<ReadonlyMap<string, A>>) =>
    Effect.forEach(
      batch,
      ([key, { answer }]) => Deferred.done(answer, Exit.map(exit, (found) => Option.fromUndefinedOr(found.get(key)))),
      { discard: true }
    )

  const drain: Effect.Effect<void> = Effect.suspend(() => {
    const batch = nextBatch()
    if (batch.size === 0) {
      running = false
      return Effect.void
    }
    return Effect.exit(options.run([...batch.keys()])).pipe(
      Effect.flatMap((exit) => settle(batch, exit)),
      Effect.andThen(drain)
    )
  })

  return (key: string): Effect.Effect<Option.Option<A>> =>
    // uninterruptible until the run is started (or joined), so a caller interrupted in between cannot leave the
    // lookup marked running with no run
    Effect.uninterruptibleMask((restore) =>
      Effect.suspend(() => {
        const entry = waiting.get(key) ?? { answer: Deferred.makeUnsafe<Option.Option<A>>(), callers: 0 }
        entry.callers++
        waiting.set(key, entry)
        const leave = Effect.sync(() => {
          entry.callers--
          if (entry.callers === 0 && waiting.get(key) === entry) waiting.delete(key)
        })
        const answer = Effect.onInterrupt(restore(Deferred.await(entry.answer)), () => leave)
        if (running) return answer
        running = true
        return Effect.andThen(Effect.forkDetach(drain), answer)
      })
    )
}
