/**
 * The receiver kit: checks a partner's own webhook receiver the way the API delivers to it. It POSTs signed events
 * (Standard Webhooks) to the receiver's URL, some valid and some that must be refused, and reads the answers; with a
 * state probe (`stateUrl`) it also reads what the receiver applied. The scenarios run one after the other (a receiver
 * is one process on a developer's machine), and the run is reported as the server-side kit's: a ConformanceReport.
 *
 * The state probe (documented in the kit's README): `GET <stateUrl>?payoutId=po_…` answers 200
 * `{ "status": "<the payout's status as the receiver recorded it>", "applied": <distinct events of it applied> }`,
 * or 404 when the receiver applied no event of that payout.
 */
import { Schema } from "effect"
import { type Bounds, fetchBounded, MAX_RECEIVER_ANSWER_BYTES } from "./boundedFetch.ts"
import { ConfigurationError } from "./configurationError.ts"
import { toCurl } from "./curl.ts"
import { describeError, type Exchange } from "./exchange.ts"
import { HAPPY_PATH, type KitEvent, eventTypes, makeEvent, newId } from "./receiverEvents.ts"
import { exchangeDigest } from "./report/signed.ts"
import type { ConformanceReport, FailureReport, RunEvent, ScenarioResult } from "./report/types.ts"
import { describeRules, type RuleId } from "./rules.ts"
import { plainHttpProblem } from "./urlOptions.ts"
import { KIT_NAME, KIT_VERSION } from "./version.ts"
import {
  anotherSigner,
  isV1aSigningKey,
  isWebhookSecret,
  TIMESTAMP_TOLERANCE_SECONDS,
  type WebhookHeaderName,
  webhookHeaders
} from "./webhookSignature.ts"

export interface ReceiverOptions {
  /** Where the receiver takes deliveries, e.g. http://localhost:3000/hooks. */
  readonly url: string
  /**
   * What signs the deliveries: the receiver's endpoint secret (`whsec_…`, Standard Webhooks `v1`), or an ed25519
   * private key in PEM (`v1a`: the receiver verifies with its public key, `whpk_…`, see v1aPublicKey).
   */
  readonly secret: string
  /** A secret (or v1a key) the receiver used before a rotation whose overlap is over: signatures by it must be refused. */
  readonly oldSecret?: string | undefined
  /** The state probe; without it the scenarios check only the answers. */
  readonly stateUrl?: string | undefined
  /** Scenario ids or prefixes to run (default all). */
  readonly grep?: ReadonlyArray<string>
  /** Time limit of one request (default 10 s, as the API's deliveries). */
  readonly requestTimeoutMs?: number
  readonly onEvent?: ((event: RunEvent) => void) | undefined
}

/** The receiver (or its state probe) does not answer at all: the run cannot start. */
export class ReceiverUnreachable extends ConfigurationError {}

export { isV1aSigningKey, isWebhookSecret }

// ------------------------------------------------------------------------------------------- deliveries

interface Delivery {
  /** What this delivery is, in a report: "payout.created evt_… signed by a secret the receiver never had". */
  readonly label: string
  readonly headers: ReadonlyArray<readonly [string, string]>
  /** Uint8Array, not Buffer: the kit's declarations need no Node types. */
  readonly body: Uint8Array
}

interface Signing {
  /** Secrets whose v1 signatures the header carries, in order (default: the receiver's). */
  readonly secrets?: ReadonlyArray<string>
  /** Unix seconds (default now). */
  readonly timestamp?: number
  readonly without?: WebhookHeaderName
  /** The body sent, when not the signed one. */
  readonly sentBody?: Buffer
}

const nowSeconds = () => Math.floor(Date.now() / 1000)

