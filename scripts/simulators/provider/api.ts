/**
 * The Bridge API subset under /v0: auth (`Api-Key`), idempotency (`Idempotency-Key` on every POST), the
 * request-level fault switches (5xx, timeouts), then the routes.
 */
import { createHash, randomUUID } from "node:crypto"
import type { IncomingMessage, ServerResponse } from "node:http"
import { generatePrivateKey, privateKeyToAddress } from "viem/accounts"
import { toUnits } from "./amounts.ts"
import type { Answer, SimulatorContext } from "./context.ts"
import { canonicalJson, match, parseJson, readBody, route, type Route, sendJson, sendRaw } from "./http.ts"
import {
  bridgeError,
  copCentsOf,
  cryptoReturnPoliciesResponse,
  ErrorCodes,
  exchangeRatesResponse,
  externalAccountResponse,
  kycLinkResponse,
  customerResponse,
  ownerNameMatches,
  ownerNameMismatchError,
  parseExternalAccountRequest,
  parseKycLinkRequest,
  parseTransferRequest,
  transferResponse
} from "./shapes.ts"
import { nowIso, type RequestLogEntry } from "./state.ts"

const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000

interface ApiRequest {
  readonly ctx: SimulatorContext
  readonly url: URL
  readonly body: unknown
}

type Handler = (request: ApiRequest, params: ReadonlyArray<string>) => Answer

const notFound = (what: string, key?: string): Answer => ({
  status: 404,
  body: key === undefined
    ? bridgeError(ErrorCodes.notFound, `${what} not found`)
    : bridgeError(ErrorCodes.notFound, `${what} not found`, { location: "body", key })
})

const invalid = (key: string, message: string): Answer => ({
  status: 400,
  body: bridgeError(ErrorCodes.invalidParameters, message, { location: "body", key })
})

const exchangeRates: Handler = ({ ctx, url }) => {
  const from = url.searchParams.get("from")?.toLowerCase()
  const to = url.searchParams.get("to")?.toLowerCase()
  if (from !== "usd" || to !== "cop") {
    return {
      status: 400,
      body: bridgeError(ErrorCodes.invalidParameters, "only from=usd&to=cop is supported", {
        location: "query",
        key: "from"
      })
    }
  }
  return { status: 200, body: exchangeRatesResponse(ctx.state.rates) }
}

const createKycLink: Handler = ({ ctx, body }) => {
  const parsed = parseKycLinkRequest(body)
  if (!parsed.ok) return { status: 400, body: parsed.error }
  const createdAt = nowIso()
  const customer = {
    id: randomUUID(),
    fullName: parsed.value.fullName,
    email: parsed.value.email,
    type: parsed.value.type,
    kycStatus: "not_started" as const,
    tosStatus: "pending" as const,
    copEndorsement: "incomplete" as const,
    rejectionReasons: [],
    createdAt,
    updatedAt: createdAt
  }
  const link = { id: randomUUID(), customerId: customer.id, createdAt }
  ctx.state.customers.set(customer.id, customer)
  ctx.state.kycLinks.set(link.id, link)
  return { status: 201, body: kycLinkResponse(link, customer, ctx.baseUrl()) }
}

const getKycLink: Handler = ({ ctx }, [id = ""]) => {
  const link = ctx.state.kycLinks.get(id)
  const customer = link && ctx.state.customers.get(link.customerId)
  if (link === undefined || customer === undefined) return notFound("kyc link")
  return { status: 200, body: kycLinkResponse(link, customer, ctx.baseUrl()) }
}

const getCustomer: Handler = ({ ctx }, [id = ""]) => {
  const customer = ctx.state.customers.get(id)
  if (customer === undefined) return notFound("customer")
  return { status: 200, body: customerResponse(customer) }
}

const BANKS = ["Bancolombia", "Banco de Bogotá", "Davivienda", "Nequi", "Banco de Occidente", "BBVA Colombia"]

const createExternalAccount: Handler = ({ ctx, body }, [customerId = ""]) => {
  const customer = ctx.state.customers.get(customerId)
  if (customer === undefined) return notFound("customer")
  const parsed = parseExternalAccountRequest(body)
  if (!parsed.ok) return { status: 400, body: parsed.error }
  if (!ownerNameMatches(parsed.value.accountOwnerName)) return { status: 422, body: ownerNameMismatchError() }
  const digest = createHash("sha256").update(parsed.value.breBKey).digest()
  const account = {
    id: randomUUID(),
    customerId,
    accountOwnerName: parsed.value.accountOwnerName,
    accountOwnerType: parsed.value.accountOwnerType,
    breBKey: parsed.value.breBKey,
    bankName: BANKS[digest[0]! % BANKS.length]!,
    documentLast4: String(digest.readUInt16BE(1) % 10000).padStart(4, "0"),
    createdAt: nowIso()
  }
  ctx.state.externalAccounts.set(account.id, account)
  return { status: 201, body: externalAccountResponse(account) }
}

