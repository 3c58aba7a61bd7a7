/**
 * What guesses from an address over its failed-authentication budget cost the database, and that no bound on it
 * refuses a correct key: over budget a key is still looked up, in batches run one at a time per replica (a correct
 * key waiting among guesses goes in the next batch and is found), and a hash found unknown is not looked up again
 * for a minute.
 */
import { it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Option } from "effect"
import { describe, expect } from "vitest"
import { makeFailedAuthLimit } from "../../src/http/FailedAuthLimit.ts"

const ADDRESS = "203.0.113.7"

/** A key table in memory, looked up in batches; each batch waits for `gate` when one is set. */
const table = (active: ReadonlySet<string>) => {
  const state = { batches: new Array<ReadonlyArray<string>>(), running: 0, mostRunning: 0 }
  let gate: Deferred.Deferred<void> | undefined
  const lookUpMany = (hashes: ReadonlyArray<string>) =>
    Effect.gen(function*() {
      state.batches.push(hashes)
      state.running++
      state.mostRunning = Math.max(state.mostRunning, state.running)
      if (gate !== undefined) yield* Deferred.await(gate)
      state.running--
      return new Map(hashes.filter((hash) => active.has(hash)).map((hash) => [hash, `row of ${hash}`]))
    })
  return { state, lookUpMany, hold: (deferred: Deferred.Deferred<void>) => (gate = deferred) }
}

/** A limiter over `lookUpMany` whose address has spent its budget of one failure. */
const overBudget = (lookUpMany: ReturnType<typeof table>["lookUpMany"]) =>
  Effect.gen(function*() {
    const limit = makeFailedAuthLimit({ lookUpMany, burst: 1, perSecond: 0.0001 })
    const first = yield* limit.guardLookup(ADDRESS, "spent", Effect.succeedNone)
    expect(first).toEqual({ _tag: "Looked", key: Option.none() })
    const next = yield* limit.guardLookup(ADDRESS, "unseen", Effect.die("not looked up one by one over budget"))
    expect(next._tag).toBe("OverBudget")
    return limit
  })

describe("lookups for an address over budget", () => {
  it.effect("run in batches, one at a time: keys waiting behind a batch go together in the next, a correct one found", () =>
    Effect.gen(function*() {
      const keys = table(new Set(["correct"]))
      const limit = yield* overBudget(keys.lookUpMany)
      const gate = yield* Deferred.make<void>()
      keys.hold(gate)
      const first = yield* Effect.forkChild(limit.lookUpOverBudget("guess-0"))
      while (keys.state.running === 0) yield* Effect.yieldNow
      const guesses = yield* Effect.forEach(
        Array.from({ length: 10 }, (_, i) => `guess-${i + 1}`),
        (hash) => Effect.forkChild(limit.lookUpOverBudget(hash))
      )
      const correct = yield* Effect.forkChild(limit.lookUpOverBudget("correct"))
      const again = yield* Effect.forkChild(limit.lookUpOverBudget("guess-1"))
      for (let i = 0; i < 100; i++) yield* Effect.yieldNow
      expect(keys.state.batches).toEqual([["guess-0"]])
      yield* Deferred.succeed(gate, undefined)
      expect(yield* Fiber.join(correct)).toEqual(Option.some("row of correct"))
      expect(yield* Fiber.join(first)).toEqual(Option.none())
      for (const fiber of [...guesses, again]) expect(yield* Fiber.join(fiber)).toEqual(Option.none())
      expect(keys.state.batches).toEqual([
        ["guess-0"],
        [...Array.from({ length: 10 }, (_, i) => `guess-${i + 1}`), "correct"]
      ])
      expect(keys.state.mostRunning).toBe(1)
    }))

  it.effect("leave out the key of a caller that gave up waiting", () =>
    Effect.gen(function*() {
      const keys = table(new Set())
      const limit = yield* overBudget(keys.lookUpMany)
      const gate = yield* Deferred.make<void>()
      keys.hold(gate)
      const first = yield* Effect.forkChild(limit.lookUpOverBudget("guess-0"))
      while (keys.state.running === 0) yield* Effect.yieldNow
      const leaving = yield* Effect.forkChild(limit.lookUpOverBudget("gone"))
      const staying = yield* Effect.forkChild(limit.lookUpOverBudget("kept"))
      for (let i = 0; i < 10; i++) yield* Effect.yieldNow
      yield* Fiber.interrupt(leaving)
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(first)
      yield* Fiber.join(staying)
      expect(keys.state.batches).toEqual([["guess-0"], ["kept"]])
    }))

  it.effect("do not look a hash found unknown up again, within budget or over it", () =>
    Effect.gen(function*() {
      const keys = table(new Set())
      const limit = yield* overBudget(keys.lookUpMany)
      expect(yield* limit.lookUpOverBudget("wrong")).toEqual(Option.none())
      expect(yield* limit.lookUpOverBudget("wrong")).toEqual(Option.none())
      expect(yield* limit.lookUpOverBudget("spent")).toEqual(Option.none()) // failed within the budget
      expect(keys.state.batches).toEqual([["wrong"]])
    }))

  it.effect("trust a key found over budget: it is looked up again without spending or being refused", () =>
    Effect.gen(function*() {
      const keys = table(new Set(["correct"]))
      const limit = yield* overBudget(keys.lookUpMany)
      expect(yield* limit.lookUpOverBudget("correct")).toEqual(Option.some("row of correct"))
      expect(limit.passTrusted("correct")).toBe(true)
      const found = Effect.succeed(Option.some("row of correct"))
      expect(yield* limit.guardLookup(ADDRESS, "correct", found)).toEqual({
        _tag: "Looked",
        key: Option.some("row of correct")
      })
    }))
})
