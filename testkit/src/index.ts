export { consoleProgress, consoleSummary } from "./report/console.ts"
export { toJson } from "./report/json.ts"
export { toJUnit } from "./report/junit.ts"
export { describeFailure } from "./report/text.ts"
export type { ConformanceReport, FailureReport, RunEvent, ScenarioResult, ScenarioStatus } from "./report/types.ts"
export {
  ConfigurationError,
  type ConformanceOptions,
  exitCodeOf,
  matchesGrep,
  runConformance,
  selectScenarios
} from "./runner.ts"
export type { Mode, Requirements, Scenario } from "./scenario.ts"
export { allScenarios } from "./scenarios/index.ts"
export { KIT_NAME, KIT_VERSION } from "./version.ts"