const signed = (options: ReceiverOptions, event: KitEvent, label: string, signing: Signing = {}): Delivery => {
  const timestamp = String(signing.timestamp ?? nowSeconds())
  const secrets = signing.secrets ?? [options.secret]
  const headers: ReadonlyArray<readonly [WebhookHeaderName | "content-type", string]> = [
    ["content-type", "application/json"],
    ...webhookHeaders(secrets, event.id, timestamp, event.body)
  ]
  return {
    label: `${event.type} ${event.id} ${label}`,
    headers: headers.filter(([name]) => name !== signing.without),
    body: signing.sentBody ?? event.body
  }
}

/** The same bytes with one digit of `destinationCop` changed: still a valid event, no longer the one signed. */
const alteredByOneByte = (body: Buffer): Buffer => {
  const marker = Buffer.from("\"destinationCop\":\"")
  const at = body.indexOf(marker) + marker.length
  if (at < marker.length) throw new Error("the generated payout event has no destinationCop")
  const copy = Buffer.from(body)
  copy[at] = copy[at] === 0x39 ? 0x31 : (copy[at] as number) + 1
  return copy
}

// ------------------------------------------------------------------------------------------- a scenario run

interface Sent {
  readonly delivery: Delivery
  readonly status: number | undefined
  readonly exchange: Exchange
}

/** What the state probe answers about a payout. */
export interface PayoutState {
  readonly status: string
  readonly applied: number
}

const decodeState = Schema.decodeUnknownOption(
  Schema.fromJsonString(Schema.Struct({ status: Schema.String, applied: Schema.Int }))
)

class Failed extends Error {
  readonly expected: string
  readonly actual: string
  readonly exchange: Exchange | undefined
  readonly rootCause: string
  constructor(message: string, evidence: { expected: string; actual: string; exchange?: Exchange | undefined }) {
    super(message)
    this.expected = evidence.expected
    this.actual = evidence.actual
    this.exchange = evidence.exchange
    // ids differ on every delivery: failures that differ only by them have one cause
    this.rootCause = `${message}\n${evidence.expected}`.replace(/\b(evt|po)_[A-Za-z0-9]+/g, "<id>")
  }
}

/** A delivery's answer: its status is what counts; its body is read only so far, as the API's deliveries read it. */
const DELIVERY_READ: Omit<Bounds, "timeoutMs"> = {
  maxBytes: MAX_RECEIVER_ANSWER_BYTES,
  beyondLimit: "cut",
  what: "a receiver's answer",
  advice: "its status stands, as for the API's deliveries"
}

const excerpt = (text: string) => text.length > 200 ? `${text.slice(0, 200)}… (${text.length} characters)` : text

const recordedHeaders = (headers: Headers): Record<string, string> => Object.fromEntries(headers.entries())

/** One scenario's run: its deliveries, its probes of the state, and what they recorded. */
export class Run {
  readonly exchanges: Array<Exchange> = []
  readonly details: Record<string, unknown> = {}
  readonly options: ReceiverOptions

  constructor(options: ReceiverOptions) {
    this.options = options
  }

  private exchange = async (
    method: "GET" | "POST",
    url: string,
    headers: ReadonlyArray<readonly [string, string]>,
    body: Uint8Array | undefined,
    read: Omit<Bounds, "timeoutMs">
  ): Promise<{ readonly exchange: Exchange; readonly cut: string | undefined }> => {
    const startedAt = new Date()
    const started = performance.now()
    const curl = toCurl({ method, url, headers, body })
    const request = {
      method,
      url,
      headers: Object.fromEntries(headers),
      body: body === undefined ? undefined : Buffer.from(body).toString("utf8"),
      bodyBytes: body?.length ?? 0
    }
    let exchange: Exchange
    let cut: string | undefined
    try {
      const answer = await fetchBounded(fetch, url, {
        method,
        headers: headers.map(([name, value]): [string, string] => [name, value]),
        ...(body === undefined ? {} : { body: new Uint8Array(body) }),
        redirect: "manual"
      }, { ...read, timeoutMs: this.options.requestTimeoutMs ?? 10_000 })
      const text = new TextDecoder().decode(answer.body)
      let json: unknown = undefined
      try {
        json = JSON.parse(text)
      } catch {
        // not JSON: the text is the evidence
      }
      cut = answer.cut
      exchange = {
        request,
        response: {
          status: answer.status,
          headers: recordedHeaders(answer.headers),
          body: answer.cut === undefined ? text : `${text}… (${answer.cut})`,
          json,
          isJson: json !== undefined
        },
        error: undefined,
        startedAt: startedAt.toISOString(),
        durationMs: Math.round(performance.now() - started),
        curl
      }
    } catch (error) {
      exchange = {
        request,
        response: undefined,
        error: describeError(error),
        startedAt: startedAt.toISOString(),
        durationMs: Math.round(performance.now() - started),
        curl
      }
    }
    this.exchanges.push(exchange)
    return { exchange, cut }
  }

