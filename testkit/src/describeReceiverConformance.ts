/**
 * The receiver kit inside an integrator's vitest suite: one test per receiver scenario (loaded by ./vitest.ts once the
 * Node version is known to be supported).
 *
 *   import { describeReceiverConformance } from "@cop-integrations/testkit/vitest"
 *   describeReceiverConformance({ url: "http://127.0.0.1:3000/hooks", secret: process.env.WEBHOOK_SECRET! })
 *
 * As describeConformance: the whole run happens once in `beforeAll`; each test then reports its scenario.
 */
import { describeRun, type OptionsOrThunk, suiteGrep } from "./describeConformance.ts"
import { type ReceiverOptions, runReceiverConformance, selectReceiverScenarios } from "./receiverKit.ts"
import type { ConformanceReport } from "./report/types.ts"

export interface ReceiverSuiteOptions {
  /** The describe block's name. */
  readonly name?: string
  /** Scenario filter (ids or prefixes); it wins over the options' own `grep`. */
  readonly grep?: ReadonlyArray<string>
  /** Time limit of the whole run (the beforeAll hook). Default 2 minutes. */
  readonly runTimeoutMs?: number
  /** Receives the whole report once the run is over. */
  readonly onReport?: (report: ConformanceReport) => void | Promise<void>
}

/** Declares one vitest test per receiver scenario. `options` may be a function, e.g. to start the receiver first. */
export const describeReceiverConformance = (
  options: OptionsOrThunk<ReceiverOptions>,
  suite: ReceiverSuiteOptions = {}
): void => {
  const grep = suiteGrep(options, suite)
  describeRun(options, (resolved) => runReceiverConformance({ ...resolved, grep }), selectReceiverScenarios(grep), {
    name: suite.name ?? "webhook receiver conformance",
    what: "receiver",
    runTimeoutMs: suite.runTimeoutMs ?? 120_000,
    onReport: suite.onReport
  })
}
