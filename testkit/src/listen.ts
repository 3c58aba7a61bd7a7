/**
 * `integrations-conformance listen`: a deployment's events on a developer's machine, like `stripe listen`. It follows
 * `GET /api/integrations/events` and POSTs each new event to a local URL with the bytes the API keeps for it (the
 * body its webhooks deliver), signed with Standard Webhooks headers under a secret of its own, printed at start. A
 * receiver can so be developed against any deployment, remote sandboxes included, without exposing a port.
 *
 * Node builtins and `fetch` only: the kit's CLI is bundled into one file without dependencies.
 */
import { setTimeout as sleep } from "node:timers/promises"
import { parseArgs } from "node:util"
import {
  AnswerTooLarge,
  type BoundedAnswer,
  fetchBounded,
  MAX_API_ANSWER_BYTES,
  MAX_RECEIVER_ANSWER_BYTES
} from "./boundedFetch.ts"
import { KEY_VARIABLES } from "./curl.ts"
import { describeError } from "./exchange.ts"
import { httpUrlProblem, plainHttpProblem } from "./urlOptions.ts"
import { KIT_VERSION } from "./version.ts"
import { isWebhookSecret, newWebhookSecret, webhookHeaders } from "./webhookSignature.ts"

export const LISTEN_HELP =
  `integrations-conformance listen: a deployment's events, forwarded to a receiver on this machine

Usage: integrations-conformance listen --base-url <url> --api-key <key> --forward-to <url> [options]

  --base-url <url>        the deployment (env CONFORMANCE_BASE_URL)
  --api-key <key>         a key of the integration whose events to follow (env ${KEY_VARIABLES.primary})
  --forward-to <url>      where each event is POSTed, e.g. http://localhost:3000/hooks
  --secret <whsec_...>    the signing secret (or env WEBHOOK_SECRET, which ps and the shell's
                          history do not show: the variable your receiver reads); default: a new
                          one on every run, printed at start. Give one to keep your receiver's
                          configuration across runs
  --since <time|evt_...>  first replay the events from this ISO time, or from this event on (it
                          included), then follow
  --interval <seconds>    between two polls of GET /api/integrations/events (default 1)
  --help

Follows GET /api/integrations/events from the moment it starts (or from --since) and POSTs each new
event, in the order listed, with the exact body the API keeps for it (the bytes its webhooks deliver), signed
with Standard Webhooks headers: webhook-id (the event id), webhook-timestamp and webhook-signature,
under the secret printed at start (or given). That is listen's own secret, not the one of an endpoint
registered on the deployment: give your receiver the same (e.g. WEBHOOK_SECRET=whsec_..., exported
once for both).
One line per event on stdout. A receiver error or non-2xx answer is retried after 1, 2 and 4 s, then
the event is skipped (replay it with --since <its id>). A 429 from the deployment is waited out.
Ctrl-C stops. Exit code: 0 when stopped, 2 when it cannot start or the key stops authenticating.
`

const EVENTS_PATH = "/api/integrations/events"
const PAGE_SIZE = 100
/** Waits between the attempts of one delivery; then the event is skipped. */
const RETRY_DELAYS_MS = [1_000, 2_000, 4_000]
const FORWARD_TIMEOUT_MS = 10_000
/** One request to the deployment, its answer's body included. */
const DEPLOYMENT_TIMEOUT_MS = 30_000
const MAX_OUTAGE_WAIT_MS = 30_000

// ------------------------------------------------------------------------------------------------ options

class ListenError extends Error {}

interface ListenOptions {
  readonly baseUrl: string
  readonly apiKey: string
  readonly forwardTo: string
  readonly secret: string
  /** Where the secret came from: --secret, the environment, or made for this run (then printed). */
  readonly secretFrom: "option" | "environment" | "new"
  readonly since: string | undefined
  readonly intervalMs: number
}