  deliver = async (delivery: Delivery): Promise<Sent> => {
    const { exchange } = await this.exchange("POST", this.options.url, delivery.headers, delivery.body, DELIVERY_READ)
    return { delivery, status: exchange.response?.status, exchange }
  }

  /** Delivers and requires a 2xx. */
  accepted = async (delivery: Delivery, why: string): Promise<Sent> => {
    const sent = await this.deliver(delivery)
    if (sent.status === undefined || sent.status < 200 || sent.status > 299) {
      throw new Failed(`the receiver did not accept ${delivery.label}`, {
        expected: `a 2xx answer: ${why}`,
        actual: sent.status === undefined ? `no answer (${sent.exchange.error ?? ""})` : `${sent.status}`,
        exchange: sent.exchange
      })
    }
    return sent
  }

  /** Delivers and requires a non-2xx answer. */
  refused = async (delivery: Delivery, why: string): Promise<Sent> => {
    const sent = await this.deliver(delivery)
    if (sent.status !== undefined && sent.status >= 200 && sent.status <= 299) {
      throw new Failed(`the receiver accepted ${delivery.label}`, {
        expected: `a non-2xx answer (400 or 401): ${why}`,
        actual: `${sent.status}`,
        exchange: sent.exchange
      })
    }
    if (sent.status === undefined) {
      throw new Failed(`the receiver did not answer ${delivery.label}`, {
        expected: `a non-2xx answer (400 or 401) within ${(this.options.requestTimeoutMs ?? 10_000) / 1000} s: ${why}`,
        actual: `no answer (${sent.exchange.error ?? ""})`,
        exchange: sent.exchange
      })
    }
    return sent
  }

  /** The state probe's answer for a payout: undefined when it applied nothing of it; "no probe" without stateUrl. */
  state = async (payoutId: string): Promise<PayoutState | undefined | "no probe"> => {
    const stateUrl = this.options.stateUrl
    if (stateUrl === undefined) return "no probe"
    const url = new URL(stateUrl)
    url.searchParams.set("payoutId", payoutId)
    const { exchange, cut } = await this.exchange("GET", url.href, [["accept", "application/json"]], undefined, {
      maxBytes: MAX_RECEIVER_ANSWER_BYTES,
      beyondLimit: "cut",
      what: "a state probe's answer",
      advice: "it answers 200 {\"status\":…,\"applied\":…} or 404"
    })
    const response = exchange.response
    if (response?.status === 404) return undefined
    const state = response?.status === 200 && cut === undefined ? decodeState(response.body) : undefined
    if (state === undefined || state._tag === "None") {
      throw new Failed("the state probe did not answer as documented", {
        expected: `GET ${url.pathname}?payoutId=${payoutId}: 200 {"status":"<status>","applied":<integer>}, or 404`,
        actual: response === undefined
          ? `no answer (${exchange.error ?? ""})`
          : cut === undefined
          ? `${response.status} ${excerpt(response.body)}`
          : `${response.status}: ${cut}`,
        exchange
      })
    }
    if (state.value.applied === 0) return undefined
    return state.value
  }

