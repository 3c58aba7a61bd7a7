/**
 * src/base/SingleFlight.ts. The shared key lookup behind authentication: a partner's burst with a key the
 * replica has not seen yet is one database lookup (and spends no failure budget per request), and a caller
 * that goes away does not cancel the lookup for the others. The rate cache's refresh: it runs in the caller's
 * own fiber, so a waiting caller takes over when the running one is interrupted.
 */
import { Deferred, Effect, Fiber, Ref } from "effect"
import { describe, expect, it } from "@effect/vitest"
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

/** The lookup shared as authentication shares it (a caller going away does not stop it), answering its value. */
const sharedLookup = (lookup: (key: string) => Effect.Effect<string>) => {
  const shared = singleFlight({ key: (key: string) => key, run: lookup, whenStarterInterrupted: "finish" })
  return (key: string) => Effect.map(shared(key), (flight) => flight.value)
}

describe("singleFlight that finishes (the key lookup)", () => {
  it.effect("runs once for concurrent calls with the same key, and gives each caller the result", () =>
    Effect.gen(function*() {
      const { lookup, release, runs, started } = yield* blockedLookup()
      const shared = sharedLookup(lookup)
      const callers = yield* Effect.forEach(Array.from({ length: 100 }), () => Effect.forkChild(shared("k")))
      const other = yield* Effect.forkChild(shared("other"))
      yield* Deferred.await(started)
      yield* Deferred.succeed(release, "found")
      expect(yield* Effect.forEach(callers, Fiber.join)).toEqual(Array.from({ length: 100 }, () => "k:found"))
      expect(yield* Fiber.join(other)).toBe("other:found")
      expect(runs()).toBe(2)
      // once settled, the next call runs again (nothing is cached)
      expect(yield* shared("k")).toBe("k:found")
      expect(runs()).toBe(3)
    }))

  it.effect("finishes the run for the others when the first caller is interrupted", () =>
    Effect.gen(function*() {
      const { lookup, release, runs, started } = yield* blockedLookup()
      const shared = sharedLookup(lookup)
      const first = yield* Effect.forkChild(shared("k"))
      yield* Deferred.await(started)
      // started at once: Effect 4 interrupts `first` without yielding to queued fibers, which Effect 3 did
      const second = yield* Effect.forkChild(shared("k"), { startImmediately: true })
      yield* Fiber.interrupt(first)
      yield* Deferred.succeed(release, "found")
      expect(yield* Fiber.join(second)).toBe("k:found")
      expect(runs()).toBe(1)
    }))
})

describe("singleFlight that hands over (the rate cache's refresh)", () => {
  /**
   * Yields until `fiber` is parked. Effect 4 has no public fiber status: a forked fiber runs as soon as we yield and
   * goes on until it parks (nothing here comes near its run budget), so after yielding it has parked unless it ended.
   */
  const untilSuspended = (fiber: Fiber.Fiber<unknown, unknown>) =>
    Effect.gen(function*() {
      for (let i = 0; i < 10; i++) yield* Effect.yieldNow
      if (fiber.pollUnsafe() !== undefined) throw new Error("fiber finished instead of suspending")
    })

  it.effect("a waiting caller takes over when the running caller is interrupted", () =>
    Effect.gen(function*() {
      const runs = yield* Ref.make(0)
      // the first run never finishes; the second answers with its run number
      const work = Effect.flatMap(
        Ref.updateAndGet(runs, (n) => n + 1),
        (n) => (n === 1 ? Effect.never : Effect.succeed(n))
      )
      const shared = singleFlight({ key: () => "rates", run: () => work, whenStarterInterrupted: "handOver" })
      const first = yield* Effect.forkChild(shared())
      yield* untilSuspended(first)
      const second = yield* Effect.forkChild(shared())
      yield* untilSuspended(second)
      expect(yield* Ref.get(runs)).toBe(1)
      yield* Fiber.interrupt(first)
      expect(yield* Fiber.join(second)).toEqual({ value: 2, leader: true })
    }))
})
