import type { Exchange } from "../http.ts"
import type { Mode } from "../scenario.ts"

export type ScenarioStatus = "passed" | "failed" | "error" | "not_run"

export interface FailureReport {
  readonly message: string
  readonly expected: string
  readonly actual: string
  /** Reproduces the request that shows the failure (keys as $CONFORMANCE_API_KEY / $CONFORMANCE_SECOND_API_KEY). */
  readonly curl: string | undefined
  readonly details: Readonly<Record<string, unknown>> | undefined
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
  /** For a failure: the recorded exchanges in full (the last ones, and the one the failure points at). */
  readonly evidence: ReadonlyArray<Exchange>
}

export interface RequestSummary {
  readonly method: string
  readonly url: string
  readonly status: number | undefined
  readonly durationMs: number
}

export interface ConformanceReport {
  readonly kit: { readonly name: string; readonly version: string }
  readonly target: {
    readonly baseUrl: string
    readonly mode: Mode
    /** Where the mode came from: the --mode option, GET /healthz, or the default (mock). */
    readonly modeSource: "option" | "healthz" | "default"
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
  }
  readonly summary: {
    readonly scenarios: number
    readonly selected: number
    readonly passed: number
    readonly failed: number
    readonly errors: number
    readonly notRun: number
    readonly generatedChecks: number
  }
  /** True only when every scenario of the kit ran, unfiltered, and passed. */
  readonly fullConformanceClaim: boolean
  /** One line saying what this run proves. */
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
