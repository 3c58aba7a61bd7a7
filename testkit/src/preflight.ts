/**
 * Before any scenario: is the target the Integrations API (GET /healthz and GET /openapi.json), in which mode, at a
 * version this kit speaks, and does each key authenticate? Each refusal is one line (a ConfigurationError) saying
 * what was found, so a wrong --base-url or a mistyped key costs one line instead of a hundred failed scenarios.
 */
import { Health, INTERFACE_VERSION } from "@cop-integrations/contracts"
import { Schema } from "effect"
import { AnswerTooLarge, fetchBounded, MAX_API_ANSWER_BYTES } from "./boundedFetch.ts"
import { ConfigurationError } from "./configurationError.ts"
import { endpoint, pathOf } from "./contract.ts"
import { KEY_VARIABLES } from "./curl.ts"
import { describeError } from "./exchange.ts"
import type { Mode } from "./scenarioInfo.ts"
import { plainHttpProblem } from "./urlOptions.ts"
import { POLICY, versionFit } from "./versioning.ts"

export interface PreflightOptions {
  readonly baseUrl: string
  readonly apiKey: string
  readonly secondApiKey?: string | undefined
  readonly mode?: Mode | undefined
  readonly fetch?: typeof globalThis.fetch | undefined
}

export interface Target {
  readonly mode: Mode
  readonly modeSource: "option" | "healthz"
  /** The API version GET /healthz reports. */
  readonly version: string
}

/** The contract's OpenAPI title (contracts/src/Api.ts). */
const API_TITLE = "Integrations API"
const PROBE_TIMEOUT_MS = 10_000
const SHOWN_BODY = 80

interface Answer {
  readonly status: number
  readonly contentType: string
  readonly body: string
}

const trimmed = (baseUrl: string) => baseUrl.replace(/\/+$/, "")

/** A refusal is one line, whatever an error's message holds (OpenSSL's end with a line break). */
const oneLine = (text: string) => text.replace(/\s*\n\s*/g, " ").trim()

const get = async (options: PreflightOptions, path: string, headers: Record<string, string> = {}): Promise<Answer> => {
  const url = `${trimmed(options.baseUrl)}${path}`
  try {
    const answer = await fetchBounded(options.fetch ?? globalThis.fetch, url, { headers, redirect: "manual" }, {
      timeoutMs: PROBE_TIMEOUT_MS,
      maxBytes: MAX_API_ANSWER_BYTES,
      what: "an API answer",
      advice: "is --base-url an Integrations API deployment?"
    })
    const contentType = (answer.headers.get("content-type") ?? "no content type").split(";")[0]!.trim()
    return { status: answer.status, contentType, body: new TextDecoder().decode(answer.body) }
  } catch (error) {
    if (error instanceof AnswerTooLarge) throw new ConfigurationError(error.message)
    throw new ConfigurationError(
      plainHttpProblem(url, error) ?? `cannot reach ${url}: ${oneLine(describeError(error))}`
    )
  }
}

const jsonOf = (answer: Answer): unknown => {
  try {
    return JSON.parse(answer.body)
  } catch {
    return undefined
  }
}

/** `404 text/html`, or `200 application/json {"hello":"world"}` when the status alone does not say what is wrong. */
const described = (answer: Answer, withBody: boolean): string => {
  const body = answer.body.replace(/\s+/g, " ").trim()
  const shown = body.length > SHOWN_BODY ? `${body.slice(0, SHOWN_BODY)}…` : body
  return `${answer.status} ${answer.contentType}${withBody && shown !== "" ? ` ${shown}` : ""}`
}

const notThisApi = (baseUrl: string, found: string): ConfigurationError => {
  const path = new URL(baseUrl).pathname.replace(/\/+$/, "")
  const hint = path === ""
    ? "is --base-url the address of an Integrations API deployment?"
    : `is --base-url the service root (without ${path})?`
  return new ConfigurationError(`${baseUrl} is not the Integrations API: ${found}; ${hint}`)
}

const decodeHealth = Schema.decodeUnknownOption(Health)
const OpenApiInfo = Schema.Struct({ info: Schema.Struct({ title: Schema.String, version: Schema.String }) })
const decodeOpenApiInfo = Schema.decodeUnknownOption(OpenApiInfo)

