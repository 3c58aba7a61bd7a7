/**
 * What the kit says about its scenarios to the outside (the report, the library's `allScenarios`), without the
 * scenarios' Effect code: the package's public declarations reach only effect-free modules, so an integrator's
 * TypeScript needs no `effect` to check them.
 */

export type Mode = "mock" | "live"

export interface Requirements {
  /** Relies on mock-mode behaviour: `debugCode`, `mismatch` names, `X-Mock-Scenario`, the mock lifecycle. */
  readonly mock?: boolean
  /** Creates or confirms payouts or sends OTPs: refused against a live deployment without --allow-live. */
  readonly moneyMoving?: boolean
  /** Needs a key of a second integration (--second-api-key). */
  readonly secondKey?: boolean
  /** Needs a webhook receiver the deployment can reach (--webhook-receiver, or a loopback mock deployment). */
  readonly receiver?: boolean
}

/** A scenario as listed: everything but its run. */
export interface ScenarioInfo {
  /** Stable id: AREA-NNN. */
  readonly id: string
  readonly title: string
  /** Where the rule is written. */
  readonly rule: string
  readonly tags: ReadonlyArray<string>
  readonly requires: Requirements
  /** Runs alone before every other scenario (it observes the deployment before the run touches it). */
  readonly runFirst: boolean
}
