/**
 * `@cop-integrations/testkit/vitest`: describeConformance and its options (./describeConformance.ts), and
 * describeReceiverConformance, the receiver kit's (./describeReceiverConformance.ts). An unsupported
 * Node is refused here, in one line, before vitest or the kit load: the line goes to stderr as well as into the error,
 * because vitest 5 on Node 20 breaks while reporting errors (`Map.groupBy is not a function`).
 */
import { refusalOfNode } from "./nodeVersion.ts"

const refusal = refusalOfNode(process.versions.node)
if (refusal !== undefined) {
  process.stderr.write(`@cop-integrations/testkit/vitest: ${refusal}\n`)
  throw new Error(refusal)
}

export const { ConformanceFailure, describeConformance, suiteGrep } = await import("./describeConformance.ts")
/** The receiver kit: checks your own webhook receiver (./describeReceiverConformance.ts). */
export const { describeReceiverConformance } = await import("./describeReceiverConformance.ts")
/** The error a failed scenario's test throws (the class above, as a type). */
export type ConformanceFailure = InstanceType<typeof ConformanceFailure>
export type { SuiteOptions } from "./describeConformance.ts"
export type { ReceiverSuiteOptions } from "./describeReceiverConformance.ts"
export type { PayoutState, ReceiverOptions } from "./receiverKit.ts"