  /** With a probe: the receiver applied nothing of this payout (the refused delivery changed nothing). */
  nothingApplied = async (payoutId: string, what: string) => {
    const state = await this.state(payoutId)
    if (state === "no probe" || state === undefined) return
    throw new Failed(`the receiver answered non-2xx but applied ${what}`, {
      expected: `GET state?payoutId=${payoutId}: 404 (or applied 0), nothing of a refused delivery applied`,
      actual: JSON.stringify(state),
      exchange: this.exchanges.at(-1)
    })
  }
}

// --------------------------------------------------------------------------------------------- scenarios

export interface ReceiverScenario {
  /** Stable id: RECEIVER-NNN. */
  readonly id: string
  readonly title: string
  readonly rules: readonly [RuleId, ...Array<RuleId>]
  readonly run: (run: Run) => Promise<void>
}

/** Outside the tolerance by a margin a machine's clock drift never reaches. */
const OUT_OF_TOLERANCE_S = 10 * 60

const at = (secondsFromNow: number) => new Date(Date.now() + secondsFromNow * 1000)

/** The events of one run of RECEIVER-001: the happy path of one payout in order, then one of every other type. */
const everyType = () => {
  const payoutId = newId("po_", 22)
  const types = eventTypes()
  const happy = HAPPY_PATH.filter((type) => types.includes(type)).map((type, i) =>
    makeEvent(type, at(-60 + i), payoutId)
  )
  const others = types.filter((type) => !HAPPY_PATH.includes(type)).map((type) => makeEvent(type, at(-30)))
  return { payoutId, events: [...happy, ...others] }
}

