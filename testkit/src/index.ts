export { consoleProgress, consoleSummary } from "./report/console.ts"
export { toJson } from "./report/json.ts"
export { toJUnit } from "./report/junit.ts"
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
  exitCodeOf,
  matchesGrep,
  rootCausesOf,
  runConformance,
  selectScenarios
} from "./runner.ts"
export { describeRule, type Reference, type Rule, type RuleId, ruleIds, RULES } from "./rules.ts"
export type { Mode, Requirements, Scenario } from "./scenario.ts"
export { allScenarios } from "./scenarios/index.ts"
export { KIT_NAME, KIT_VERSION } from "./version.ts"
export { compatibilityLine, type VersionFit, versionFit } from "./versioning.ts"
