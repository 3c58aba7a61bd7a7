/**
 * Runs the scenarios against one deployment: finds out its mode, selects and filters the scenarios,
 * runs them (the `runFirst` ones alone first, the rest a few at a time, each within its time limit) and
 * assembles the report.
 */
import { type Coverage, makeCoverage } from "./coverage.ts"
import { Cause, Duration, Effect, Exit, Option } from "effect"
import { makeCall } from "./api.ts"
import { boundedFetch } from "./boundedFetch.ts"
import { ConfigurationError } from "./configurationError.ts"
import { failure, rootCauseOf, type ScenarioFailure } from "./failure.ts"
import { apiAnswerBounds, type Exchange, makeHttp } from "./http.ts"
import { newSeed } from "./generate/random.ts"
import { refusalOfNode } from "./nodeVersion.ts"
import { preflight } from "./preflight.ts"
import { exchangeDigest } from "./report/signed.ts"
import { startWebhookReceiver, type WebhookReceiver } from "./receiver.ts"
import { reproduction } from "./reproduce.ts"
import type {
  ConformanceReport,
  RequestSummary,
  RunEvent,
  ScenarioResult,
  Verdict,
  WarningReport
} from "./report/types.ts"
import type { Kit, Scenario } from "./scenario.ts"
import type { Mode, ScenarioInfo } from "./scenarioInfo.ts"
import { allScenarios } from "./scenarios/index.ts"
import { makeTypedClient } from "./typedClient.ts"
import { KIT_NAME, KIT_VERSION } from "./version.ts"

export interface ConformanceOptions {
  readonly baseUrl: string
  readonly apiKey: string
  /** A key of a second integration, for the cross-tenant scenarios (not run without it). */
  readonly secondApiKey?: string | undefined
  /** Default: the mode GET /healthz reports (the preflight refuses a target that does not report one). */
  readonly mode?: Mode | undefined
  /** Scenario ids, id prefixes (PAYOUT-CONFIRM) or tags; any match selects. Empty: all. */
  readonly grep?: ReadonlyArray<string> | undefined
  /** Lets money-moving scenarios run against a live deployment. */
  readonly allowLive?: boolean | undefined
  /** Time limit of one scenario, polling included. Default 30 s. */
  readonly timeoutMs?: number | undefined
  /** Seed of the generated inputs. Default: a random one (reported). */
  readonly seed?: number | undefined
  /** Scenarios running at once. Default 4. */
  readonly concurrency?: number | undefined
  /** Generated negative inputs per endpoint. Default 30. */
  readonly negativeCases?: number | undefined
  /** Generated sequences of payout operations SEQ-001 tries (fewer when its time runs out). Default 20. */
  readonly sequences?: number | undefined
  /**
   * Where the kit's webhook receiver listens (`host:port`). Without it, a mock deployment on a loopback address gets
   * a receiver on 127.0.0.1 and any free port; otherwise the scenarios that need one are not run.
   */
  readonly webhookReceiver?: string | undefined
  /** The URL the deployment reaches the receiver at, when not `http://host:port` (a tunnel, a public name). */
  readonly webhookReceiverUrl?: string | undefined
  /**
   * A resource field the contract does not know fails the scenario. Default false: an added field is a compatible
   * change (DESIGN §4), reported as a warning. ErrorBody is exact either way.
   */
  readonly strict?: boolean | undefined
  readonly fetch?: typeof globalThis.fetch | undefined
  /** Progress: called when the run starts and as each scenario finishes. */
  readonly onEvent?: ((event: RunEvent) => void) | undefined
}

export { ConfigurationError } from "./configurationError.ts"

const DEFAULTS = { timeoutMs: 30_000, concurrency: 4, negativeCases: 30, sequences: 20 } as const
const EVIDENCE_LIMIT = 12
const REQUEST_LIMIT = 100
/** Answered exchanges kept for reproductions (the setup a failing request depends on). */
const HISTORY_LIMIT = 300

const normalise = (term: string) => term.trim().toLowerCase()