export const RECEIVER_SCENARIOS: ReadonlyArray<ReceiverScenario> = [
  {
    id: "RECEIVER-001",
    title: "every event type, validly signed, is answered 2xx (and a payout's events in order are applied)",
    rules: ["R-RECEIVER-1"],
    run: async (run) => {
      const { events, payoutId } = everyType()
      for (const event of events) await run.accepted(signed(run.options, event, "signed by its secret"), "valid")
      run.details["eventTypes"] = events.map((event) => event.type)
      const state = await run.state(payoutId)
      if (state === "no probe") return
      if (state?.status !== "completed" || state.applied !== HAPPY_PATH.length) {
        throw new Failed("the receiver did not apply a payout's events delivered in order", {
          expected: `GET state?payoutId=${payoutId}: {"status":"completed","applied":${HAPPY_PATH.length}}`,
          actual: JSON.stringify(state ?? "404"),
          exchange: run.exchanges.at(-1)
        })
      }
    }
  },
  {
    id: "RECEIVER-002",
    title: "a signature by another secret is refused",
    rules: ["R-RECEIVER-2"],
    run: async (run) => {
      const event = makeEvent("payout.created", at(0))
      await run.refused(
        signed(run.options, event, "signed by a secret the receiver never had", {
          secrets: [anotherSigner(run.options.secret)]
        }),
        "no signature verifies with the receiver's secret"
      )
      await run.nothingApplied(event.payoutId!, "the event")
    }
  },
  {
    id: "RECEIVER-003",
    title: "a body altered by one byte after signing is refused",
    rules: ["R-RECEIVER-2"],
    run: async (run) => {
      const event = makeEvent("payout.created", at(0))
      await run.refused(
        signed(run.options, event, "with one byte of its body changed after signing", {
          sentBody: alteredByOneByte(event.body)
        }),
        "the signature covers the raw body: verify the bytes received, before parsing"
      )
      await run.nothingApplied(event.payoutId!, "the altered event")
    }
  },
  {
    id: "RECEIVER-004",
    title: `a webhook-timestamp more than ${
      TIMESTAMP_TOLERANCE_SECONDS / 60
    } minutes from now is refused (old or ahead)`,
    rules: ["R-RECEIVER-3"],
    run: async (run) => {
      for (const offset of [-OUT_OF_TOLERANCE_S, OUT_OF_TOLERANCE_S]) {
        const event = makeEvent("payout.created", at(0))
        const side = offset < 0 ? "old" : "ahead"
        await run.refused(
          signed(run.options, event, `signed validly with a timestamp ${OUT_OF_TOLERANCE_S / 60} minutes ${side}`, {
            timestamp: nowSeconds() + offset
          }),
          `a replayed or held delivery: Standard Webhooks allows ${TIMESTAMP_TOLERANCE_SECONDS / 60} minutes`
        )
        await run.nothingApplied(event.payoutId!, "the event")
      }
    }
  },
  {
    id: "RECEIVER-005",
    title: "a delivery without webhook-id, webhook-timestamp or webhook-signature is refused",
    rules: ["R-RECEIVER-4"],
    run: async (run) => {
      for (const without of ["webhook-id", "webhook-timestamp", "webhook-signature"] as const) {
        const event = makeEvent("payout.created", at(0))
        await run.refused(
          signed(run.options, event, `signed but sent without ${without}`, { without }),
          `the signature covers webhook-id and webhook-timestamp; without ${without} nothing verifies`
        )
        await run.nothingApplied(event.payoutId!, "the event")
      }
    }
  },
  {
    id: "RECEIVER-006",
    title: "a signature by a retired secret (after a rotation's overlap) is refused",
    rules: ["R-RECEIVER-2", "R-EVT-3"],
    run: async (run) => {
      const retired = run.options.oldSecret
      run.details["retiredSecret"] = retired === undefined
        ? "none given (--old-secret): a secret the receiver never had"
        : "the one given by --old-secret"
      const event = makeEvent("payout.created", at(0))
      await run.refused(
        signed(run.options, event, "signed only by the retired secret", {
          secrets: [retired ?? anotherSigner(run.options.secret)]
        }),
        "once the 24 h overlap is over, only the new secret's signature is valid"
      )
      await run.nothingApplied(event.payoutId!, "the event")
    }
  },
  {
    id: "RECEIVER-007",
    title: "during a rotation's overlap, a delivery is accepted when any one of its signatures verifies",
    rules: ["R-RECEIVER-5", "R-EVT-3"],
    run: async (run) => {
      const event = makeEvent("payout.created", at(0))
      await run.accepted(
        signed(run.options, event, "signed by another secret first, then by the receiver's", {
          secrets: [anotherSigner(run.options.secret), run.options.secret]
        }),
        "webhook-signature lists space-separated signatures; one that verifies is enough"
      )
    }
  },
  {
    id: "RECEIVER-008",
    title: "a duplicate webhook-id is answered 2xx and applied once",
    rules: ["R-RECEIVER-6", "R-EVT-4"],
    run: async (run) => {
      const event = makeEvent("payout.created", at(0))
      await run.accepted(signed(run.options, event, "(first delivery)"), "valid")
      await run.accepted(
        signed(run.options, event, "again, same webhook-id and body, new timestamp (a redelivery)"),
        "a duplicate is acknowledged, else the API retries it for 3 days"
      )
      const state = await run.state(event.payoutId!)
      if (state === "no probe") return
      if (state?.applied !== 1) {
        throw new Failed("the receiver applied a duplicate delivery again", {
          expected: `GET state?payoutId=${event.payoutId}: applied 1 (dedupe on webhook-id)`,
          actual: JSON.stringify(state ?? "404"),
          exchange: run.exchanges.at(-1)
        })
      }
    }
  },
  {
    id: "RECEIVER-009",
    title: "payout.processing arriving after payout.completed is answered 2xx and does not move the payout back",
    rules: ["R-RECEIVER-7", "R-EVT-4"],
    run: async (run) => {
      const payoutId = newId("po_", 22)
      const processing = makeEvent("payout.processing", at(-2), payoutId)
      const completed = makeEvent("payout.completed", at(-1), payoutId)
      await run.accepted(signed(run.options, completed, "(the newer event, first)"), "valid")
      await run.accepted(
        signed(run.options, processing, "(older than payout.completed, arriving after it)"),
        "an out-of-order delivery is acknowledged, not retried"
      )
      const state = await run.state(payoutId)
      if (state === "no probe") return
      if (state?.status !== "completed") {
        throw new Failed("an older event moved the payout back", {
          expected: `GET state?payoutId=${payoutId}: status "completed" (payout.processing is older: ignore it)`,
          actual: JSON.stringify(state ?? "404"),
          exchange: run.exchanges.at(-1)
        })
      }
    }
  }
]

