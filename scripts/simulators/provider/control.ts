/**
 * Control endpoints under /__sim (never under /v0; no auth, loopback only): the public key, runtime config,
 * KYC decisions, forced transfer states, off-chain deposits, fault switches, and the logs tests wait on
 * (`/__sim/events`, `/__sim/requests`, `/__sim/watcher`).
 */
import { randomUUID } from "node:crypto"
import type { IncomingMessage, ServerResponse } from "node:http"
import { isDecimal, toUnits } from "./amounts.ts"
import type { Answer, SimulatorContext } from "./context.ts"
import { match, parseJson, readBody, route, type Route, sendJson, sendText } from "./http.ts"
import { isTransferState, noFaults, type RefundRecord, TRANSFER_STATES } from "./state.ts"
import type { SentEvent } from "./webhooks.ts"

interface ControlRequest {
  readonly ctx: SimulatorContext
  readonly url: URL
  readonly body: Record<string, unknown>
}

type ControlAnswer = Answer | { readonly status: number; readonly text: string; readonly contentType: string }
type Handler = (request: ControlRequest, params: ReadonlyArray<string>) => ControlAnswer

const error = (status: number, message: string): Answer => ({ status, body: { error: message } })

/** A non-negative integer field with a default, or an error message. */
const count = (body: Record<string, unknown>, key: string, fallback: number): number | string => {
  const value = body[key] ?? fallback
  return typeof value === "number" && Number.isInteger(value) && value >= 0
    ? value
    : `${key} must be a non-negative integer`
}

const eventJson = (event: SentEvent, includeBody: boolean) => {
  const { body, ...rest } = event
  return includeBody ? { ...rest, body } : rest
}

const publicKey: Handler = ({ ctx }) => ({
  status: 200,
  text: ctx.webhooks.publicKeyPem,
  contentType: "application/x-pem-file"
})

const configView = (ctx: SimulatorContext) => ({
  webhook_url: ctx.state.webhookUrl,
  rates: ctx.state.rates,
  step_delay_ms: ctx.state.stepDelayMs,
  token_decimals: ctx.decimals,
  minimum_cop: ctx.minimumCop,
  require_approved_customer: ctx.requireApprovedCustomer
})

const getConfig: Handler = ({ ctx }) => ({ status: 200, body: configView(ctx) })

const setConfig: Handler = ({ ctx, body }) => {
  const { webhook_url, rates, step_delay_ms } = body
  if (
    webhook_url !== undefined && webhook_url !== null && (typeof webhook_url !== "string" || !URL.canParse(webhook_url))
  ) {
    return error(400, "webhook_url must be a URL or null")
  }
  if (
    step_delay_ms !== undefined &&
    (typeof step_delay_ms !== "number" || !Number.isInteger(step_delay_ms) || step_delay_ms < 0)
  ) {
    return error(400, "step_delay_ms must be a non-negative integer")
  }
  let nextRates = ctx.state.rates
  if (rates !== undefined) {
    if (typeof rates !== "object" || rates === null) return error(400, "rates must be an object")
    for (const [name, value] of Object.entries(rates)) {
      if (!["midmarket_rate", "buy_rate", "sell_rate"].includes(name) || !isDecimal(value)) {
        return error(400, `rates.${name}: expected midmarket_rate, buy_rate or sell_rate as a decimal string`)
      }
    }
    nextRates = { ...ctx.state.rates, ...(rates as Record<string, string>) }
  }
  if (webhook_url !== undefined) ctx.state.webhookUrl = webhook_url
  if (step_delay_ms !== undefined) ctx.state.stepDelayMs = step_delay_ms
  ctx.state.rates = nextRates
  return { status: 200, body: configView(ctx) }
}

