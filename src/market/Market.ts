import { Context, type Effect } from "effect"

/** Whether the USD/COP spot market is open (our own `mercado_cerrado` policy; Bre-B itself never closes). */
export class Market extends Context.Service<Market, {
  readonly isOpen: Effect.Effect<boolean>
}>()("Market") {}
