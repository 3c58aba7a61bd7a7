import type { Exchange } from "../exchange.ts"
import type { Mode } from "../scenarioInfo.ts"

export type ScenarioStatus = "passed" | "failed" | "error" | "not_run"

export type Verdict = "conformant" | "partial" | "not_conformant" | "nothing_ran"

export interface FailureReport {
  readonly message: string
  readonly expected: string
  readonly actual: string
  /** Reproduces the request that shows the failure (keys as $CONFORMANCE_API_KEY / $CONFORMANCE_SECOND_API_KEY). */
  readonly curl: string | undefined
  /**
   * The same request preceded by the setup requests it depends on (the KYC OTP send and verify of its user, the
   * payout or swap it names, ...), as a bash script that carries the ids from one answer to the next. Undefined
   * when the request depends on none (then `curl` alone reproduces it).
   */
  readonly reproduce: string | undefined
  /**
   * What broke, without what varies from one scenario to the next (ids, amounts): failures with the same root cause
   * are one broken rule, shown once with every scenario it broke.
   */
  readonly rootCause: string
  readonly details: Readonly<Record<string, unknown>> | undefined
}

/**
 * Something a deployment may do without breaking the contract, reported so that it is seen: a resource with a field
 * the contract does not know (an added field is a compatible change, DESIGN §4; --strict makes it a failure).
 */
export interface WarningReport {
  readonly message: string
  /** The request whose answer showed it. */
  readonly curl: string | undefined
}

export interface ScenarioResult {
  readonly id: string
  readonly title: string
  readonly rule: string
  readonly tags: ReadonlyArray<string>
  /** `error`: the kit itself broke (a bug to report against the kit, not the deployment). */
  readonly status: ScenarioStatus
  readonly durationMs: number
  /** Why a scenario did not run. */
  readonly reason: string | undefined
  readonly failure: FailureReport | undefined
  /** What the scenario noted: generated check counts, observed statuses, ... */
  readonly details: Readonly<Record<string, unknown>>
  /** Every request the scenario made (the first 100): method, URL, status, time. */
  readonly requests: ReadonlyArray<RequestSummary>
  /** The SHA-256 of every exchange the scenario made, in order (./signed.ts, exchangeDigest). */
  readonly exchangeHashes: ReadonlyArray<string>
  /** For a failure: the recorded exchanges in full (the last ones, and the one the failure points at). */
  readonly evidence: ReadonlyArray<Exchange>
  /** Compatible deviations the scenario saw (each message once). */
  readonly warnings: ReadonlyArray<WarningReport>
}

export interface RequestSummary {
  readonly method: string
  readonly url: string
  readonly status: number | undefined
  readonly durationMs: number
}

/** How much of the contract a run exercised: counts out of what it declares, and what was left out. */
export interface CoverageIndex {
  readonly operations: { readonly exercised: number; readonly declared: number }
  /** Operation × declared status (success and each error status). */
  readonly statuses: { readonly exercised: number; readonly declared: number }
  readonly errorCodes: { readonly exercised: number; readonly declared: number }
  readonly missed: {
    /** `GET /api/integrations/events` */
    readonly operations: ReadonlyArray<string>
    /** `GET /api/integrations/events 400` */
    readonly statuses: ReadonlyArray<string>
    readonly errorCodes: ReadonlyArray<string>
  }
}

export interface ConformanceReport {
  readonly kit: { readonly name: string; readonly version: string }
  readonly target: {
    readonly baseUrl: string
    readonly mode: Mode
    /** Where the mode came from: the --mode option, GET /healthz, or the default (mock). */
    readonly modeSource: "option" | "healthz" | "default"
    /** The API version GET /healthz reported. */
    readonly version?: string
  }
  readonly seed: number
  readonly startedAt: string
  readonly durationMs: number
  readonly options: {
    readonly grep: ReadonlyArray<string>
    readonly allowLive: boolean
    readonly secondKey: boolean
    readonly timeoutMs: number
    readonly concurrency: number
    readonly negativeCases: number
    /** Fields the contract does not know fail the run (otherwise they are warnings). */
    readonly strict: boolean
  }
  readonly summary: {
    readonly scenarios: number
    readonly selected: number
    readonly passed: number
    readonly failed: number
    readonly errors: number
    readonly notRun: number
    readonly generatedChecks: number
    /** Distinct warnings (the same message from several scenarios counts once). */
    readonly warnings: number
    /** Distinct root causes of the failed and errored scenarios. */
    readonly rootCauses: number
  }
  /** What the run exercised of the contract (a run of the conformance kit; the receiver kit's has none). */
  readonly coverage?: CoverageIndex
  /** True only when every scenario of the kit ran, unfiltered, and passed. */
  readonly fullConformanceClaim: boolean
  /**
   * What the run proves, and the exit code that goes with it: `conformant` (every scenario of the kit ran and passed)
   * and `partial` (every one that ran passed, some did not run or the run was filtered) exit 0, `not_conformant` (a
   * scenario failed, or the kit broke) exits 1, `nothing_ran` (no selected scenario could run here) exits 2.
   */
  readonly verdict: Verdict
  /** One line saying what this run proves; it starts with the verdict (CONFORMANT, PASSED, NOT CONFORMANT, NOTHING RAN). */
  readonly claim: string
  readonly scenarios: ReadonlyArray<ScenarioResult>
}

export type RunEvent =
  | {
    readonly _tag: "RunStarted"
    readonly target: ConformanceReport["target"]
    readonly seed: number
    readonly selected: number
    readonly total: number
  }
  | { readonly _tag: "ScenarioFinished"; readonly result: ScenarioResult; readonly done: number; readonly of: number }
