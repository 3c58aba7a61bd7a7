/**
 * A failure's reproduction with the setup it depends on. The request that shows a failure rarely stands alone: a
 * payout is created for a user whose KYC an OTP send and verify approved, a confirmation names the payout an earlier
 * request created, a reused txHash matters because an earlier confirmation used it. Pasted on its own against a
 * fresh deployment, its curl shows needs_kyc or a 404 instead of the failure. So the reproduction is a bash script:
 * the earlier requests of the scenario the failing one depends on, in their order, then the failing request, with
 * the ids one answer hands to the next carried in shell variables (`payoutId_2=$(curl ... | node -pe ...)`).
 *
 * Dependencies, found in the scenario's recorded exchanges (answered 2xx) before the failing one:
 * - an id an earlier answer produced (payoutId, intentId, quoteId, id) that the request uses: the request that
 *   produced it first (captured, and substituted wherever it is used later);
 * - a txHash an earlier answer recorded (a confirmation) that the request sends again, in any letter case: that
 *   request;
 * - an Idempotency-Key the request sends that an earlier request sent: that request (the one the key replays);
 * - a wallet address the request names, whose KYC an earlier OTP verify approved: that OTP send and verify (the
 *   verify's code taken from the send's debugCode, as the kit did); for a verify, the send before it.
 * Each dependency's own dependencies come along.
 */
import { CURL_PREFIX } from "./curl.ts"
import type { Exchange } from "./http.ts"

/** Server-made ids: captured from the answer and passed on in a shell variable. */
const ID_FIELDS = ["payoutId", "intentId", "quoteId", "id"] as const
/** Values the kit sent that an answer records: the request that recorded them must come first. */
const STATE_FIELDS = ["txHash", "feeTxHash"] as const
const MAX_SETUP = 15

const ADDRESS = /0x[0-9a-fA-F]{40}(?![0-9a-fA-F])/g

interface Step {
  readonly exchange: Exchange
  readonly seq: number
}

const objectOf = (value: unknown): Readonly<Record<string, unknown>> =>
  value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {}

const requestJson = (exchange: Exchange): Readonly<Record<string, unknown>> => {
  try {
    return objectOf(JSON.parse(exchange.request.body ?? ""))
  } catch {
    return {}
  }
}

const pathOf = (exchange: Exchange) => new URL(exchange.request.url).pathname
const isOtpSend = (exchange: Exchange) =>
  exchange.request.method === "POST" && pathOf(exchange).endsWith("/kyc/otp/send")
const isOtpVerify = (exchange: Exchange) =>
  exchange.request.method === "POST" && pathOf(exchange).endsWith("/kyc/otp/verify")
const userOf = (exchange: Exchange) => {
  const user = requestJson(exchange)["userAddress"]
  return typeof user === "string" ? user.toLowerCase() : undefined
}
const idempotencyKeyOf = (exchange: Exchange) =>
  Object.entries(exchange.request.headers).find(([name]) => name.toLowerCase() === "idempotency-key")?.[1]

/** Distinctive enough to be found in another request without matching by chance. */
const isToken = (value: unknown): value is string => typeof value === "string" && /^[A-Za-z0-9_.:-]{6,}$/.test(value)

interface Capture {
  readonly variable: string
  readonly field: string
  readonly value: string
}

/**
 * The reproduction script of `target` given the scenario's earlier exchanges (`history`, answered 2xx, in the order
 * they were made, with their sequence numbers), or undefined when the target depends on none of them.
 */