export const matchesGrep = (scenario: ScenarioInfo, grep: ReadonlyArray<string>): boolean =>
  grep.length === 0 ||
  grep.map(normalise).some((term) => {
    const id = scenario.id.toLowerCase()
    return id === term || id.startsWith(`${term}-`) || scenario.tags.includes(term)
  })

const selectRunnable = (grep: ReadonlyArray<string>): ReadonlyArray<Scenario> => {
  const selected = allScenarios.filter((scenario) => matchesGrep(scenario, grep))
  if (selected.length === 0) throw new ConfigurationError(`no scenario matches --grep ${grep.join(", ")}`)
  return selected
}

/** Scenarios the grep terms select (all when none); an empty selection is a configuration error. */
export const selectScenarios = (grep: ReadonlyArray<string> = []): ReadonlyArray<ScenarioInfo> => selectRunnable(grep)

/** Why a selected scenario cannot run against this deployment with these options, if it cannot. */
const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]", "::1"])

/** Where to listen for webhooks, or why the run has no receiver. */
const receiverPlan = (mode: Mode, options: ConformanceOptions): { host: string; port: number } | string => {
  if (options.webhookReceiver !== undefined) {
    const match = /^(.*):([0-9]{1,5})$/.exec(options.webhookReceiver)
    if (match === null) {
      throw new ConfigurationError(`--webhook-receiver must be host:port, got ${options.webhookReceiver}`)
    }
    return { host: match[1]!.replace(/^\[|\]$/g, ""), port: Number(match[2]) }
  }
  if (mode === "mock" && LOOPBACK_HOSTS.has(new URL(options.baseUrl).hostname)) return { host: "127.0.0.1", port: 0 }
  return "needs a webhook receiver the deployment can reach: give --webhook-receiver host:port (and --webhook-receiver-url when it is reached through another URL)"
}

const notRunReason = (
  scenario: Scenario,
  mode: Mode,
  options: ConformanceOptions,
  noReceiver: string | undefined
): string | undefined => {
  if (scenario.requires.mock === true && mode === "live") {
    return "needs a mock deployment (it relies on debugCode, `mismatch` names, X-Mock-Scenario or the mock lifecycle)"
  }
  if (scenario.requires.moneyMoving === true && mode === "live" && options.allowLive !== true) {
    return "money-moving: refused against a live deployment without --allow-live"
  }
  if (scenario.requires.secondKey === true && options.secondApiKey === undefined) {
    return "needs --second-api-key (a key of a second integration) for cross-tenant checks"
  }
  if (scenario.requires.receiver === true && noReceiver !== undefined) return noReceiver
  return undefined
}

const keyPrefix = (key: string) => /^cop_[a-z]+_pk_/.exec(key)?.[0] ?? `${key.slice(0, 4)}…`

const describeDefect = (cause: Cause.Cause<unknown>): string => {
  const defect = Cause.squash(cause)
  return defect instanceof Error ? `${defect.message}\n${defect.stack ?? ""}` : String(defect)
}

interface RunContext {
  readonly options: ConformanceOptions
  readonly coverage: Coverage
  readonly receiver: WebhookReceiver | undefined
  readonly mode: Mode
  readonly seed: number
  readonly timeoutMs: number
  readonly negativeCases: number
  readonly sequences: number
}

/**
 * What one scenario's run records: every request (summarised), the last exchanges in full, the answered ones for
 * reproductions, and its warnings (each message once).
 */
