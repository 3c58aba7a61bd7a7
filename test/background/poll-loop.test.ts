import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect, Logger, type LogLevel, Ref } from "effect"
import { TestClock } from "effect/testing"
import { pollWithBackoff } from "../../src/background/PollLoop.ts"

// Explicit, not left to `it.scoped`: with vitest's isolate:false another file's @effect/vitest `layer()` can
// replace the environment `it.scoped` provides (it mutates the shared `it`), and this test needs the TestClock.
const withTestClock = Effect.provide(TestClock.layer())

const EVERY_MS = 100
const CAP_MS = 5_000

describe("pollWithBackoff", () => {
  it.effect("doubles the delay on consecutive failures up to the cap, logs the streak once, and resets on success", () =>
    Effect.gen(function*() {
      const down = yield* Ref.make(true)
      const runs = yield* Ref.make<ReadonlyArray<number>>([])
      const logged: Array<{ readonly level: LogLevel.LogLevel; readonly message: string }> = []
      const task = Effect.gen(function*() {
        const at = yield* Clock.currentTimeMillis
        yield* Ref.update(runs, (times) => [...times, at])
        if (yield* Ref.get(down)) return yield* Effect.fail(new Error("database down\n    at somewhere (stack)"))
      })
      const capture = Logger.layer([
        Logger.make(({ logLevel, message }) =>
          void logged.push({ level: logLevel, message: [message].flat().join(" ") })
        )
      ])
      yield* Effect.forkScoped(pollWithBackoff(task, { name: "test loop", everyMs: EVERY_MS, maxBackoffMs: CAP_MS }))
        .pipe(
          Effect.provide(capture)
        )

      yield* TestClock.adjust(60_000)
      const failing = yield* Ref.get(runs)
      const gaps = failing.slice(1).map((t, i) => t - failing[i]!)
      // after n failures the loop waits EVERY_MS · 2^n, never more than the cap
      expect(gaps).toEqual(gaps.map((_, i) => Math.min(CAP_MS, EVERY_MS * 2 ** (i + 1))))
      expect(gaps.at(-1)).toBe(CAP_MS)
      expect(logged).toHaveLength(1)
      expect(logged[0]!.level).toBe("Warn")
      expect(logged[0]!.message).toContain("test loop")
      expect(logged[0]!.message).toContain("database down")
      expect(logged[0]!.message).not.toContain("\n")

      yield* Ref.set(down, false)
      yield* TestClock.adjust(CAP_MS)
      const recoveredAt = (yield* Ref.get(runs)).length
      yield* TestClock.adjust(10 * EVERY_MS)
      const after = (yield* Ref.get(runs)).slice(recoveredAt - 1)
      expect(after.slice(1).map((t, i) => t - after[i]!)).toEqual(Array.from({ length: 10 }, () => EVERY_MS))
      expect(logged).toHaveLength(2)
      expect(logged[1]!.level).toBe("Info")
      expect(logged[1]!.message).toContain("recovered")
    }).pipe(withTestClock))
})