const listEvents: Handler = ({ ctx, url }) => {
  const afterSeq = Number(url.searchParams.get("after_seq") ?? "0")
  const includeBody = url.searchParams.get("include_body") === "true"
  const events = ctx.webhooks
    .list({ category: url.searchParams.get("event_category"), objectId: url.searchParams.get("event_object_id") })
    .filter((event) => event.seq > afterSeq)
    .map((event) => eventJson(event, includeBody))
  return { status: 200, body: { count: events.length, data: events } }
}

const resendEvent: Handler = ({ ctx, body }, [eventId = ""]) => {
  const stale = body["stale"] === true
  const ageMs = count(body, "age_ms", ctx.state.faults.stale.ageMs)
  if (typeof ageMs === "string") return error(400, ageMs)
  const sent = ctx.webhooks.resend(eventId, { staleAgeMs: stale ? ageMs : null })
  return sent === undefined ? error(404, `no event ${eventId} was sent`) : { status: 202, body: eventJson(sent, false) }
}

const listRequests: Handler = ({ ctx }) => ({
  status: 200,
  body: { count: ctx.state.requests.length, data: ctx.state.requests }
})

/** The transfers the simulator holds (filtered by `on_behalf_of` / `client_reference_id`), so a test can count them. */
const listTransfers: Handler = ({ ctx, url }) => {
  const onBehalfOf = url.searchParams.get("on_behalf_of")
  const reference = url.searchParams.get("client_reference_id")
  const transfers = [...ctx.state.transfers.values()]
    .filter((t) =>
      (onBehalfOf === null || t.onBehalfOf === onBehalfOf) && (reference === null || t.clientReferenceId === reference)
    )
    .map((t) => ({
      id: t.id,
      client_reference_id: t.clientReferenceId,
      on_behalf_of: t.onBehalfOf,
      amount: t.amount,
      to_address: t.depositAddress,
      state: t.state,
      created_at: t.createdAt
    }))
  return { status: 200, body: { count: transfers.length, data: transfers } }
}

/** The customers the simulator holds (filtered by `email`), so a test can count them. */
const listCustomers: Handler = ({ ctx, url }) => {
  const email = url.searchParams.get("email")
  const customers = [...ctx.state.customers.values()]
    .filter((c) => email === null || c.email === email)
    .map((c) => ({ id: c.id, email: c.email, kyc_status: c.kycStatus, created_at: c.createdAt }))
  return { status: 200, body: { count: customers.length, data: customers } }
}

const watcher: Handler = ({ ctx }) =>
  ctx.watcher === null ? error(404, "no deposit watcher: start the simulator with an RPC URL and a token address") : {
    status: 200,
    body: ctx.watcher.status()
  }

const approveCustomer: Handler = ({ ctx }, [id = ""]) => {
  const customer = ctx.state.customers.get(id)
  if (customer === undefined) return error(404, `no customer ${id}`)
  const sent = ctx.lifecycle.approveCustomer(customer)
  return {
    status: 200,
    body: { customer_id: id, kyc_status: customer.kycStatus, event_ids: sent.map((e) => e.event_id) }
  }
}

const rejectCustomer: Handler = ({ ctx, body }, [id = ""]) => {
  const customer = ctx.state.customers.get(id)
  if (customer === undefined) return error(404, `no customer ${id}`)
  const reasons = body["reasons"] ?? ["Identity could not be verified"]
  if (!Array.isArray(reasons) || !reasons.every((r) => typeof r === "string")) {
    return error(400, "reasons must be strings")
  }
  const sent = ctx.lifecycle.rejectCustomer(customer, reasons)
  return {
    status: 200,
    body: { customer_id: id, kyc_status: customer.kycStatus, event_ids: sent.map((e) => e.event_id) }
  }
}

const page = (title: string, text: string): ControlAnswer => ({
  status: 200,
  text: `<!doctype html><title>${title}</title><h1>${title}</h1><p>${text}</p>`,
  contentType: "text/html; charset=utf-8"
})