const makeRecorder = () => {
  const requests: Array<RequestSummary> = []
  const exchangeHashes: Array<string> = []
  const evidence: Array<Exchange> = []
  const history: Array<{ readonly exchange: Exchange; readonly seq: number }> = []
  const sequence = new Map<Exchange, number>()
  const warnings = new Map<string, WarningReport>()
  const details: Record<string, unknown> = {}
  const record = (exchange: Exchange) => {
    const { method, url } = exchange.request
    if (requests.length < REQUEST_LIMIT) {
      requests.push({ method, url, status: exchange.response?.status, durationMs: exchange.durationMs })
    }
    exchangeHashes.push(exchangeDigest(exchange))
    evidence.push(exchange)
    if (evidence.length > EVIDENCE_LIMIT) evidence.shift()
    const seq = sequence.size
    sequence.set(exchange, seq)
    const status = exchange.response?.status ?? 0
    if (status >= 200 && status < 300) {
      history.push({ exchange, seq })
      if (history.length > HISTORY_LIMIT) history.shift()
    }
  }
  const warn = (message: string, exchange?: Exchange) => {
    if (!warnings.has(message)) warnings.set(message, { message, curl: exchange?.curl })
  }
  /** The failing request with the setup it depends on (see reproduce.ts). */
  const reproduce = (exchange: Exchange): string | undefined =>
    reproduction(exchange, sequence.get(exchange) ?? Number.MAX_SAFE_INTEGER, history)
  return { requests, exchangeHashes, evidence, details, record, warn, warnings, reproduce }
}

type Recorder = ReturnType<typeof makeRecorder>

const makeKit = (context: RunContext, recorder: Recorder, startedAt: number): Kit => {
  const { options } = context
  const fetchFn = options.fetch ?? globalThis.fetch
  const http = makeHttp({
    baseUrl: options.baseUrl,
    apiKey: options.apiKey,
    secondApiKey: options.secondApiKey,
    fetch: fetchFn,
    requestTimeoutMs: context.timeoutMs,
    deadline: startedAt + context.timeoutMs
  }, recorder.record)
  const strict = options.strict === true
  return {
    mode: context.mode,
    seed: context.seed,
    negativeCases: context.negativeCases,
    sequences: context.sequences,
    keyPrefixes: [options.apiKey, ...(options.secondApiKey === undefined ? [] : [options.secondApiKey])].map(keyPrefix),
    keyEndings: [options.apiKey, ...(options.secondApiKey === undefined ? [] : [options.secondApiKey])].map((key) =>
      key.slice(-4)
    ),
    call: makeCall(http, { strict, warn: recorder.warn, observe: context.coverage.observe }),
    send: http.send,
    typedClient: makeTypedClient({
      baseUrl: options.baseUrl,
      apiKey: options.apiKey,
      fetch: boundedFetch(fetchFn, apiAnswerBounds(context.timeoutMs))
    }),
    deadline: startedAt + context.timeoutMs,
    receiver: context.receiver,
    note: (key, value) => {
      recorder.details[key] = value
    },
    strict,
    warn: recorder.warn
  }
}

const timedOut = (timeoutMs: number, last: Exchange | undefined): ScenarioFailure =>
  failure(`the scenario did not finish within ${timeoutMs} ms (--timeout)`, {
    expected: `every step within ${timeoutMs} ms`,
    actual: `still running; last request: ${
      last === undefined ? "none" : `${last.request.method} ${last.request.url}`
    }`,
    exchange: last
  })

/** The result of a finished run: passed, failed (the deployment broke a rule) or error (the kit broke). */
const resultOf = (
  scenario: Scenario,
  exit: Exit.Exit<void, ScenarioFailure>,
  recorder: Recorder,
  durationMs: number
): ScenarioResult => {
  const { details, evidence, exchangeHashes, requests } = recorder
  const warnings = [...recorder.warnings.values()]
  const base = {
    id: scenario.id,
    title: scenario.title,
    rule: scenario.rule,
    tags: scenario.tags,
    durationMs,
    reason: undefined,
    details,
    requests,
    exchangeHashes,
    warnings
  }
  if (Exit.isSuccess(exit)) return { ...base, status: "passed", failure: undefined, evidence: [] }
  const failed = Cause.findErrorOption(exit.cause)
  if (Option.isNone(failed)) {
    const defect = describeDefect(exit.cause)
    const message = `the kit itself failed: ${defect.split("\n")[0]}`
    const last = evidence.at(-1)
    const failure = {
      message,
      expected: "the scenario to run",
      actual: defect,
      curl: last?.curl,
      reproduce: last === undefined ? undefined : recorder.reproduce(last),
      rootCause: message,
      details: undefined
    }
    return { ...base, status: "error", failure, evidence }
  }
  const { actual, details: failureDetails, exchange, expected, message } = failed.value
  const shown = exchange === undefined || evidence.includes(exchange) ? evidence : [...evidence, exchange]
  const target = exchange ?? evidence.at(-1)
  const failure = {
    message,
    expected,
    actual,
    curl: target?.curl,
    reproduce: target === undefined ? undefined : recorder.reproduce(target),
    rootCause: rootCauseOf(failed.value),
    details: failureDetails
  }
  return { ...base, status: "failed", failure, evidence: shown }
}

