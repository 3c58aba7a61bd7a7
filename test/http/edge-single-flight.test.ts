/**
 * The shared key lookup behind authentication (src/base/SingleFlight.ts): a partner's burst with a key the
 * replica has not seen yet is one database lookup (and spends no failure budget per request), and a caller
 * that goes away does not cancel the lookup for the others.
 */
import { Deferred, Effect, Fiber } from "effect"
import { describe, expect, it } from "vitest"
import { singleFlight } from "../../src/base/SingleFlight.ts"

/** A lookup that waits for `release`, counting how often it ran. */
const blockedLookup = () =>
  Effect.gen(function*() {
    const release = yield* Deferred.make<string>()
    const started = yield* Deferred.make<void>()
    let runs = 0
    const lookup = (key: string) =>
      Effect.gen(function*() {
        runs++
        yield* Deferred.succeed(started, undefined)
        return `${key}:${yield* Deferred.await(release)}`
      })
    return { release, started, lookup, runs: () => runs }
  })

describe("singleFlight", () => {
  it("runs once for concurrent calls with the same key, and gives each caller the result", () =>
    Effect.runPromise(Effect.gen(function*() {
      const { lookup, release, runs, started } = yield* blockedLookup()
      const shared = singleFlight((key: string) => key, lookup)
      const callers = yield* Effect.forEach(Array.from({ length: 100 }), () => Effect.fork(shared("k")))
      const other = yield* Effect.fork(shared("other"))
      yield* Deferred.await(started)
      yield* Deferred.succeed(release, "found")
      expect(yield* Effect.forEach(callers, Fiber.join)).toEqual(Array.from({ length: 100 }, () => "k:found"))
      expect(yield* Fiber.join(other)).toBe("other:found")
      expect(runs()).toBe(2)
      // once settled, the next call runs again (nothing is cached)
      expect(yield* shared("k")).toBe("k:found")
      expect(runs()).toBe(3)
    })))

  it("finishes the run for the others when the first caller is interrupted", () =>
    Effect.runPromise(Effect.gen(function*() {
      const { lookup, release, runs, started } = yield* blockedLookup()
      const shared = singleFlight((key: string) => key, lookup)
      const first = yield* Effect.fork(shared("k"))
      yield* Deferred.await(started)
      const second = yield* Effect.fork(shared("k"))
      yield* Fiber.interrupt(first)
      yield* Deferred.succeed(release, "found")
      expect(yield* Fiber.join(second)).toBe("k:found")
      expect(runs()).toBe(1)
    })))
})