const kycPage: Handler = ({ ctx }, [id = ""]) =>
  ctx.state.kycLinks.has(id)
    ? page("Simulated KYC", "Decide it with POST /__sim/customers/{customer_id}/approve or /reject.")
    : error(404, `no kyc link ${id}`)

const tosPage: Handler = ({ ctx }, [id = ""]) =>
  ctx.state.kycLinks.has(id)
    ? page("Simulated terms of service", "Accepted together with KYC approval.")
    : error(404, `no kyc link ${id}`)

const receiptPage: Handler = ({ ctx }, [id = ""]) => {
  const transfer = ctx.state.transfers.get(id)
  return transfer === undefined
    ? error(404, `no transfer ${id}`)
    : page("Simulated receipt", `Transfer ${id}: ${transfer.state}`)
}

/** `return_details: { reason }` as Bridge gives it (any reason, known to the service or not), or an error. */
const returnReasonOf = (value: unknown): string | undefined | { readonly error: string } => {
  if (value === undefined) return undefined
  const reason = typeof value === "object" && value !== null ? (value as Record<string, unknown>)["reason"] : undefined
  return typeof reason === "string" && reason.length > 0
    ? reason
    : { error: "return_details must be an object with a non-empty string reason" }
}

/**
 * `refund: { amount, tx_hash? }` (amount a decimal string of whole USDC; tx_hash 0x and 64 hex), or an error; reported
 * as going to the deposit's sender (or the transfer's `from_address` when no deposit was seen).
 */
const refundOf = (
  value: unknown,
  decimals: number,
  toAddress: string
): RefundRecord | undefined | { readonly problem: string } => {
  if (value === undefined) return undefined
  const refund = typeof value === "object" && value !== null ? (value as Record<string, unknown>) : {}
  const { amount, tx_hash } = refund
  const units = isDecimal(amount) ? toUnits(amount, decimals) : undefined
  if (units === undefined) {
    return { problem: `refund.amount must be a decimal string with at most ${decimals} decimals` }
  }
  if (
    tx_hash !== undefined && tx_hash !== null && (typeof tx_hash !== "string" || !/^0x[0-9a-fA-F]{64}$/.test(tx_hash))
  ) {
    return { problem: "refund.tx_hash must be a transaction hash (0x and 64 hex digits) or null" }
  }
  return { units, toAddress, txHash: tx_hash ?? null, error: null }
}

/**
 * Forces a transfer's state; with it, optionally, why it was returned (`return_details: { reason }`) and what was
 * refunded (`refund: { amount, tx_hash }`), which the transfer then carries, as Bridge's does.
 */
const transferState: Handler = ({ ctx, body }, [id = ""]) => {
  const transfer = ctx.state.transfers.get(id)
  if (transfer === undefined) return error(404, `no transfer ${id}`)
  const state = body["state"]
  if (!isTransferState(state)) return error(400, `state must be one of ${TRANSFER_STATES.join(", ")}`)
  const returnReason = returnReasonOf(body["return_details"])
  if (typeof returnReason === "object") return error(400, returnReason.error)
  const refund = refundOf(
    body["refund"],
    ctx.decimals,
    transfer.deposits[0]?.from ?? transfer.source.fromAddress
  )
  if (refund !== undefined && "problem" in refund) return error(400, refund.problem)
  if (returnReason !== undefined) transfer.returnReason = returnReason
  if (refund !== undefined) transfer.refund = refund
  const sent = ctx.lifecycle.force(transfer, state)
  return { status: 200, body: { transfer_id: id, state: transfer.state, event_ids: sent.map((e) => e.event_id) } }
}

