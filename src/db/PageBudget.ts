import { Context, Effect, Layer, Semaphore } from "effect"

/**
 * Rows of list pages in flight in this replica, at most `PAGE_ROWS_IN_FLIGHT` at a time across payouts, swaps and
 * events (a page of `limit` items fetches `limit + 1` rows). The rows and the items presented from them are the
 * large allocations of a list (~1.2 MB of JSON for 500 payouts), and the service runs with a bounded heap
 * (`--max-old-space-size`, see `npm start`): unbounded, enough concurrent large pages could exhaust it. Pages beyond
 * the budget wait their turn instead.
 */
export const PAGE_ROWS_IN_FLIGHT = 4_000

export class PageBudget extends Context.Service<PageBudget>()("PageBudget", {
  make: Effect.gen(function*() {
    const rows = yield* Semaphore.make(PAGE_ROWS_IN_FLIGHT)
    /** Runs `page` holding `count` rows of the budget (capped at the whole budget, so any page can run). */
    const withRows = (count: number) => <A, E, R>(page: Effect.Effect<A, E, R>) =>
      rows.withPermits(Math.min(count, PAGE_ROWS_IN_FLIGHT))(page)
    return { withRows } as const
  })
}) {
  static readonly Default = Layer.effect(this, this.make)
}