export const reproduction = (target: Exchange, targetSeq: number, history: ReadonlyArray<Step>): string | undefined => {
  const before = (seq: number) => history.filter((step) => step.seq < seq)
  const needed = new Map<Exchange, Step>()
  const captures = new Map<Exchange, Capture>()
  /** The send whose debugCode a verify used: the verify's code comes from that capture. */
  const codeFrom = new Map<Exchange, Exchange>()

  const need = (step: Step): boolean => {
    if (needed.has(step.exchange) || step.exchange === target) return false
    needed.set(step.exchange, step)
    return true
  }

  const sendBefore = (user: string, seq: number) =>
    before(seq).filter((step) => isOtpSend(step.exchange) && userOf(step.exchange) === user).at(-1)

  const dependenciesOf = (exchange: Exchange, seq: number): ReadonlyArray<Step> => {
    const text = exchange.curl
    const found: Array<Step> = []
    const earlier = before(seq)
    for (const field of [...ID_FIELDS, ...STATE_FIELDS]) {
      const producers = new Map<string, Step>()
      for (const step of earlier) {
        const value = objectOf(step.exchange.response?.json)[field]
        if (isToken(value) && !producers.has(value)) producers.set(value, step)
      }
      for (const [value, step] of producers) {
        // ids are case-sensitive; a txHash is the same in any letter case (DESIGN §3)
        const used = (ID_FIELDS as ReadonlyArray<string>).includes(field)
          ? text.includes(value)
          : text.toLowerCase().includes(value.toLowerCase())
        if (!used) continue
        found.push(step)
        if ((ID_FIELDS as ReadonlyArray<string>).includes(field) && !captures.has(step.exchange)) {
          captures.set(step.exchange, { variable: `${field}_${step.seq}`, field, value })
        }
      }
    }
    const key = idempotencyKeyOf(exchange)
    if (key !== undefined) {
      const first = earlier.find((step) =>
        idempotencyKeyOf(step.exchange) === key && step.exchange.request.url === exchange.request.url
      )
      if (first !== undefined) found.push(first)
    }
    const users = new Set([...text.matchAll(ADDRESS)].map((match) => match[0].toLowerCase()))
    for (const user of users) {
      if (isOtpSend(exchange) && userOf(exchange) === user) continue
      if (isOtpVerify(exchange) && userOf(exchange) === user) {
        const send = sendBefore(user, seq)
        if (send !== undefined) found.push(send)
        continue
      }
      const verify = earlier.filter((step) => isOtpVerify(step.exchange) && userOf(step.exchange) === user).at(-1)
      if (verify === undefined) continue
      found.push(verify)
    }
    if (isOtpVerify(exchange)) {
      const send = sendBefore(userOf(exchange) ?? "", seq)
      const debugCode = objectOf(send?.exchange.response?.json)["debugCode"]
      if (send !== undefined && typeof debugCode === "string" && requestJson(exchange)["code"] === debugCode) {
        codeFrom.set(exchange, send.exchange)
        if (!captures.has(send.exchange)) {
          captures.set(send.exchange, { variable: `debugCode_${send.seq}`, field: "debugCode", value: debugCode })
        }
      }
    }
    return found
  }

  const queue: Array<Step> = [{ exchange: target, seq: targetSeq }]
  for (let step = queue.shift(); step !== undefined; step = queue.shift()) {
    for (const dependency of dependenciesOf(step.exchange, step.seq)) if (need(dependency)) queue.push(dependency)
  }
  if (needed.size === 0) return undefined

  const ordered = [...needed.values()].sort((a, b) => a.seq - b.seq)
  const shown = ordered.slice(-MAX_SETUP)
  const inScript = new Set(shown.map((step) => step.exchange))
  const substitute = (exchange: Exchange, text: string): string => {
    let out = text
    for (const [producer, capture] of captures) {
      // a producer left out of a long script keeps its value as the run saw it
      if (producer === exchange || capture.field === "debugCode" || !inScript.has(producer)) continue
      out = out.split(capture.value).join(`'"$${capture.variable}"'`)
    }
    const send = codeFrom.get(exchange)
    const capture = send === undefined || !inScript.has(send) ? undefined : captures.get(send)
    if (capture !== undefined) out = out.split(`"code":"${capture.value}"`).join(`"code":"'"$${capture.variable}"'"`)
    return out
  }
  const setupLine = (step: Step, index: number): string => {
    const { exchange } = step
    const request = `${exchange.request.method} ${pathOf(exchange)}`
    const status = exchange.response?.status
    const curl = substitute(exchange, exchange.curl).replace(CURL_PREFIX, "curl -sS -X ")
    const capture = captures.get(exchange)
    const head = `# setup ${index + 1}/${shown.length}: ${request} (${status} in the run)`
    return capture === undefined
      ? `${head}\n${curl.replace("curl -sS -X ", `curl -sS -o /dev/null -w 'setup ${index + 1}: %{http_code}\\n' -X `)}`
      : `${head}, its ${capture.field} in $${capture.variable}\n${capture.variable}=$(${curl} | node -pe 'JSON.parse(require("fs").readFileSync(0, "utf8")).${capture.field}')\necho "setup ${
        index + 1
      }: ${capture.field} $${capture.variable}"`
  }
  return [
    ...(shown.length < ordered.length ? [`# (${ordered.length - shown.length} earlier setup requests left out)`] : []),
    ...shown.map(setupLine),
    "# the request that shows the failure",
    substitute(target, target.curl)
  ].join("\n")
}