const runScenario = (scenario: Scenario, context: RunContext): Effect.Effect<ScenarioResult> =>
  Effect.gen(function*() {
    const recorder = makeRecorder()
    const startedAt = Date.now()
    const exit = yield* Effect.exit(
      scenario.run(makeKit(context, recorder, startedAt)).pipe(
        Effect.timeoutOrElse({
          duration: Duration.millis(context.timeoutMs),
          orElse: () => Effect.fail(timedOut(context.timeoutMs, recorder.evidence.at(-1)))
        })
      )
    )
    return resultOf(scenario, exit, recorder, Date.now() - startedAt)
  })

const notRun = (scenario: Scenario, reason: string): ScenarioResult => ({
  id: scenario.id,
  title: scenario.title,
  rule: scenario.rule,
  tags: scenario.tags,
  status: "not_run",
  durationMs: 0,
  reason,
  failure: undefined,
  details: {},
  requests: [],
  exchangeHashes: [],
  evidence: [],
  warnings: []
})

const generatedChecksOf = (result: ScenarioResult): number => {
  const checks = result.details["generatedChecks"]
  return typeof checks === "number" ? checks : 0
}

/** Distinct root causes of the failed and errored results. */
export const rootCausesOf = (results: ReadonlyArray<ScenarioResult>): ReadonlyArray<string> => [
  ...new Set(results.flatMap((result) => (result.failure === undefined ? [] : [result.failure.rootCause])))
]

/**
 * The verdict and the line that says it, from one place so that they cannot disagree (and the exit code follows the
 * verdict: see exitCodeOf).
 */
const claimOf = (results: ReadonlyArray<ScenarioResult>, filtered: boolean): { verdict: Verdict; text: string } => {
  const count = (status: ScenarioResult["status"]) => results.filter((result) => result.status === status).length
  const [passed, failed, errors, skipped] = [count("passed"), count("failed"), count("error"), count("not_run")]
  if (failed + errors > 0) {
    const causes = rootCausesOf(results).length
    return {
      verdict: "not_conformant",
      text: `NOT CONFORMANT: ${failed} scenario(s) failed${errors > 0 ? `, ${errors} could not run (kit error)` : ""}${
        failed + errors > 1 ? `, from ${causes} distinct cause(s)` : ""
      }`
    }
  }
  if (passed === 0) {
    const reasons = [...new Set(results.map((result) => result.reason ?? ""))].filter((reason) => reason !== "")
    return {
      verdict: "nothing_ran",
      text: `NOTHING RAN: none of the ${results.length} selected scenario(s) could run here, so nothing was tested (${
        reasons.slice(0, 3).join("; ")
      }${reasons.length > 3 ? "; ..." : ""})`
    }
  }
  const gaps = [
    ...(filtered ? ["the run was filtered with --grep"] : []),
    ...(skipped > 0 ? [`${skipped} scenario(s) were not run`] : [])
  ]
  return gaps.length === 0
    ? { verdict: "conformant", text: "CONFORMANT: every scenario of the kit ran and passed" }
    : { verdict: "partial", text: `PASSED, PARTIAL RUN: not a full conformance claim (${gaps.join("; ")})` }
}

/**
 * Runs the kit against `options.baseUrl`. Rejects with a ConfigurationError when the run cannot start: an unsupported
 * Node, options that select nothing, or a target the preflight refuses (./preflight.ts).
 */