/** `cop_test_pk_…f3a9`: enough to tell keys apart, never the key. */
export const maskKey = (key: string): string => {
  const prefix = key.slice(0, key.lastIndexOf("_") + 1)
  return key.length - prefix.length >= 12 ? `${prefix}…${key.slice(-4)}` : `${prefix}…`
}

/** The variable listen takes its secret from when --secret is not given: the one the README's receivers read. */
export const SECRET_VARIABLE = "WEBHOOK_SECRET"

const httpUrl = (option: string, text: string | undefined): string => {
  if (text === undefined || text === "") throw new ListenError(`--${option} <url> is required: an http or https URL`)
  const problem = httpUrlProblem(option, text)
  if (problem !== undefined) throw new ListenError(problem)
  return text
}

const optionsOf = (argv: ReadonlyArray<string>, env: NodeJS.ProcessEnv): ListenOptions | "help" => {
  const { values } = parseArgs({
    args: [...argv],
    strict: true,
    allowPositionals: false,
    options: {
      "base-url": { type: "string" },
      "api-key": { type: "string" },
      "forward-to": { type: "string" },
      secret: { type: "string" },
      since: { type: "string" },
      interval: { type: "string" },
      help: { type: "boolean", short: "h" }
    }
  })
  if (values.help === true) return "help"
  const baseUrl = httpUrl("base-url", values["base-url"] ?? env["CONFORMANCE_BASE_URL"])
  const apiKey = values["api-key"] ?? env[KEY_VARIABLES.primary]
  if (apiKey === undefined || apiKey === "") {
    throw new ListenError(`--api-key <key> is required (or ${KEY_VARIABLES.primary})`)
  }
  const forwardTo = httpUrl("forward-to", values["forward-to"])
  const fromEnvironment = env[SECRET_VARIABLE] === "" ? undefined : env[SECRET_VARIABLE]
  const secretFrom = values.secret !== undefined ? "option" : fromEnvironment !== undefined ? "environment" : "new"
  const secret = values.secret ?? fromEnvironment ?? newWebhookSecret()
  if (!isWebhookSecret(secret)) {
    throw new ListenError(
      `${secretFrom === "option" ? "--secret" : SECRET_VARIABLE} must be whsec_ followed by base64 (the key bytes)`
    )
  }
  const interval = Number(values.interval ?? "1")
  if (!Number.isFinite(interval) || interval < 0.05 || interval > 3600) {
    throw new ListenError(`--interval must be a number of seconds from 0.05 to 3600, got ${values.interval}`)
  }
  const since = values.since
  if (since !== undefined && !since.startsWith("evt_") && !isIsoTime(since)) {
    throw new ListenError(`--since must be an ISO time (2026-01-31T12:00:00Z) or an event id (evt_…), got ${since}`)
  }
  return {
    baseUrl,
    apiKey,
    forwardTo,
    secret,
    secretFrom,
    since,
    intervalMs: Math.round(interval * 1000)
  }
}

/** What listen prints is one line each, whatever an error's message holds (OpenSSL's end with a line break). */
const oneLine = (text: string) => text.replace(/\s*\n\s*/g, " ").trim()

const isIsoTime = (text: string) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(text) && !Number.isNaN(Date.parse(text))

// --------------------------------------------------------------------------- the events list, byte for byte

/** One listed event: what identifies it, and its body exactly as the API answered it. */
export interface ListedEvent {
  readonly id: string
  readonly type: string
  readonly body: Buffer
}

const QUOTE = 0x22
const BACKSLASH = 0x5c
const OPENERS = new Set([0x7b, 0x5b])
const CLOSERS = new Set([0x7d, 0x5d])

/** The index just after the JSON string whose opening quote is at `start`. */
const stringEnd = (bytes: Buffer, start: number): number => {
  let i = start + 1
  while (i < bytes.length && bytes[i] !== QUOTE) i += bytes[i] === BACKSLASH ? 2 : 1
  return i + 1
}

