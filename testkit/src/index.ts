import type { ScenarioInfo } from "./scenarioInfo.ts"
import { allScenarios as scenarios } from "./scenarios/index.ts"

export { exitCodeOf } from "./commandLine.ts"
export { consoleProgress, consoleSummary } from "./report/console.ts"
export { toJson } from "./report/json.ts"
export { toJUnit } from "./report/junit.ts"
export {
  exchangeDigest,
  newSigningKey,
  type ReportSignature,
  SIGNED_REPORT_FORMAT,
  type SignedReport,
  signingKeyProblem,
  signReport,
  type Verification,
  verifySignedReport
} from "./report/signed.ts"
export { describeFailure, describeFailureGroup, groupByRootCause } from "./report/text.ts"
export type {
  ConformanceReport,
  FailureReport,
  RunEvent,
  ScenarioResult,
  ScenarioStatus,
  Verdict,
  WarningReport
} from "./report/types.ts"
export {
  ConfigurationError,
  type ConformanceOptions,
  matchesGrep,
  rootCausesOf,
  runConformance,
  selectScenarios
} from "./runner.ts"
export {
  type PayoutState,
  RECEIVER_SCENARIOS,
  type ReceiverOptions,
  ReceiverUnreachable,
  runReceiverConformance,
  selectReceiverScenarios
} from "./receiverKit.ts"
export { describeRule, type Reference, type Rule, type RuleId, ruleIds, RULES } from "./rules.ts"
export type { Mode, Requirements, ScenarioInfo } from "./scenarioInfo.ts"

/** Every scenario of the kit, as listed (id, title, rule, tags, requirements). */
export const allScenarios: ReadonlyArray<ScenarioInfo> = scenarios
export { KIT_NAME, KIT_VERSION } from "./version.ts"
export { compatibilityLine, type VersionFit, versionFit } from "./versioning.ts"