export const runConformance = async (options: ConformanceOptions): Promise<ConformanceReport> => {
  const tooOld = refusalOfNode(process.versions.node)
  if (tooOld !== undefined) throw new ConfigurationError(tooOld)
  const startedAt = new Date()
  const grep = options.grep ?? []
  const selected = selectRunnable(grep)
  const { mode, modeSource, version } = await preflight(options)
  const plan = receiverPlan(mode, options)
  const noReceiver = typeof plan === "string" ? plan : undefined
  const needsReceiver = selected.some((scenario) =>
    scenario.requires.receiver === true && notRunReason(scenario, mode, options, noReceiver) === undefined
  )
  const receiver = needsReceiver && typeof plan !== "string"
    ? await startWebhookReceiver({ ...plan, publicUrl: options.webhookReceiverUrl }).catch((error: unknown) => {
      throw new ConfigurationError(
        `cannot start the webhook receiver on ${plan.host}:${plan.port}: ${
          error instanceof Error ? error.message : String(error)
        }`
      )
    })
    : undefined
  const context: RunContext = {
    options,
    coverage: makeCoverage(),
    receiver,
    mode,
    seed: options.seed ?? newSeed(),
    timeoutMs: options.timeoutMs ?? DEFAULTS.timeoutMs,
    negativeCases: options.negativeCases ?? DEFAULTS.negativeCases,
    sequences: options.sequences ?? DEFAULTS.sequences
  }
  const concurrency = options.concurrency ?? DEFAULTS.concurrency
  const target = { baseUrl: options.baseUrl, mode, modeSource, version }
  options.onEvent?.({
    _tag: "RunStarted",
    target,
    seed: context.seed,
    selected: selected.length,
    total: allScenarios.length
  })

  const results = new Map<string, ScenarioResult>()
  const finish = (result: ScenarioResult) => {
    results.set(result.id, result)
    options.onEvent?.({ _tag: "ScenarioFinished", result, done: results.size, of: selected.length })
  }
  const runnable: Array<Scenario> = []
  for (const scenario of selected) {
    const reason = notRunReason(scenario, mode, options, noReceiver)
    if (reason === undefined) runnable.push(scenario)
    else finish(notRun(scenario, reason))
  }
  const run = (scenario: Scenario) => Effect.map(runScenario(scenario, context), finish)
  try {
    await Effect.runPromise(Effect.gen(function*() {
      yield* Effect.forEach(runnable.filter((scenario) => scenario.runFirst), run, { discard: true })
      yield* Effect.forEach(runnable.filter((scenario) => !scenario.runFirst), run, { concurrency, discard: true })
    }))
  } finally {
    await receiver?.close()
  }

  const ordered = selected.map((scenario) => results.get(scenario.id)!)
  const claim = claimOf(ordered, selected.length < allScenarios.length)
  const count = (status: ScenarioResult["status"]) => ordered.filter((result) => result.status === status).length
  return {
    kit: { name: KIT_NAME, version: KIT_VERSION },
    target,
    seed: context.seed,
    startedAt: startedAt.toISOString(),
    durationMs: Date.now() - startedAt.getTime(),
    options: {
      grep,
      allowLive: options.allowLive === true,
      secondKey: options.secondApiKey !== undefined,
      timeoutMs: context.timeoutMs,
      concurrency,
      negativeCases: context.negativeCases,
      strict: options.strict === true
    },
    summary: {
      scenarios: allScenarios.length,
      selected: selected.length,
      passed: count("passed"),
      failed: count("failed"),
      errors: count("error"),
      notRun: count("not_run"),
      generatedChecks: ordered.reduce((sum, result) => sum + generatedChecksOf(result), 0),
      warnings: new Set(ordered.flatMap((result) => result.warnings.map((warning) => warning.message))).size,
      rootCauses: rootCausesOf(ordered).length
    },
    coverage: context.coverage.index(),
    fullConformanceClaim: claim.verdict === "conformant",
    verdict: claim.verdict,
    claim: claim.text,
    scenarios: ordered
  }
}