// --------------------------------------------------------------------------------------------- the run

const matches = (grep: ReadonlyArray<string>) => (scenario: ReceiverScenario) =>
  grep.length === 0 || grep.some((term) => scenario.id === term || scenario.id.startsWith(term))

export const selectReceiverScenarios = (grep: ReadonlyArray<string> = []): ReadonlyArray<ReceiverScenario> =>
  RECEIVER_SCENARIOS.filter(matches(grep))

/**
 * Every request up to the failing one, as a script: the exact headers and bytes, in order (the failing one alone is
 * `curl`; the evidence of the report holds each request's headers and body too).
 */
const reproduction = (exchanges: ReadonlyArray<Exchange>, failing: Exchange | undefined): string | undefined => {
  const upTo = failing === undefined ? exchanges : exchanges.slice(0, exchanges.indexOf(failing) + 1)
  if (upTo.length <= 1) return undefined
  return [
    "# each webhook-timestamp is when the kit sent it: a receiver refuses these signatures 5 minutes later",
    ...upTo.map((exchange) => exchange.curl)
  ].join("\n")
}

const failureReport = (error: Failed, run: Run): FailureReport => ({
  message: error.message,
  expected: error.expected,
  actual: error.actual,
  curl: error.exchange?.curl,
  reproduce: reproduction(run.exchanges, error.exchange),
  rootCause: error.rootCause,
  details: undefined
})

const resultOf = async (scenario: ReceiverScenario, options: ReceiverOptions): Promise<ScenarioResult> => {
  const run = new Run(options)
  const started = performance.now()
  let status: ScenarioResult["status"] = "passed"
  let failure: FailureReport | undefined
  try {
    await scenario.run(run)
  } catch (error) {
    status = error instanceof Failed ? "failed" : "error"
    failure = error instanceof Failed ? failureReport(error, run) : {
      message: `the kit broke: ${error instanceof Error ? error.message : String(error)}`,
      expected: "",
      actual: error instanceof Error ? error.stack ?? error.message : String(error),
      curl: undefined,
      reproduce: undefined,
      rootCause: `kit error ${String(error)}`,
      details: undefined
    }
  }
  if (options.stateUrl === undefined) run.details["state"] = "not checked: no state probe (--state-url)"
  return {
    id: scenario.id,
    title: scenario.title,
    rule: describeRules(scenario.rules),
    tags: ["receiver"],
    status,
    durationMs: Math.round(performance.now() - started),
    reason: undefined,
    failure,
    details: run.details,
    requests: run.exchanges.map((exchange) => ({
      method: exchange.request.method,
      url: exchange.request.url,
      status: exchange.response?.status,
      durationMs: exchange.durationMs
    })),
    exchangeHashes: run.exchanges.map(exchangeDigest),
    evidence: status === "passed" ? [] : run.exchanges.slice(-10),
    warnings: []
  }
}

/** Any HTTP answer at all (a 400 to an empty POST is fine): else the run cannot start. */
const reachable = async (method: "GET" | "POST", url: string, what: string) => {
  try {
    await fetchBounded(fetch, url, { method, redirect: "manual" }, { ...DELIVERY_READ, timeoutMs: 10_000 })
  } catch (error) {
    throw new ReceiverUnreachable(
      plainHttpProblem(url, error) ??
        `${what} ${url} does not answer (${describeError(error).replace(/\s*\n\s*/g, " ").trim()})`
    )
  }
}