/** `{ reason?, refund_fee?, phantom? }`: the transfer fails and its deposit goes back onchain (Lifecycle.fail). */
const failTransfer: Handler = ({ ctx, body }, [id = ""]) => {
  const transfer = ctx.state.transfers.get(id)
  if (transfer === undefined) return error(404, `no transfer ${id}`)
  const { phantom = false, reason = "account_not_found", refund_fee: fee = "0" } = body
  if (typeof reason !== "string" || reason === "") return error(400, "reason must be a non-empty string")
  const feeUnits = typeof fee === "string" ? toUnits(fee, ctx.decimals) : undefined
  if (feeUnits === undefined) {
    return error(400, `refund_fee must be a decimal string with at most ${ctx.decimals} decimals`)
  }
  if (typeof phantom !== "boolean") return error(400, "phantom must be a boolean")
  const sent = ctx.lifecycle.fail(transfer, { reason, feeUnits, phantom })
  if (typeof sent === "string") return error(409, sent)
  return { status: 202, body: { transfer_id: id, state: transfer.state, event_ids: sent.map((e) => e.event_id) } }
}

const emitTransfer: Handler = ({ ctx, body }, [id = ""]) => {
  const transfer = ctx.state.transfers.get(id)
  if (transfer === undefined) return error(404, `no transfer ${id}`)
  const state = body["state"]
  if (!isTransferState(state)) return error(400, `state must be one of ${TRANSFER_STATES.join(", ")}`)
  const sent = ctx.lifecycle.emitAs(transfer, state)
  return { status: 202, body: { transfer_id: id, state: transfer.state, event_ids: sent.map((e) => e.event_id) } }
}

/** Credits a deposit without a chain (the same path the watcher takes); amount defaults to what is missing. */
const depositTransfer: Handler = ({ ctx, body }, [id = ""]) => {
  const transfer = ctx.state.transfers.get(id)
  if (transfer === undefined) return error(404, `no transfer ${id}`)
  const missing = transfer.amountUnits > transfer.receivedUnits ? transfer.amountUnits - transfer.receivedUnits : 0n
  const amount = body["amount"]
  const units = amount === undefined ? missing : typeof amount === "string" ? toUnits(amount, ctx.decimals) : undefined
  if (units === undefined || units <= 0n) {
    return error(400, `amount must be a positive decimal string with at most ${ctx.decimals} decimals`)
  }
  ctx.lifecycle.credit(transfer, { txHash: `sim:${randomUUID()}`, logIndex: 0, from: "simulator", units })
  return {
    status: 200,
    body: { transfer_id: id, state: transfer.state, received_units: transfer.receivedUnits.toString() }
  }
}

const faultsView = (ctx: SimulatorContext) => ({
  ...ctx.state.faults,
  held_events: ctx.webhooks.list().filter((e) => e.held).length
})

const getFaults: Handler = ({ ctx }) => ({ status: 200, body: faultsView(ctx) })

const clearFaults: Handler = ({ ctx }) => {
  ctx.state.faults = noFaults()
  ctx.webhooks.flushHeld()
  return { status: 200, body: faultsView(ctx) }
}

const setErrors: Handler = ({ ctx, body }) => {
  const n = count(body, "count", 1)
  const status = body["status"] ?? 500
  if (typeof n === "string") return error(400, n)
  if (typeof status !== "number" || !Number.isInteger(status) || status < 500 || status > 599) {
    return error(400, "status must be 500-599")
  }
  ctx.state.faults.errors = { remaining: n, status }
  return { status: 200, body: faultsView(ctx) }
}

const setTimeouts: Handler = ({ ctx, body }) => {
  const n = count(body, "count", 1)
  if (typeof n === "string") return error(400, n)
  const hangMs = body["hang_ms"] === undefined ? null : count(body, "hang_ms", 0)
  if (typeof hangMs === "string") return error(400, hangMs)
  const path = body["path"] ?? null
  if (path !== null && (typeof path !== "string" || !path.startsWith("/v0/"))) {
    return error(400, "path must be a /v0/... path")
  }
  ctx.state.faults.timeouts = { remaining: n, afterProcessing: body["after_processing"] === true, hangMs, path }
  return { status: 200, body: faultsView(ctx) }
}