/**
 * The bytes of each element of the top-level `items` array of a JSON object the API answered (JSON.parse accepted
 * it). Structural characters are ASCII, which never occurs inside a multi-byte UTF-8 character, so the answer is
 * cut as bytes: each element is exactly the bytes the server spliced in.
 */
export const itemBytes = (bytes: Buffer): ReadonlyArray<Buffer> => {
  const items: Array<Buffer> = []
  let depth = 0
  let lastKey = ""
  let inItems = false
  let itemStart = -1
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i] as number
    if (byte === QUOTE) {
      const end = stringEnd(bytes, i)
      if (depth === 1) lastKey = bytes.subarray(i, end).toString("utf8")
      i = end - 1
    } else if (OPENERS.has(byte)) {
      if (depth === 1 && byte === 0x5b && JSON.parse(lastKey) === "items") inItems = true
      else if (inItems && depth === 2) itemStart = i
      depth++
    } else if (CLOSERS.has(byte)) {
      depth--
      if (inItems && depth === 2 && itemStart >= 0) {
        items.push(bytes.subarray(itemStart, i + 1))
        itemStart = -1
      } else if (inItems && depth === 1) {
        inItems = false
      }
    }
  }
  return items
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** An events page: its events with their exact bytes, and the cursor of the next page. */
export const decodeEventPage = (bytes: Buffer) => {
  const page: unknown = JSON.parse(bytes.toString("utf8"))
  if (!isRecord(page) || !Array.isArray(page["items"])) throw new Error("not an events page: no items array")
  const nextCursor = page["nextCursor"]
  const raw = itemBytes(bytes)
  if (raw.length !== page["items"].length) throw new Error("not an events page: items are not all objects")
  const events = raw.map((body): ListedEvent => {
    const event: unknown = JSON.parse(body.toString("utf8"))
    if (
      !isRecord(event) || typeof event["id"] !== "string" || typeof event["type"] !== "string" ||
      typeof event["createdAt"] !== "string" || Number.isNaN(Date.parse(event["createdAt"]))
    ) {
      throw new Error("an event without a string id, type or createdAt")
    }
    return { id: event["id"], type: event["type"], body }
  })
  return {
    integrationId: typeof page["integrationId"] === "string" ? page["integrationId"] : undefined,
    events,
    nextCursor: typeof nextCursor === "string" ? nextCursor : null
  }
}

// ------------------------------------------------------------------------------------------ the deployment

/** The deployment answered 429: wait this long. */
class RateLimited extends Error {
  readonly waitMs: number
  constructor(waitMs: number) {
    super(`rate limited; waiting ${Math.ceil(waitMs / 1000)} s`)
    this.waitMs = waitMs
  }
}

/** The deployment could not be reached or failed (5xx): try again later. */
class Unavailable extends Error {}

const retryAfterMs = (header: string | null): number => {
  if (header === null) return 1_000
  const seconds = Number(header)
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000)
  const date = Date.parse(header)
  return Number.isNaN(date) ? 1_000 : Math.max(0, date - Date.now())
}

const errorText = (text: string): string => {
  try {
    const body: unknown = JSON.parse(text)
    if (isRecord(body) && typeof body["error"] === "string") return body["error"]
  } catch {
    // not JSON: the start of the text says enough
  }
  return text.slice(0, 200)
}

interface Deployment {
  /** GET of a path under the deployment: the body's bytes and the server's clock (its Date header). */
  readonly get: (path: string, query: Record<string, string>) => Promise<{ bytes: Buffer; serverNowMs: number }>
}

/** A path under the base URL, as the kit's other requests: `--base-url …/api/integrations` is not silently fixed. */
const urlOf = (baseUrl: string, path: string) => new URL(`${baseUrl.replace(/\/+$/, "")}${path}`)

