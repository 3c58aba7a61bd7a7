import { Context, Effect, Layer, Option } from "effect"

/** What a fresh deployment hands its operator at start-up: the first API key, when it made one. */
export class DemoBootstrap extends Context.Service<DemoBootstrap, {
  /** The key (shown once, in the start-up banner), or none. */
  readonly run: Effect.Effect<Option.Option<string>>
}>()("DemoBootstrap") {}

/** Live: keys are issued only on purpose (`npm run -s keys -- issue <name> --create`). */
export const DemoBootstrapNone = Layer.succeed(DemoBootstrap, DemoBootstrap.of({ run: Effect.succeed(Option.none()) }))