const getExternalAccount: Handler = ({ ctx }, [customerId = "", accountId = ""]) => {
  const account = ctx.state.externalAccounts.get(accountId)
  if (account === undefined || account.customerId !== customerId) return notFound("external account")
  return { status: 200, body: externalAccountResponse(account) }
}

const createTransfer: Handler = ({ ctx, body }) => {
  const parsed = parseTransferRequest(body)
  if (!parsed.ok) return { status: 400, body: parsed.error }
  const request = parsed.value
  const customer = ctx.state.customers.get(request.onBehalfOf)
  if (customer === undefined) return notFound("customer", "on_behalf_of")
  const account = ctx.state.externalAccounts.get(request.destination.externalAccountId)
  if (account === undefined || account.customerId !== customer.id) {
    return notFound("external account", "destination.external_account_id")
  }
  if (
    ctx.requireApprovedCustomer &&
    (customer.kycStatus !== "approved" || customer.tosStatus !== "approved" || customer.copEndorsement !== "approved")
  ) {
    return {
      status: 422,
      body: bridgeError(
        ErrorCodes.customerNotApproved,
        "the customer's KYC, terms of service and COP endorsement must be approved",
        {
          location: "body",
          key: "on_behalf_of"
        }
      )
    }
  }
  const amountUnits = toUnits(request.amount, ctx.decimals)
  if (amountUnits === undefined) return invalid("amount", `amount has more than ${ctx.decimals} decimals`)
  const minimumCents = toUnits(ctx.minimumCop, 2) ?? 0n
  if (copCentsOf(amountUnits, ctx.decimals, ctx.state.rates.sell_rate) < minimumCents) {
    return {
      status: 422,
      body: bridgeError(ErrorCodes.amountBelowMinimum, `the offramp minimum is ${ctx.minimumCop} COP`, {
        location: "body",
        key: "amount"
      })
    }
  }
  const createdAt = nowIso()
  const transfer = {
    id: randomUUID(),
    clientReferenceId: request.clientReferenceId,
    onBehalfOf: customer.id,
    amount: request.amount,
    amountUnits,
    developerFeePercent: request.developerFeePercent,
    source: request.source,
    destination: request.destination,
    depositAddress: privateKeyToAddress(generatePrivateKey()),
    state: "awaiting_funds" as const,
    receivedUnits: 0n,
    deposits: [],
    receipt: null,
    createdAt,
    updatedAt: createdAt
  }
  ctx.state.transfers.set(transfer.id, transfer)
  return { status: 201, body: transferResponse(transfer, ctx.decimals, ctx.baseUrl()) }
}

const getTransfer: Handler = ({ ctx }, [id = ""]) => {
  const transfer = ctx.state.transfers.get(id)
  if (transfer === undefined) return notFound("transfer")
  return { status: 200, body: transferResponse(transfer, ctx.decimals, ctx.baseUrl()) }
}

/**
 * Bridge's transfer deletion: a transfer still awaiting its funds is canceled (its event sent); canceling one already
 * canceled answers it again; any other state is refused (409: the funds arrived, the transfer goes on).
 */
const cancelTransfer: Handler = ({ ctx }, [id = ""]) => {
  const transfer = ctx.state.transfers.get(id)
  if (transfer === undefined) return notFound("transfer")
  if (transfer.state === "awaiting_funds") ctx.lifecycle.force(transfer, "canceled")
  else if (transfer.state !== "canceled") {
    return {
      status: 409,
      body: bridgeError("transfer_not_cancelable", `a transfer in state ${transfer.state} cannot be canceled`)
    }
  }
  return { status: 200, body: transferResponse(transfer, ctx.decimals, ctx.baseUrl()) }
}

const cryptoReturnPolicies: Handler = ({ ctx }) => ({
  status: 200,
  body: cryptoReturnPoliciesResponse(ctx.returnPolicy, "ethereum")
})

const routes: ReadonlyArray<Route<ApiRequest, Answer>> = [
  route("GET", "/v0/exchange_rates", exchangeRates),
  route("GET", "/v0/crypto_return_policies", cryptoReturnPolicies),
  route("POST", "/v0/kyc_links", createKycLink),
  route("GET", "/v0/kyc_links/:id", getKycLink),
  route("GET", "/v0/customers/:id", getCustomer),
  route("POST", "/v0/customers/:id/external_accounts", createExternalAccount),
  route("GET", "/v0/customers/:id/external_accounts/:accountId", getExternalAccount),
  route("POST", "/v0/transfers", createTransfer),
  route("GET", "/v0/transfers/:id", getTransfer),
  route("DELETE", "/v0/transfers/:id", cancelTransfer)
]