const deployment = (options: ListenOptions, signal: AbortSignal): Deployment => ({
  get: async (path, query) => {
    const url = urlOf(options.baseUrl, path)
    for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value)
    let response: BoundedAnswer
    try {
      response = await fetchBounded(fetch, url, {
        headers: {
          authorization: `Bearer ${options.apiKey}`,
          accept: "application/json",
          "user-agent": `integrations-conformance-listen/${KIT_VERSION}`
        },
        signal
      }, {
        timeoutMs: DEPLOYMENT_TIMEOUT_MS,
        maxBytes: MAX_API_ANSWER_BYTES,
        what: "an API answer",
        advice: "is --base-url an Integrations API deployment?"
      })
    } catch (error) {
      if (signal.aborted) throw error
      if (error instanceof AnswerTooLarge) throw new ListenError(error.message)
      const plain = plainHttpProblem(url, error)
      if (plain !== undefined) throw new ListenError(`--base-url: ${plain}`)
      throw new Unavailable(`cannot reach ${url.origin}: ${oneLine(describeError(error))}`)
    }
    const bytes = Buffer.from(response.body.buffer, response.body.byteOffset, response.body.byteLength)
    if (response.status === 429) throw new RateLimited(retryAfterMs(response.headers.get("retry-after")))
    if (response.status >= 500) throw new Unavailable(`GET ${url.pathname} answered ${response.status}`)
    if (response.status === 401 || response.status === 403) {
      throw new ListenError(
        `the key ${maskKey(options.apiKey)} does not authenticate (${response.status}: ${errorText(bytes.toString())})`
      )
    }
    if (response.status === 404 && path === EVENTS_PATH) {
      throw new ListenError(
        `GET ${url.href} answered 404: is --base-url the deployment's root (without /api/integrations)?`
      )
    }
    if (response.status !== 200) {
      throw new ListenError(`GET ${url.pathname} answered ${response.status}: ${errorText(bytes.toString())}`)
    }
    const date = Date.parse(response.headers.get("date") ?? "")
    return { bytes, serverNowMs: Number.isNaN(date) ? Date.now() : date }
  }
})

// ------------------------------------------------------------------------------------------- forwarding

type Attempt = { readonly status: number; readonly ms: number } | { readonly error: string; readonly ms: number }

const attemptOnce = async (options: ListenOptions, event: ListedEvent, signal: AbortSignal): Promise<Attempt> => {
  const timestamp = Math.floor(Date.now() / 1000).toString()
  const started = performance.now()
  const elapsed = () => Math.round(performance.now() - started)
  try {
    const response = await fetchBounded(fetch, options.forwardTo, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "user-agent": `integrations-conformance-listen/${KIT_VERSION}`,
        ...Object.fromEntries(webhookHeaders([options.secret], event.id, timestamp, event.body))
      },
      body: new Uint8Array(event.body),
      // as the deployment's own deliveries: a redirect is not a delivery
      redirect: "manual",
      signal
    }, {
      timeoutMs: FORWARD_TIMEOUT_MS,
      // as the deployment's own deliveries: the status is the answer, the body is read only so far
      maxBytes: MAX_RECEIVER_ANSWER_BYTES,
      beyondLimit: "cut",
      what: "a receiver's answer",
      advice: "its status stands"
    })
    return { status: response.status, ms: elapsed() }
  } catch (error) {
    if (signal.aborted) throw error
    const plain = plainHttpProblem(options.forwardTo, error)
    return { error: plain === undefined ? oneLine(describeError(error)) : `--forward-to: ${plain}`, ms: elapsed() }
  }
}

const delivered = (attempt: Attempt) => "status" in attempt && attempt.status >= 200 && attempt.status < 300

/** Sends one event until the receiver answers 2xx (true) or the retries run out (false), a line per attempt. */
const forward = async (
  options: ListenOptions,
  event: ListedEvent,
  out: Output,
  signal: AbortSignal
): Promise<boolean> => {
  for (let retry = 0;; retry++) {
    const attempt = await attemptOnce(options, event, signal)
    const outcome = "status" in attempt ? `${attempt.status}` : `failed (${attempt.error})`
    const line = `→ ${event.type} ${event.id} ${outcome} in ${attempt.ms} ms`
    if (delivered(attempt)) {
      out.event(line)
      return true
    }
    const wait = RETRY_DELAYS_MS[retry]
    if (wait === undefined) {
      out.event(`${line}; gave up after ${retry + 1} attempts, moving on (replay it with --since ${event.id})`)
      return false
    }
    out.event(`${line}; retrying in ${wait / 1000} s (${retry + 1}/${RETRY_DELAYS_MS.length})`)
    await sleep(wait, undefined, { signal })
  }
}

