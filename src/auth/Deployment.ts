import type { ApiMode } from "@cop-integrations/contracts"
import { Context } from "effect"
import type { KeyKind } from "./ApiKey.ts"

/**
 * What the deployment says about itself: its mode (reported by /healthz, the start-up banner and the request's
 * CurrentIntegration) and the one kind of API key it accepts. Provided by App.ts; nothing branches on the mode.
 */
export class Deployment extends Context.Service<Deployment, {
  readonly mode: ApiMode
  readonly keyKind: KeyKind
}>()("Deployment") {}
