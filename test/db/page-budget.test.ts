/**
 * List pages share a bounded budget of rows in flight (src/db/PageBudget.ts): the service runs with a capped heap,
 * so concurrent large pages must queue rather than all hold their rows at once. Pages park on a gate while they hold
 * their rows; once every page's fiber is suspended (on the gate or on the budget), the number inside is the bound.
 * Without the budget all of them would be inside.
 */
import { expect, layer } from "@effect/vitest"
import { Deferred, Effect, Fiber, Ref } from "effect"
import { PAGE_ROWS_IN_FLIGHT, PageBudget } from "../../src/db/PageBudget.ts"
import { rowsFetched } from "../../src/db/Pagination.ts"

/** v4 shows no fiber's suspended status: yields until no page has entered for 50 yields (every fiber is parked). */
const settle = (entered: Ref.Ref<number>) =>
  Effect.gen(function*() {
    let quiet = 0
    let last = -1
    while (quiet < 50) {
      yield* Effect.yieldNow
      const now = yield* Ref.get(entered)
      quiet = now === last ? quiet + 1 : 0
      last = now
    }
  })

// One budget for the file, as a replica has one: each test leaves it whole (every page it ran has finished).
layer(PageBudget.Default)("list pages in flight", (it) => {
  it.effect("admits only as many 500-item pages as the row budget holds; the rest wait and then all complete", () =>
    Effect.gen(function*() {
      const pages = 20
      const budget = yield* PageBudget
      const gate = yield* Deferred.make<void>()
      const inside = yield* Ref.make(0)
      const maxInside = yield* Ref.make(0)
      const entered = yield* Ref.make(0)
      const page = Effect.gen(function*() {
        const now = yield* Ref.updateAndGet(inside, (n) => n + 1)
        yield* Ref.update(maxInside, (max) => Math.max(max, now))
        yield* Ref.update(entered, (n) => n + 1)
        yield* Deferred.await(gate)
        yield* Ref.update(inside, (n) => n - 1)
      }).pipe(budget.withRows(rowsFetched(500)))
      const fibers = yield* Effect.forEach(Array.from({ length: pages }), () => Effect.forkChild(page))
      yield* settle(entered)
      const bound = Math.floor(PAGE_ROWS_IN_FLIGHT / rowsFetched(500))
      expect(bound).toBeLessThan(pages)
      expect(yield* Ref.get(entered)).toBe(bound)
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.joinAll(fibers)
      expect(yield* Ref.get(entered)).toBe(pages)
      expect(yield* Ref.get(maxInside)).toBe(bound)
      expect(yield* Ref.get(inside)).toBe(0)
    }))

  it.effect("still runs a page larger than the whole budget (alone)", () =>
    Effect.gen(function*() {
      const budget = yield* PageBudget
      expect(yield* Effect.succeed("ran").pipe(budget.withRows(PAGE_ROWS_IN_FLIGHT * 2))).toBe("ran")
    }))
})