const setDuplicates: Handler = ({ ctx, body }) => {
  const n = count(body, "count", 1)
  if (typeof n === "string") return error(400, n)
  ctx.state.faults.duplicates = { remaining: n }
  return { status: 200, body: faultsView(ctx) }
}

const setStale: Handler = ({ ctx, body }) => {
  const n = count(body, "count", 1)
  const ageMs = count(body, "age_ms", 11 * 60 * 1000)
  if (typeof n === "string") return error(400, n)
  if (typeof ageMs === "string") return error(400, ageMs)
  ctx.state.faults.stale = { remaining: n, ageMs }
  return { status: 200, body: faultsView(ctx) }
}

const setOutOfOrder: Handler = ({ ctx, body }) => {
  const n = count(body, "count", 2)
  if (typeof n === "string") return error(400, n)
  ctx.state.faults.outOfOrder = { remaining: n }
  return { status: 200, body: faultsView(ctx) }
}

const flush: Handler = ({ ctx }) => ({ status: 200, body: { released: ctx.webhooks.flushHeld() } })

const routes: ReadonlyArray<Route<ControlRequest, ControlAnswer>> = [
  route("GET", "/__sim/public-key", publicKey),
  route("GET", "/__sim/config", getConfig),
  route("POST", "/__sim/config", setConfig),
  route("GET", "/__sim/events", listEvents),
  route("POST", "/__sim/events/:id/resend", resendEvent),
  route("GET", "/__sim/requests", listRequests),
  route("GET", "/__sim/watcher", watcher),
  route("GET", "/__sim/transfers", listTransfers),
  route("GET", "/__sim/customers", listCustomers),
  route("POST", "/__sim/customers/:id/approve", approveCustomer),
  route("POST", "/__sim/customers/:id/reject", rejectCustomer),
  route("GET", "/__sim/kyc/:id", kycPage),
  route("GET", "/__sim/tos/:id", tosPage),
  route("GET", "/__sim/transfers/:id/receipt", receiptPage),
  route("POST", "/__sim/transfers/:id/state", transferState),
  route("POST", "/__sim/transfers/:id/emit", emitTransfer),
  route("POST", "/__sim/transfers/:id/fail", failTransfer),
  route("POST", "/__sim/transfers/:id/deposit", depositTransfer),
  route("GET", "/__sim/faults", getFaults),
  route("DELETE", "/__sim/faults", clearFaults),
  route("POST", "/__sim/faults/errors", setErrors),
  route("POST", "/__sim/faults/timeouts", setTimeouts),
  route("POST", "/__sim/faults/duplicates", setDuplicates),
  route("POST", "/__sim/faults/stale", setStale),
  route("POST", "/__sim/faults/out-of-order", setOutOfOrder),
  route("POST", "/__sim/faults/flush", flush)
]

export const handleControl = async (ctx: SimulatorContext, req: IncomingMessage, res: ServerResponse, url: URL) => {
  const method = req.method ?? "GET"
  const found = match(routes, method, url.pathname)
  if (found === undefined || found === "method") {
    req.resume()
    return sendJson(res, found === undefined ? 404 : 405, { error: `no control route ${method} ${url.pathname}` })
  }
  let body: Record<string, unknown> = {}
  if (method === "POST") {
    const parsed = parseJson(await readBody(req))
    if (
      !parsed.ok ||
      (parsed.value !== undefined &&
        (typeof parsed.value !== "object" || parsed.value === null || Array.isArray(parsed.value)))
    ) {
      return sendJson(res, 400, { error: "body must be a JSON object" })
    }
    body = (parsed.value ?? {}) as Record<string, unknown>
  } else {
    req.resume()
  }
  const result = found.route.handle({ ctx, url, body }, found.params)
  if ("text" in result) return sendText(res, result.status, result.text, result.contentType)
  return sendJson(res, result.status, result.body)
}
