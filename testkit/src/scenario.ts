import type { Effect } from "effect"
import type { Call } from "./api.ts"
import type { ScenarioFailure } from "./failure.ts"
import type { Exchange, Http } from "./http.ts"
import type { WebhookReceiver } from "./receiver.ts"
import { describeRules, type RuleId } from "./rules.ts"
import type { Mode, Requirements, ScenarioInfo } from "./scenarioInfo.ts"
import type { TypedClient } from "./typedClient.ts"

export type { Mode, Requirements } from "./scenarioInfo.ts"

/** What a scenario gets to work with. */
export interface Kit {
  readonly mode: Mode
  /** Seed of the run's generated inputs. */
  readonly seed: number
  /** `cop_<kind>_pk_` prefix of each key the run was given (never more of a key). */
  readonly keyPrefixes: ReadonlyArray<string>
  /** The last 4 characters of each key of the run, as `GET api-keys` shows them (never more of a key). */
  readonly keyEndings: ReadonlyArray<string>
  /** Generated negative inputs per endpoint. */
  readonly negativeCases: number
  /** Generated sequences SEQ-001 tries. */
  readonly sequences: number
  /** A contract endpoint, answer checked against the contract. */
  readonly call: Call
  /** Any request (unknown routes, raw bodies); the scenario checks the answer itself. */
  readonly send: Http["send"]
  /** The contract's typed client (HttpApiClient.make), authenticated with the run's key. */
  readonly typedClient: Effect.Effect<TypedClient>
  /** Epoch ms by which the scenario must be done. */
  readonly deadline: number
  /** The run's webhook receiver, when the deployment can reach one (see Requirements.receiver). */
  readonly receiver: WebhookReceiver | undefined
  /** Adds a detail to the scenario's result (generated checks, observed statuses, ...). */
  readonly note: (key: string, value: unknown) => void
  /** --strict: a resource field the contract does not know fails the scenario instead of being a warning. */
  readonly strict: boolean
  /** Records a compatible deviation (a field the contract does not know) on the scenario's result. */
  readonly warn: (message: string, exchange?: Exchange) => void
}

/** A scenario as listed (its `rule`: the rules as reports show them, see describeRules), with its rules and run. */
export interface Scenario extends ScenarioInfo {
  /** The rules it checks (testkit/src/rules.ts, listed in testkit/RULES.md). */
  readonly rules: ReadonlyArray<RuleId>
  readonly run: (kit: Kit) => Effect.Effect<void, ScenarioFailure>
}

export interface ScenarioDefinition {
  readonly id: string
  readonly title: string
  /** At least one rule, by id: a typo is a type error. */
  readonly rules: readonly [RuleId, ...Array<RuleId>]
  readonly tags: ReadonlyArray<string>
  readonly requires?: Requirements
  readonly runFirst?: boolean
  readonly run: (kit: Kit) => Effect.Effect<void, ScenarioFailure>
}

/** Requirements also show as tags, so `--grep money-moving` or `--grep cross-tenant` select by them. */
export const scenario = (definition: ScenarioDefinition): Scenario => {
  const requires = definition.requires ?? {}
  const tags = new Set(definition.tags)
  if (requires.mock === true) tags.add("mock-only")
  if (requires.moneyMoving === true) tags.add("money-moving")
  if (requires.secondKey === true) tags.add("cross-tenant")
  if (requires.receiver === true) tags.add("webhook-receiver")
  return {
    ...definition,
    rule: describeRules(definition.rules),
    requires,
    tags: [...tags],
    runFirst: definition.runFirst ?? false
  }
}
