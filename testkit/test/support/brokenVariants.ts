/**
 * Deployments that each break one rule of the contract, built as proxies in front of the real service
 * (./proxy.ts), and the scenarios that must catch each one.
 */
import { randomBytes } from "node:crypto"
import { decodeFunctionData, encodeFunctionData, erc20Abi } from "viem"
import {
  type Interceptor,
  jsonOf,
  type ProxiedRequest,
  requestJson,
  type UpstreamResponse,
  urlParts,
  withJson
} from "./proxy.ts"

export interface BrokenVariant {
  readonly name: string
  /** The scenarios the run selects. */
  readonly grep: ReadonlyArray<string>
  /** Scenarios that must fail against it. */
  readonly caughtBy: ReadonlyArray<string>
  /** Scenarios that must still pass (the kit tells this break from its neighbours). */
  readonly keeps?: ReadonlyArray<string>
  /** What the first catching scenario's failure must say. */
  readonly says: RegExp
  /** A fresh interceptor (its own state) per run. */
  readonly interceptor: () => Interceptor
  /** Needs a server of its own, started with this environment. */
  readonly ownServer?: Readonly<Record<string, string>>
  readonly timeoutMs?: number
}

type Json = Record<string, unknown>

const PAYOUTS = "/api/integrations/breb/payouts"

const route = (request: ProxiedRequest) => {
  const { path, query } = urlParts(request.url)
  return {
    query,
    isCreate: request.method === "POST" && path === PAYOUTS,
    isList: request.method === "GET" && path === PAYOUTS,
    isGet: request.method === "GET" && /\/payouts\/[^/]+$/.test(path),
    isConfirm: request.method === "POST" && /\/payouts\/[^/]+\/confirm$/.test(path),
    payoutId: /\/payouts\/([^/]+)/.exec(path)?.[1],
    isQuote: request.method === "GET" && path.endsWith("/breb/quote"),
    isOtpSend: path.endsWith("/kyc/otp/send"),
    isOtpVerify: path.endsWith("/kyc/otp/verify"),
    isKycCustomer: request.method === "GET" && /\/kyc\/customers\/[^/]+$/.test(path),
    isWebhook: path.endsWith("/webhooks/provider")
  }
}

const json = (response: UpstreamResponse): Json => jsonOf(response.body) as Json
const bodyOf = (request: ProxiedRequest): Json => jsonOf(request.body) as Json
const isJson = (response: UpstreamResponse) =>
  (response.headers["content-type"] ?? "").includes("json") && response.body.length > 0
const freshHash = () => `0x${randomBytes(32).toString("hex")}`

/** Rewrites successful JSON answers of the requests `when` picks. */
const rewriteOk = (
  when: (request: ProxiedRequest) => boolean,
  rewrite: (body: Json, request: ProxiedRequest) => Json
): Interceptor => ({
  response: (request, response) =>
    when(request) && response.status < 300 && isJson(response)
      ? withJson(response, rewrite(json(response), request))
      : response
})

/** A confirmation with a hash another payout already used gets a fresh hash upstream, and its own back. */
const reusedHashesAccepted = (matches: (seen: string, now: string) => boolean): Interceptor => {
  const claimed = new Map<string, { readonly hash: string; readonly payoutId: string }>()
  const substituted = new Map<ProxiedRequest, string>()
  return {
    request: (request) => {
      const { isConfirm, payoutId = "" } = route(request)
      if (!isConfirm) return request
      const body = bodyOf(request)
      const hash = typeof body["txHash"] === "string" ? body["txHash"] : ""
      const seen = claimed.get(hash.toLowerCase())
      if (seen === undefined || seen.payoutId === payoutId || !matches(seen.hash, hash)) return request
      const rewritten = requestJson(request, { ...body, txHash: freshHash() })
      substituted.set(rewritten, hash)
      return rewritten
    },
    response: (request, response) => {
      const { isConfirm, payoutId = "" } = route(request)
      if (!isConfirm || response.status !== 200) return response
      const original = substituted.get(request)
      const body = json(response)
      if (original === undefined) {
        claimed.set(String(body["txHash"]).toLowerCase(), { hash: String(bodyOf(request)["txHash"]), payoutId })
        return response
      }
      return withJson(response, { ...body, txHash: original })
    }
  }
}

/** Answers a 404 of one integration with what another integration's key gets. */
const otherTenantsAnswer = async (
  request: ProxiedRequest,
  authorizations: ReadonlyArray<string>,
  forward: (r: ProxiedRequest) => Promise<UpstreamResponse>
) => {
  const others = authorizations.filter((authorization) => authorization !== request.headers["authorization"])
  return Promise.all(
    others.map((authorization) => forward({ ...request, headers: { ...request.headers, authorization } }))
  )
}