const claimOf = (results: ReadonlyArray<ScenarioResult>, filtered: boolean, probed: boolean) => {
  const failed = results.filter((result) => result.status !== "passed").length
  if (failed > 0) {
    return {
      verdict: "not_conformant" as const,
      text: `NOT CONFORMANT: ${failed} receiver scenario(s) failed`
    }
  }
  const gaps = [
    ...(filtered ? ["the run was filtered with --grep"] : []),
    ...(probed ? [] : ["without --state-url, what the receiver applied was not checked"])
  ]
  return gaps.length === 0
    ? { verdict: "conformant" as const, text: "CONFORMANT: every receiver scenario ran and passed" }
    : { verdict: "partial" as const, text: `PASSED, PARTIAL RUN: not a full claim (${gaps.join("; ")})` }
}

/** Runs the selected scenarios against the receiver, one after the other. Throws ReceiverUnreachable first if need be. */
export const runReceiverConformance = async (options: ReceiverOptions): Promise<ConformanceReport> => {
  const v1a = isV1aSigningKey(options.secret)
  if (!v1a && !isWebhookSecret(options.secret)) {
    throw new ReceiverUnreachable(
      "the secret must be whsec_ followed by base64, or an ed25519 private key in PEM (v1a)"
    )
  }
  const sameKind = (old: string) => (v1a ? isV1aSigningKey(old) : isWebhookSecret(old))
  if (options.oldSecret !== undefined && !sameKind(options.oldSecret)) {
    throw new ReceiverUnreachable(
      v1a ? "the old key must be an ed25519 private key in PEM" : "the old secret must be whsec_ followed by base64"
    )
  }
  await reachable("POST", options.url, "the receiver")
  if (options.stateUrl !== undefined) await reachable("GET", options.stateUrl, "the state probe")
  const grep = options.grep ?? []
  const selected = selectReceiverScenarios(grep)
  const startedAt = new Date()
  const started = performance.now()
  const target = { baseUrl: options.url, mode: "mock" as const, modeSource: "default" as const }
  options.onEvent?.({
    _tag: "RunStarted",
    target,
    seed: 0,
    selected: selected.length,
    total: RECEIVER_SCENARIOS.length
  })
  const results: Array<ScenarioResult> = []
  for (const scenario of selected) {
    const result = await resultOf(scenario, options)
    results.push(result)
    options.onEvent?.({ _tag: "ScenarioFinished", result, done: results.length, of: selected.length })
  }
  const claim = claimOf(results, selected.length < RECEIVER_SCENARIOS.length, options.stateUrl !== undefined)
  const count = (status: ScenarioResult["status"]) => results.filter((result) => result.status === status).length
  const failures = results.filter((result) => result.failure !== undefined)
  return {
    kit: { name: `${KIT_NAME} receiver`, version: KIT_VERSION },
    target,
    seed: 0,
    startedAt: startedAt.toISOString(),
    durationMs: Math.round(performance.now() - started),
    options: {
      grep,
      allowLive: false,
      secondKey: false,
      timeoutMs: options.requestTimeoutMs ?? 10_000,
      concurrency: 1,
      negativeCases: 0,
      strict: false
    },
    summary: {
      scenarios: RECEIVER_SCENARIOS.length,
      selected: selected.length,
      passed: count("passed"),
      failed: count("failed"),
      errors: count("error"),
      notRun: count("not_run"),
      generatedChecks: 0,
      warnings: 0,
      rootCauses: new Set(failures.map((result) => result.failure?.rootCause)).size
    },
    fullConformanceClaim: claim.verdict === "conformant",
    verdict: claim.verdict,
    claim: claim.text,
    scenarios: results
  }
}
