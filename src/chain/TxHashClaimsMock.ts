import { Requote } from "@cop-integrations/contracts"
import { Effect, Layer } from "effect"
import { isScenario } from "../base/MockScenario.ts"
import { TxHashClaims } from "./TxHashClaims.ts"

const windowClosed = new Requote({ error: "the deposit window has closed (mock scenario): create a new payout" })

/**
 * Mock mode's claims: under `X-Mock-Scenario: requote` a confirm's claim is refused, the deposit window closed
 * (409 requote, payouts and swaps alike), before any hash is claimed. A confirm claims once the resource's own checks
 * passed and before the hash's: a replay still replays, and the scenario answers before a hash another confirm holds.
 */
export const TxHashClaimsMock = Layer.effect(
  TxHashClaims,
  Effect.map(TxHashClaims, (claims) =>
    TxHashClaims.of({
      ...claims,
      claim: (kind, resourceId, hash) =>
        Effect.flatMap(isScenario("requote"), (late) =>
          late ? Effect.fail(windowClosed) : claims.claim(kind, resourceId, hash))
    }))
).pipe(Layer.provide(TxHashClaims.Default))
