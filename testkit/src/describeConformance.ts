/**
 * The kit inside an integrator's vitest suite: one test per scenario (loaded by ./vitest.ts once the Node version is
 * known to be supported).
 *
 *   import { describeConformance } from "@cop-integrations/testkit/vitest"
 *   describeConformance({ baseUrl: process.env.SANDBOX_URL!, apiKey: process.env.SANDBOX_KEY! })
 *
 * The whole run happens once in `beforeAll` (scenarios run a few at a time, as with the CLI); each test
 * then reports its scenario: passed, failed with the full failure (expected, actual, curl), or skipped
 * with the reason it did not run.
 */
import { beforeAll, describe, it } from "vitest"
import { describeFailure } from "./report/text.ts"
import type { ConformanceReport } from "./report/types.ts"
import { type ConformanceOptions, runConformance, selectScenarios } from "./runner.ts"

export interface SuiteOptions {
  /** The describe block's name. */
  readonly name?: string
  /**
   * Scenario filter; it wins over the options' own `grep`. Needed when the options are a function: the tests are
   * declared before it runs, so a `grep` it returns is not used.
   */
  readonly grep?: ReadonlyArray<string>
  /** Time limit of the whole run (the beforeAll hook). Default 10 minutes. */
  readonly runTimeoutMs?: number
  /** Receives the whole report once the run is over (to write it out, or assert on the claim). */
  readonly onReport?: (report: ConformanceReport) => void | Promise<void>
}

export class ConformanceFailure extends Error {
  override readonly name = "ConformanceFailure"
}

/** Options, or a function giving them (e.g. to start a server first). */
export type OptionsOrThunk<O> = O | (() => O | Promise<O>)

type Options = OptionsOrThunk<ConformanceOptions>

/** The scenario filter of a suite: its own `grep`, else that of options given as an object. */
export const suiteGrep = <O extends { readonly grep?: ReadonlyArray<string> | undefined }>(
  options: OptionsOrThunk<O>,
  suite: { readonly grep?: ReadonlyArray<string> | undefined }
): ReadonlyArray<string> => suite.grep ?? (typeof options === "function" ? [] : options.grep ?? [])

/**
 * One run, in `beforeAll`, then one test per scenario reporting its outcome: passed, failed with the full failure, or
 * skipped with the reason it did not run. `run` gets the options resolved; `what` names the run when it did not
 * complete.
 */
export const describeRun = <O>(
  options: OptionsOrThunk<O>,
  run: (options: O) => Promise<ConformanceReport>,
  scenarios: ReadonlyArray<{ readonly id: string; readonly title: string }>,
  suite: {
    readonly name: string
    readonly what: string
    readonly runTimeoutMs: number
    readonly onReport?: ((report: ConformanceReport) => void | Promise<void>) | undefined
  }
): void => {
  describe(suite.name, () => {
    let report: ConformanceReport | undefined
    beforeAll(async () => {
      report = await run(typeof options === "function" ? await (options as () => O | Promise<O>)() : options)
      await suite.onReport?.(report)
    }, suite.runTimeoutMs)

    for (const scenario of scenarios) {
      it(`${scenario.id} ${scenario.title}`, (context) => {
        const result = report?.scenarios.find((candidate) => candidate.id === scenario.id)
        if (result === undefined) {
          throw new ConformanceFailure(`the ${suite.what} run did not complete (see the beforeAll error)`)
        }
        if (result.status === "not_run") context.skip(`not run: ${result.reason ?? ""}`)
        if (result.status !== "passed") throw new ConformanceFailure(describeFailure(result))
      })
    }
  })
}

/** Declares one vitest test per selected scenario. `options` may be a function, e.g. to start a server first. */
export const describeConformance = (options: Options, suite: SuiteOptions = {}): void => {
  const grep = suiteGrep(options, suite)
  describeRun(options, (resolved) => runConformance({ ...resolved, grep }), selectScenarios(grep), {
    name: suite.name ?? "Integrations API conformance",
    what: "conformance",
    runTimeoutMs: suite.runTimeoutMs ?? 600_000,
    onReport: suite.onReport
  })
}
