/**
 * The receiver kit inside an integrator's vitest suite: one test per receiver scenario (loaded by ./vitest.ts once the
 * Node version is known to be supported).
 *
 *   import { describeReceiverConformance } from "@cop-integrations/testkit/vitest"
 *   describeReceiverConformance({ url: "http://127.0.0.1:3000/hooks", secret: process.env.WEBHOOK_SECRET! })
 *
 * As describeConformance: the whole run happens once in `beforeAll`; each test then reports its scenario.
 */
import { beforeAll, describe, it } from "vitest"
import { ConformanceFailure } from "./describeConformance.ts"
import { type ReceiverOptions, runReceiverConformance, selectReceiverScenarios } from "./receiverKit.ts"
import { describeFailure } from "./report/text.ts"
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

type Options = ReceiverOptions | (() => ReceiverOptions | Promise<ReceiverOptions>)

/** Declares one vitest test per receiver scenario. `options` may be a function, e.g. to start the receiver first. */
export const describeReceiverConformance = (options: Options, suite: ReceiverSuiteOptions = {}): void => {
  const grep = suite.grep ?? (typeof options === "function" ? [] : options.grep ?? [])
  describe(suite.name ?? "webhook receiver conformance", () => {
    let report: ConformanceReport | undefined
    beforeAll(async () => {
      const resolved = typeof options === "function" ? await options() : options
      report = await runReceiverConformance({ ...resolved, grep })
      await suite.onReport?.(report)
    }, suite.runTimeoutMs ?? 120_000)

    for (const scenario of selectReceiverScenarios(grep)) {
      it(`${scenario.id} ${scenario.title}`, () => {
        const result = report?.scenarios.find((candidate) => candidate.id === scenario.id)
        if (result === undefined) {
          throw new ConformanceFailure("the receiver run did not complete (see the beforeAll error)")
        }
        if (result.status !== "passed") throw new ConformanceFailure(describeFailure(result))
      })
    }
  })
}
