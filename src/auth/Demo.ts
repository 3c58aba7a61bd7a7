import type { IntegrationId, KeyId } from "@cop-integrations/contracts"
import { Context, Effect, Layer, Option } from "effect"

/** The integration a fresh deployment hands its operator at start-up, through one of its active keys. */
export interface DemoAccess {
  readonly integrationId: IntegrationId
  readonly name: string
  /** An active key of it (its newest): what a dashboard sign-in link printed at start-up is made with. */
  readonly keyId: KeyId
  /** The key itself, only when it was made by this start (shown once, in the start-up banner). */
  readonly key: Option.Option<string>
}

/** What a deployment hands its operator at start-up: the demo integration and, on a fresh one, its first key. */
export class DemoBootstrap extends Context.Service<DemoBootstrap, {
  readonly run: Effect.Effect<Option.Option<DemoAccess>>
}>()("DemoBootstrap") {}

/** Live: keys are issued only on purpose (`npm run -s keys -- issue <name> --create`). */
export const DemoBootstrapNone = Layer.succeed(DemoBootstrap, DemoBootstrap.of({ run: Effect.succeed(Option.none()) }))
