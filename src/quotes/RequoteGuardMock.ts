import { Requote } from "@cop-integrations/contracts"
import { Effect, Layer } from "effect"
import { isScenario } from "../base/MockScenario.ts"
import { RequoteGuard } from "./RequoteGuard.ts"

const failUnderRequoteScenario = (error: string) =>
  Effect.flatMap(isScenario("requote"), (requote) => (requote ? Effect.fail(new Requote({ error })) : Effect.void))

/** Mock: `X-Mock-Scenario: requote` forces 409 requote on payout creation and confirm. */
export const RequoteGuardMock = Layer.succeed(
  RequoteGuard,
  RequoteGuard.of({
    beforePricing: failUnderRequoteScenario("the quote is no longer valid (mock scenario): quote again"),
    beforeConfirm: failUnderRequoteScenario("the deposit window has closed (mock scenario): create a new payout")
  })
)