// --------------------------------------------------------------------------------------------- following

interface Output {
  /** A line on stdout: one per delivery attempt. */
  readonly event: (line: string) => void
  /** A line on stderr: what listen is doing. */
  readonly note: (line: string) => void
}

interface Tally {
  delivered: number
  skipped: number
}

/**
 * Where following is. The events list is in the order events were recorded, each event once along the cursors
 * (README#events): listen pages with the `nextCursor` it was given, and at the end of the list (no nextCursor) reads
 * that last page again on the next poll, where new events follow the ones it has handled. `createdFrom` stays the
 * same on every request, so a page read again is the same page.
 */
class Position {
  private cursor: string | null = null
  /** The events of the page `cursor` reads that have been handled. */
  private handled = new Set<string>()
  readonly createdFrom: string

  constructor(createdFrom: string) {
    this.createdFrom = createdFrom
  }

  query = (): Record<string, string> => {
    const query: Record<string, string> = { createdFrom: this.createdFrom, limit: `${PAGE_SIZE}` }
    if (this.cursor !== null) query["cursor"] = this.cursor
    return query
  }

  has = (event: ListedEvent) => this.handled.has(event.id)

  add = (event: ListedEvent) => void this.handled.add(event.id)

  /** The page is done and another follows: the next read starts there. */
  next = (cursor: string) => {
    this.cursor = cursor
    this.handled = new Set()
  }
}

const decodedPage = (bytes: Buffer) => {
  try {
    return decodeEventPage(bytes)
  } catch (error) {
    throw new ListenError(
      `GET ${EVENTS_PATH} did not answer an events page (${describeError(error)}): is --base-url this API?`
    )
  }
}

/**
 * The events listed after `position` up to the end of the list, in list order, each not yet handled passed to
 * `onEvent` (which returns false to stop there), then marked handled.
 */
const readOn = async (
  api: Deployment,
  position: Position,
  onEvent: (event: ListedEvent) => Promise<boolean>
) => {
  for (;;) {
    const page = decodedPage((await api.get(EVENTS_PATH, position.query())).bytes)
    for (const event of page.events) {
      if (position.has(event)) continue
      if (!(await onEvent(event))) return
      position.add(event)
    }
    if (page.nextCursor === null) return
    position.next(page.nextCursor)
  }
}

/** Where following starts: now on the deployment's clock (what exists then is not sent), or --since. */
const startingPosition = async (options: ListenOptions, api: Deployment): Promise<Position> => {
  const probe = await api.get(EVENTS_PATH, { limit: "1" })
  if (options.since === undefined) {
    const position = new Position(new Date(probe.serverNowMs).toISOString())
    await readOn(api, position, async () => true)
    return position
  }
  if (!options.since.startsWith("evt_")) return new Position(new Date(Date.parse(options.since)).toISOString())
  const found = await api.get(`${EVENTS_PATH}/${encodeURIComponent(options.since)}`, {}).catch((error: unknown) => {
    throw error instanceof ListenError ? new ListenError(`--since ${options.since}: ${error.message}`) : error
  })
  const event: unknown = JSON.parse(found.bytes.toString("utf8"))
  const createdAt = isRecord(event) ? event["createdAt"] : undefined
  if (typeof createdAt !== "string") throw new ListenError(`--since ${options.since}: the event has no createdAt`)
  // Events listed before it are not replayed: they come before it.
  const position = new Position(createdAt)
  await readOn(api, position, async (event) => event.id !== options.since)
  return position
}