/** GET /healthz and GET /openapi.json: this API, its mode and a version of the contract's compatibility line. */
const checkTarget = async (options: PreflightOptions): Promise<Target> => {
  const healthz = await get(options, "/healthz")
  const health = decodeHealth(jsonOf(healthz))
  if (healthz.status !== 200 || health._tag === "None") {
    throw notThisApi(options.baseUrl, `GET /healthz answered ${described(healthz, healthz.status === 200)}`)
  }
  const { mode, version } = health.value
  const document = await get(options, "/openapi.json")
  const info = decodeOpenApiInfo(jsonOf(document))
  if (document.status !== 200 || info._tag === "None") {
    throw notThisApi(options.baseUrl, `GET /openapi.json answered ${described(document, document.status === 200)}`)
  }
  if (info.value.info.title !== API_TITLE) {
    throw notThisApi(
      options.baseUrl,
      `GET /openapi.json describes ${JSON.stringify(info.value.info.title)} ${info.value.info.version}`
    )
  }
  if (versionFit(version) === "other-line") {
    throw new ConfigurationError(
      `${options.baseUrl} serves Integrations API ${version} (GET /healthz); this kit checks ${INTERFACE_VERSION}, and another compatibility line (${POLICY}) is not the same contract: use the kit of that line`
    )
  }
  if (options.mode !== undefined && options.mode !== mode) {
    throw new ConfigurationError(
      `--mode ${options.mode}, but the deployment says it is in ${mode} mode (GET /healthz); refusing to run`
    )
  }
  return { mode, modeSource: options.mode === undefined ? "healthz" : "option", version }
}

/** An Integrations API key: `cop_<test|live>_pk_` and 49 letters and digits (43 random, a 6-character checksum). */
const KEY_SHAPE = /^cop_(test|live)_pk_[0-9A-Za-z]{49}$/
const KIND_OF_MODE: Record<Mode, "test" | "live"> = { mock: "test", live: "live" }

/** Enough of a key to recognise it, never the key: its prefix and, for a key of a real key's length, its last 4. */
export const shownKey = (key: string): string => {
  const prefix = /^cop_[a-z]+_pk_/.exec(key)?.[0]
  if (prefix === undefined) return key.length >= 16 ? `…${key.slice(-4)}` : "…"
  return key.length >= prefix.length + 16 ? `${prefix}…${key.slice(-4)}` : `${prefix}…`
}

/** Why a key the deployment answered 401 to does not authenticate, in the partner's terms. */
const whyRefused = (key: string, mode: Mode): string => {
  const shape = KEY_SHAPE.exec(key)
  if (shape === null) {
    return "is not an Integrations API key (cop_test_pk_… or cop_live_pk_… and 49 letters and digits)"
  }
  const kind = KIND_OF_MODE[mode]
  return shape[1] === kind
    ? "is unknown to this deployment (never issued here, mistyped or revoked)"
    : `is a ${shape[1]} key: this ${mode} deployment accepts only ${kind} keys (cop_${kind}_pk_…)`
}

/**
 * Each key must authenticate (DESIGN §4): a wrong key would otherwise fail dozens of scenarios with 401s. The probe is
 * a read (GET .../payouts?limit=1); only a 401 refuses the run, any other answer is for the scenarios to judge.
 */
const checkKeys = async (options: PreflightOptions, mode: Mode): Promise<void> => {
  const path = `${pathOf(endpoint("listPayouts"))}?limit=1`
  const keys = [
    ["--api-key", KEY_VARIABLES.primary, options.apiKey],
    ...(options.secondApiKey === undefined ? [] : [["--second-api-key", KEY_VARIABLES.second, options.secondApiKey]])
  ] as const
  for (const [option, variable, key] of keys) {
    const answer = await get(options, path, { authorization: `Bearer ${key}` })
    if (answer.status === 401) {
      throw new ConfigurationError(
        `the API key ${shownKey(key)} (${option}, ${variable}) ${
          whyRefused(key, mode)
        }: GET ${path} answered 401; no scenario was run`
      )
    }
  }
}

/** Refuses (ConfigurationError, one line) a target that is not this API or keys that do not authenticate. */
export const preflight = async (options: PreflightOptions): Promise<Target> => {
  const target = await checkTarget(options)
  await checkKeys(options, target.mode)
  return target
}