const roundedDisplay = (effectiveUsdCop: unknown) =>
  `1 USD = ${(Math.round(Number(effectiveUsdCop) * 100) / 100).toFixed(2)} COP`

export const brokenVariants: ReadonlyArray<BrokenVariant> = [
  {
    name: "replays a different payout for a reused Idempotency-Key",
    grep: ["IDEM-001", "IDEM-003"],
    caughtBy: ["IDEM-001", "IDEM-003"],
    says: /same payout/,
    interceptor: () => {
      const seen = new Set<string>()
      return {
        request: (request) => {
          const key = request.headers["idempotency-key"]
          if (!route(request).isCreate || key === undefined) return request
          if (!seen.has(key)) {
            seen.add(key)
            return request
          }
          const { "idempotency-key": _, ...headers } = request.headers
          return { ...request, headers }
        }
      }
    }
  },
  {
    name: "accepts a txHash that already confirms another payout",
    grep: ["PAYOUT-CONFIRM-003", "PAYOUT-CONFIRM-004", "TENANT-005"],
    caughtBy: ["PAYOUT-CONFIRM-003", "PAYOUT-CONFIRM-004", "TENANT-005"],
    says: /tx_hash_reused/,
    interceptor: () => reusedHashesAccepted(() => true)
  },
  {
    name: "compares txHashes case-sensitively",
    grep: ["PAYOUT-CONFIRM-003", "PAYOUT-CONFIRM-004"],
    caughtBy: ["PAYOUT-CONFIRM-004"],
    keeps: ["PAYOUT-CONFIRM-003"],
    says: /case-insensitively/,
    interceptor: () => reusedHashesAccepted((seen, now) => seen !== now)
  },
  {
    name: "leaks another integration's payout on GET",
    grep: ["TENANT-001"],
    caughtBy: ["TENANT-001"],
    says: /404/,
    interceptor: () => ({
      response: async (request, response, proxy) => {
        if (!route(request).isGet || response.status !== 404) return response
        const answers = await otherTenantsAnswer(request, proxy.authorizations, proxy.forward)
        return answers.find((answer) => answer.status === 200) ?? response
      }
    })
  },
  {
    name: "lists another integration's payouts",
    grep: ["TENANT-003"],
    caughtBy: ["TENANT-003"],
    says: /none of the other's/,
    interceptor: () => ({
      response: async (request, response, proxy) => {
        if (!route(request).isList || response.status !== 200) return response
        const answers = await otherTenantsAnswer(request, proxy.authorizations, proxy.forward)
        const items = [json(response), ...answers.filter((a) => a.status === 200).map(json)].flatMap((page) =>
          page["items"] as Array<unknown>
        )
        return withJson(response, { ...json(response), items })
      }
    })
  },
  {
    name: "returns cached:true on the first quote",
    grep: ["QUOTE-001"],
    caughtBy: ["QUOTE-001"],
    says: /cached:false/,
    ownServer: { RATE_CACHE_TTL_SECONDS: "3600" },
    timeoutMs: 4000,
    interceptor: () => {
      let first = true
      return rewriteOk((request) => route(request).isQuote, (body) => {
        const cached = first ? true : body["cached"]
        first = false
        return { ...body, cached }
      })
    }
  },
  {
    name: "never serves a quote from the cache",
    grep: ["QUOTE-001"],
    caughtBy: ["QUOTE-001"],
    says: /cached:true on the call right after a fetch/,
    interceptor: () => rewriteOk((request) => route(request).isQuote, (body) => ({ ...body, cached: false }))
  },
  {
    name: "answers a bad body with 500",
    grep: ["ERR-003", "ERR-004", "NEG-PAYOUT-CREATE-001", "PAYOUT-019"],
    caughtBy: ["ERR-003", "ERR-004", "NEG-PAYOUT-CREATE-001", "PAYOUT-019"],
    says: /500/,
    interceptor: () => ({
      response: (request, response) =>
        request.method === "POST" && response.status === 400
          ? withJson(response, { error: "internal error" }, 500)
          : response
    })
  },
  {
    name: "drops errorCode from 409 bodies",
    grep: ["PAYOUT-008", "PAYOUT-010"],
    caughtBy: ["PAYOUT-008", "PAYOUT-010"],
    says: /errorCode/,
    interceptor: () => ({
      response: (_, response) => {
        if (response.status !== 409) return response
        const { errorCode: _code, ...rest } = json(response)
        return withJson(response, rest)
      }
    })
  },
  {
    name: "adds _tag to error bodies",
    grep: ["AUTH-003", "PAYOUT-020", "ERR-001"],
    caughtBy: ["AUTH-003", "PAYOUT-020"],
    says: /ErrorBody|_tag|contract/,
    interceptor: () => ({
      response: (_, response) =>
        response.status >= 400 && isJson(response)
          ? withJson(response, { ...json(response), _tag: "HttpError" })
          : response
    })
  },
  {
    name: "shows the full Bre-B key on the receipt",
    grep: ["PAYOUT-004"],
    caughtBy: ["PAYOUT-004"],
    says: /masked/,
    interceptor: () =>
      rewriteOk((request) => route(request).isCreate, (body, request) => ({
        ...body,
        receipt: { ...(body["receipt"] as Json), breBKey: bodyOf(request)["breBKey"] }
      }))
  },
  {
    name: "accepts limit=501",
    grep: ["LIST-003"],
    caughtBy: ["LIST-003"],
    says: /limit/,
    interceptor: () => ({
      request: (request) => {
        const { isList, query } = route(request)
        if (!isList || Number(query.get("limit")) <= 500) return request
        query.set("limit", "500")
        return { ...request, url: `${urlParts(request.url).path}?${query.toString()}` }
      }
    })
  },
  {
    name: "encodes one base unit too many in the deposit calldata",
    grep: ["PAYOUT-005"],
    caughtBy: ["PAYOUT-005"],
    says: /base units/,
    interceptor: () =>
      rewriteOk((request) => route(request).isCreate, (body) => {
        const transaction = body["transaction"] as Json
        const { args } = decodeFunctionData({ abi: erc20Abi, data: transaction["data"] as `0x${string}` })
        const [to, amount] = args as readonly [`0x${string}`, bigint]
        const data = encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [to, amount + 1n] })
        return { ...body, transaction: { ...transaction, data } }
      })
  },
  {
    name: "answers 404 for the quote route",
    grep: ["QUOTE-002"],
    caughtBy: ["QUOTE-002"],
    says: /404/,
    interceptor: () => ({
      response: (request, response) =>
        route(request).isQuote ? withJson(response, { error: "no such endpoint" }, 404) : response
    })
  },
  {
    name: "lets a wrong OTP code pass",
    grep: ["OTP-003", "OTP-004"],
    caughtBy: ["OTP-003", "OTP-004"],
    says: /otp_invalid/,
    interceptor: () => {
      const codes = new Map<string, string>()
      return {
        request: (request) => {
          if (!route(request).isOtpVerify) return request
          const body = bodyOf(request)
          const code = codes.get(String(body["userAddress"]).toLowerCase())
          return code === undefined ? request : requestJson(request, { ...body, code })
        },
        response: (request, response) => {
          if (route(request).isOtpSend && response.status === 200) {
            const body = json(response)
            codes.set(String(body["userAddress"]).toLowerCase(), String(body["debugCode"]))
          }
          return response
        }
      }
    }
  },
  {
    name: "answers a malformed OTP code with a code-less 400",
    grep: ["OTP-003", "OTP-007"],
    caughtBy: ["OTP-007"],
    keeps: ["OTP-003"],
    says: /otp_invalid/,
    interceptor: () => ({
      response: (request, response) =>
        route(request).isOtpVerify && !/^[0-9]{6}$/.test(String(bodyOf(request)["code"])) && response.status === 400
          ? withJson(response, { error: "code: must be 6 digits" }, 400)
          : response
    })
  },
  {
    name: "ignores X-Mock-Scenario on OTP verify",
    grep: ["OTP-002", "OTP-008"],
    caughtBy: ["OTP-008"],
    keeps: ["OTP-002"],
    says: /503/,
    interceptor: () => ({
      request: (request) => {
        if (!route(request).isOtpVerify) return request
        const { ["x-mock-scenario"]: _ignored, ...headers } = request.headers
        return { ...request, headers }
      }
    })
  },
  {
    name: "rounds the display rate to nearest instead of down",
    grep: ["QUOTE-002", "PAYOUT-003"],
    caughtBy: ["QUOTE-002", "PAYOUT-003"],
    says: /rounded down to 2 decimals/,
    interceptor: () =>
      rewriteOk((request) => route(request).isQuote || route(request).isCreate, (body, request) => {
        if (route(request).isQuote) return { ...body, display: roundedDisplay(body["effectiveUsdCop"]) }
        const quote = body["quote"] as Json
        return { ...body, quote: { ...quote, display: roundedDisplay(quote["effectiveUsdCop"]) } }
      })
  },
  {
    name: "treats createdFrom as exclusive",
    grep: ["LIST-002"],
    caughtBy: ["LIST-002"],
    says: /createdFrom/,
    interceptor: () => ({
      request: (request) => {
        const { isList, query } = route(request)
        const from = query.get("createdFrom")
        if (!isList || from === null) return request
        query.set("createdFrom", new Date(Date.parse(from) + 1).toISOString())
        return { ...request, url: `${urlParts(request.url).path}?${query.toString()}` }
      }
    })
  },
  {
    name: "repeats an item across pages and drops another",
    grep: ["LIST-004"],
    caughtBy: ["LIST-004"],
    says: /page/,
    interceptor: () => {
      let previousLast: unknown
      return rewriteOk((request) => route(request).isList, (body, request) => {
        const items = body["items"] as Array<unknown>
        const shown = route(request).query.has("cursor") && previousLast !== undefined && items.length > 0
          ? [previousLast, ...items.slice(0, -1)]
          : items
        previousLast = items.at(-1)
        return { ...body, items: shown }
      })
    }
  },
  {
    name: "answers payout creation with 200 instead of 201",
    grep: ["PAYOUT-001"],
    caughtBy: ["PAYOUT-001"],
    says: /status 200 is not one the contract declares/,
    interceptor: () => ({
      response: (
        request,
        response
      ) => (route(request).isCreate && response.status === 201 ? { ...response, status: 200 } : response)
    })
  },
  {
    name: "accepts an unsigned provider webhook",
    grep: ["WEBHOOK-001"],
    caughtBy: ["WEBHOOK-001"],
    says: /invalid_webhook_signature/,
    interceptor: () => ({
      response: (request, response) =>
        route(request).isWebhook && response.status === 401
          ? withJson(response, { received: true, duplicate: false }, 200)
          : response
    })
  },
  {
    name: "never completes a confirmed payout",
    grep: ["LIFECYCLE-001"],
    caughtBy: ["LIFECYCLE-001"],
    says: /completed/,
    // the scenario's poll gives up shortly before this deadline; the work before it (a KYC, a payout, a confirm) must
    // fit with room on a busy machine, where 3 s was once not enough to create the payout
    timeoutMs: 10_000,
    interceptor: () =>
      rewriteOk((request) => route(request).isGet, (body) =>
        body["status"] === "completed"
          ? {
            ...body,
            status: "processing",
            receipt: { ...(body["receipt"] as Json), status: "processing", completedAt: null }
          }
          : body)
  },
  {
    name: "charges a total that is not X + F",
    grep: ["PAYOUT-003"],
    caughtBy: ["PAYOUT-003"],
    says: /T = X \+ F/,
    interceptor: () =>
      rewriteOk((request) => route(request).isCreate, (body) => {
        const total = (Number(body["sourceAmount"]) + 0.000001).toFixed(6)
        return {
          ...body,
          sourceAmount: total,
          receipt: { ...(body["receipt"] as Json), totalPaid: { amount: total, currency: "USD" } }
        }
      })
  },
  {
    name: "skips a number in a payout's event sequence in GET events",
    grep: ["EVT-011"],
    caughtBy: ["EVT-011"],
    says: /sequence 1, 2, 3/,
    interceptor: () =>
      rewriteOk(
        (request) => request.method === "GET" && urlParts(request.url).path === "/api/integrations/events",
        (body) => ({
          ...body,
          items: (body["items"] as Array<Json>).map((event) =>
            event["type"] === "payout.processing" || event["type"] === "payout.completed"
              ? { ...event, sequence: Number(event["sequence"]) + 1 }
              : event
          )
        })
      )
  },
  {
    name: "matches `mismatch` only in lower case",
    grep: ["PAYOUT-009"],
    caughtBy: ["PAYOUT-009"],
    says: /destination_mismatch/,
    interceptor: () => ({
      request: (request) => {
        if (!route(request).isCreate) return request
        const body = bodyOf(request)
        const name = String(body["accountOwnerName"])
        return /mismatch/i.test(name) && !name.includes("mismatch")
          ? requestJson(request, { ...body, accountOwnerName: name.replace(/mismatch/i, "Match") })
          : request
      }
    })
  },
  {
    name: "shows a KYC customer's e-mail in full",
    grep: ["KYC-001"],
    caughtBy: ["KYC-001"],
    says: /masked/,
    interceptor: () =>
      rewriteOk((request) => route(request).isKycCustomer, (body) => ({
        ...body,
        email: String(body["email"]).replace("***", "onformance")
      }))
  },
  {
    name: "answers a KYC customer no OTP was sent to, or another integration's",
    grep: ["KYC-002", "TENANT-006", "KYC-001"],
    caughtBy: ["KYC-002", "TENANT-006"],
    keeps: ["KYC-001"],
    says: /404/,
    interceptor: () => ({
      response: (request, response) => {
        const userAddress = /\/kyc\/customers\/([^/?]+)/.exec(request.url)?.[1] ?? ""
        return route(request).isKycCustomer && response.status === 404
          ? withJson(response, {
            userAddress,
            kycStatus: "approved",
            kycUrl: null,
            email: "c***@example.com",
            createdAt: "2026-01-01T00:00:00.000Z",
            updatedAt: "2026-01-01T00:00:00.000Z"
          }, 200)
          : response
      }
    })
  },
  {
    name: "answers otp_invalid to a verify repeated for an approved customer",
    grep: ["KYC-003", "OTP-002"],
    caughtBy: ["KYC-003"],
    keeps: ["OTP-002"],
    says: /approved customer/,
    interceptor: () => {
      const approved = new Set<string>()
      return {
        response: (request, response) => {
          if (!route(request).isOtpVerify) return response
          const userAddress = String(bodyOf(request)["userAddress"]).toLowerCase()
          if (response.status !== 200) return response
          if (!approved.has(userAddress)) {
            approved.add(userAddress)
            return response
          }
          return withJson(response, { error: "no active OTP for this userAddress", errorCode: "otp_invalid" }, 400)
        }
      }
    }
  },
  {
    name: "ignores a payouts list's breBKeyLast4 filter",
    grep: ["LIST-006", "LIST-004"],
    caughtBy: ["LIST-006"],
    keeps: ["LIST-004"],
    says: /filters narrow the list/,
    interceptor: () => withoutQueryParameter((request) => route(request).isList, "breBKeyLast4")
  },
  {
    name: "ignores GET events' resourceId filter",
    grep: ["EVT-012", "EVT-010"],
    caughtBy: ["EVT-012"],
    keeps: ["EVT-010"],
    says: /one resource's events/,
    interceptor: () =>
      withoutQueryParameter(
        (request) => request.method === "GET" && urlParts(request.url).path === "/api/integrations/events",
        "resourceId"
      )
  },
  {
    name: "records no excerpt of the receiver's answer",
    grep: ["EVT-013", "EVT-010"],
    caughtBy: ["EVT-013"],
    keeps: ["EVT-010"],
    says: /responseExcerpt/,
    interceptor: () =>
      rewriteOk(
        (request) => request.method === "GET" && /\/api\/integrations\/events\/[^/]+$/.test(urlParts(request.url).path),
        (body) => ({
          ...body,
          attempts: (body["attempts"] as Array<Json>).map((attempt) => ({ ...attempt, responseExcerpt: null }))
        })
      )
  },
  {
    name: "answers a disabled endpoint without disabling it",
    grep: ["EVT-014", "EVT-003"],
    caughtBy: ["EVT-014"],
    keeps: ["EVT-003"],
    says: /disabled/,
    interceptor: () => ({
      request: (request) => {
        if (request.method !== "PATCH") return request
        const { status: _ignored, ...rest } = bodyOf(request)
        return requestJson(request, rest)
      },
      response: (request, response) =>
        request.method === "PATCH" && response.status === 200 && isJson(response)
          ? withJson(response, { ...json(response), status: "disabled", disabledReason: "disabled by the integration" })
          : response
    })
  },
  {
    name: "marks no API key as the current one",
    grep: ["KEYS-001", "TENANT-009"],
    caughtBy: ["KEYS-001", "TENANT-009"],
    says: /current/,
    interceptor: () =>
      rewriteOk(
        (request) => request.method === "GET" && urlParts(request.url).path === "/api/integrations/api-keys",
        (body) => ({
          ...body,
          items: (body["items"] as Array<Json>).map((key) => ({ ...key, current: false }))
        })
      )
  }
]

/** Forwards the requests `when` picks without the query parameter `name`. */
const withoutQueryParameter = (when: (request: ProxiedRequest) => boolean, name: string): Interceptor => ({
  request: (request) => {
    if (!when(request)) return request
    const url = new URL(request.url, "http://proxy")
    url.searchParams.delete(name)
    return { ...request, url: `${url.pathname}${url.search}` }
  }
})