/** The deployment was rate limiting when listen started: wait as it says, then start. */
const patiently = async <A>(out: Output, signal: AbortSignal, start: () => Promise<A>): Promise<A> => {
  for (;;) {
    try {
      return await start()
    } catch (error) {
      if (!(error instanceof RateLimited)) throw error
      out.note(error.message)
      await sleep(error.waitMs, undefined, { signal })
    }
  }
}

/** Runs until `signal` aborts it (it never returns). */
const follow = async (
  options: ListenOptions,
  api: Deployment,
  out: Output,
  tally: Tally,
  signal: AbortSignal
): Promise<never> => {
  const position = await patiently(out, signal, () => startingPosition(options, api))
  out.note(`ready: new events are forwarded to ${options.forwardTo}; Ctrl-C to stop`)
  let outageSince: number | undefined
  for (;;) {
    let waitMs = options.intervalMs
    try {
      await readOn(api, position, async (event) => {
        if (await forward(options, event, out, signal)) tally.delivered++
        else tally.skipped++
        return true
      })
      if (outageSince !== undefined) out.note("the deployment answers again")
      outageSince = undefined
    } catch (error) {
      if (error instanceof RateLimited) {
        out.note(error.message)
        waitMs = Math.max(waitMs, error.waitMs)
      } else if (error instanceof Unavailable) {
        if (outageSince === undefined) out.note(`${error.message}; trying again`)
        outageSince ??= Date.now()
        waitMs = Math.min(MAX_OUTAGE_WAIT_MS, Math.max(waitMs, Date.now() - outageSince))
      } else {
        throw error
      }
    }
    await sleep(waitMs, undefined, { signal })
  }
}

// ---------------------------------------------------------------------------------------------------- main

const isUsageProblem = (error: unknown) =>
  error instanceof ListenError ||
  (error instanceof TypeError && "code" in error && String(error.code).startsWith("ERR_PARSE_ARGS"))

/** `integrations-conformance listen …`: runs until Ctrl-C (0) or until it cannot go on (2). */
export const listen = async (argv: ReadonlyArray<string>, env: NodeJS.ProcessEnv): Promise<number> => {
  const note = (line: string) => void process.stderr.write(`listen: ${line}\n`)
  let options: ListenOptions
  try {
    const parsed = optionsOf(argv, env)
    if (parsed === "help") {
      process.stdout.write(LISTEN_HELP)
      return 0
    }
    options = parsed
  } catch (error) {
    if (!isUsageProblem(error)) throw error
    note(`${(error as Error).message} (see listen --help)`)
    return 2
  }

  const stop = new AbortController()
  const onSignal = () => stop.abort()
  process.once("SIGINT", onSignal)
  process.once("SIGTERM", onSignal)
  const tally: Tally = { delivered: 0, skipped: 0 }
  const out: Output = { event: (line) => void process.stdout.write(`${line}\n`), note }

  note(`following ${urlOf(options.baseUrl, EVENTS_PATH).href} with the key ${maskKey(options.apiKey)}`)
  note(
    options.secretFrom === "option"
      ? "signing with the secret given by --secret"
      : options.secretFrom === "environment"
      ? `signing with the secret in ${SECRET_VARIABLE} (…${options.secret.slice(-4)})`
      : `signing secret: ${options.secret}  (your receiver's ${SECRET_VARIABLE}; export it as ${SECRET_VARIABLE} here too, or pass --secret, to keep it across runs)`
  )
  try {
    return await follow(options, deployment(options, stop.signal), out, tally, stop.signal)
  } catch (error) {
    if (stop.signal.aborted) {
      note(`stopped: ${tally.delivered} delivered, ${tally.skipped} skipped`)
      return 0
    }
    note(error instanceof ListenError || error instanceof Unavailable ? error.message : describeError(error))
    return 2
  } finally {
    process.off("SIGINT", onSignal)
    process.off("SIGTERM", onSignal)
  }
}