/** Keeps the response open (the timeout switch) until the client leaves or the simulator's own bound passes. */
const hang = (ctx: SimulatorContext, req: IncomingMessage, res: ServerResponse, hangMs: number) => {
  const end = () => {
    clearTimeout(timer)
    ctx.hangs.delete(end)
    if (!res.destroyed) sendJson(res, 504, bridgeError(ErrorCodes.timeout, "the simulator timed this request out"))
  }
  const timer = setTimeout(end, hangMs)
  ctx.hangs.add(end)
  res.once("close", () => {
    clearTimeout(timer)
    ctx.hangs.delete(end)
  })
  req.resume()
}

const answer = (
  res: ServerResponse,
  entry: RequestLogEntry,
  status: number,
  body: string,
  headers: Record<string, string> = {}
) => {
  entry.status = status
  sendRaw(res, status, body, headers)
}

export const handleApi = async (ctx: SimulatorContext, req: IncomingMessage, res: ServerResponse, url: URL) => {
  const method = req.method ?? "GET"
  const idempotencyKey = req.headers["idempotency-key"]
  const key = typeof idempotencyKey === "string" && idempotencyKey !== "" ? idempotencyKey : null
  const entry = ctx.state.logRequest({ method, path: url.pathname + url.search, idempotencyKey: key })
  const faults = ctx.state.faults

  if (faults.errors.remaining > 0) {
    faults.errors.remaining--
    entry.fault = "error"
    req.resume()
    return answer(
      res,
      entry,
      faults.errors.status,
      JSON.stringify(bridgeError(ErrorCodes.serverError, "simulated server error"))
    )
  }
  let hangAfter: number | null = null
  if (faults.timeouts.remaining > 0 && (faults.timeouts.path === null || faults.timeouts.path === url.pathname)) {
    faults.timeouts.remaining--
    entry.fault = "timeout"
    const hangMs = faults.timeouts.hangMs ?? ctx.hangTimeoutMs
    if (!faults.timeouts.afterProcessing) return hang(ctx, req, res, hangMs)
    hangAfter = hangMs
  }
  const finish = (status: number, body: string, headers: Record<string, string> = {}) => {
    if (hangAfter !== null) {
      entry.status = status
      return hang(ctx, req, res, hangAfter)
    }
    answer(res, entry, status, body, headers)
  }

  if (req.headers["api-key"] !== ctx.apiKey) {
    req.resume()
    const message = req.headers["api-key"] === undefined ? "missing Api-Key header" : "invalid API key"
    return finish(
      401,
      JSON.stringify(bridgeError(ErrorCodes.unauthorized, message, { location: "header", key: "Api-Key" }))
    )
  }

  const found = match(routes, method, url.pathname)
  if (found === undefined || found === "method") {
    req.resume()
    return found === undefined
      ? finish(404, JSON.stringify(bridgeError(ErrorCodes.notFound, `no route for ${method} ${url.pathname}`)))
      : finish(
        405,
        JSON.stringify(bridgeError(ErrorCodes.invalidParameters, `${method} is not allowed on ${url.pathname}`))
      )
  }

  let body: unknown = undefined
  let fingerprint = ""
  if (method === "POST") {
    const raw = await readBody(req)
    if (key === null) {
      return finish(
        400,
        JSON.stringify(bridgeError(ErrorCodes.idempotencyKeyMissing, "an Idempotency-Key header is required on POST", {
          location: "header",
          key: "Idempotency-Key"
        }))
      )
    }
    const parsed = parseJson(raw)
    fingerprint = `${method} ${url.pathname} ${parsed.ok ? canonicalJson(parsed.value) : raw}`
    const stored = ctx.state.idempotency.get(key)
    if (stored !== undefined) {
      if (stored.fingerprint === fingerprint && Date.now() - stored.storedAt < IDEMPOTENCY_TTL_MS) {
        entry.replayed = true
        return finish(stored.status, stored.body, { "idempotent-replayed": "true" })
      }
      return finish(
        422,
        JSON.stringify(bridgeError(
          ErrorCodes.idempotencyKeyReused,
          "this Idempotency-Key was already used with a different request (or has expired)",
          { location: "header", key: "Idempotency-Key" }
        ))
      )
    }
    if (!parsed.ok) {
      const error = JSON.stringify(bridgeError(ErrorCodes.invalidJson, "the body is not valid JSON"))
      ctx.state.idempotency.set(key, { fingerprint, status: 400, body: error, storedAt: Date.now() })
      return finish(400, error)
    }
    body = parsed.value
  } else {
    req.resume()
  }

  const result = found.route.handle({ ctx, url, body }, found.params)
  const text = JSON.stringify(result.body)
  if (method === "POST" && key !== null && result.status < 500) {
    ctx.state.idempotency.set(key, { fingerprint, status: result.status, body: text, storedAt: Date.now() })
  }
  return finish(result.status, text)
}
