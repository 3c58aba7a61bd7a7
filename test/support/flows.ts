/**
 * Partner-side flows for the HTTP tests: raw `fetch` calls (wire-exact), KYC, payout creation and
 * confirmation, SQL access, and the expected payout amounts computed independently of src/money with
 * plain bigint arithmetic from the DESIGN §3 formulas.
 */
import { randomBytes } from "node:crypto"
import { SqlClient } from "effect/sql"
import { ErrorBody, type IntegrationId, Payout, PayoutList } from "@cop-integrations/contracts"
import { type BigDecimal, Effect, Schema } from "effect"
import { generatePrivateKey, privateKeyToAddress } from "viem/accounts"
import { expect, vi } from "vitest"
import type { Lifecycle } from "../../src/payouts/Lifecycle.ts"
import type { ListPage } from "./follower.ts"
import type { TestServer } from "./server.ts"

export const BREB = "/api/integrations/breb"
export const PAYOUTS = `${BREB}/payouts`

// ---------------------------------------------------------------------------------------------- ids

/** A fresh EIP-55 checksummed address. */
export const newAddress = (): `0x${string}` => privateKeyToAddress(generatePrivateKey())

/** A fresh lower-case transaction hash. */
export const newTxHash = (): `0x${string}` => `0x${randomBytes(32).toString("hex")}`

/** Upper-cases the hex digits, keeping the `0x` prefix. */
export const upperHex = (hash: string): string => `0x${hash.slice(2).toUpperCase()}`

/** Alternates the case of the hex letters: a hash no one would send, but the same hash. */
export const mixedHex = (hash: string): string =>
  `0x${[...hash.slice(2)].map((c, i) => (i % 2 === 0 ? c.toUpperCase() : c)).join("")}`

// --------------------------------------------------------------------------------------------- wire

export interface Wire {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  readonly json: unknown
}

export interface CallOptions {
  readonly body?: unknown
  readonly headers?: Record<string, string>
  readonly query?: Record<string, string>
  /**
   * Sends the request again, after the Retry-After it names, while it is answered 503 with Retry-After (as a partner's
   * client would; at most RESENDS_AFTER_503 times). Only for requests a 503 leaves undone, such as "database
   * unavailable; retry shortly".
   */
  readonly resendAfter503?: boolean
}

/** How many times `call` sends a request again that is answered 503 with Retry-After (`resendAfter503`). */
const RESENDS_AFTER_503 = 30

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

type Method = "GET" | "POST" | "PATCH" | "DELETE"

/** One request with `apiKey`, answered as it came on the wire (see `resendAfter503` for a 503 sent again). */
export const call = async (
  baseUrl: string,
  apiKey: string,
  method: Method,
  path: string,
  options: CallOptions = {}
): Promise<Wire> => {
  for (let resends = 0;; resends++) {
    const answer = await send(baseUrl, apiKey, method, path, options)
    const retryAfter = Number(answer.headers.get("retry-after"))
    const resend = options.resendAfter503 === true && answer.status === 503 && retryAfter > 0
    if (!resend || resends === RESENDS_AFTER_503) return answer
    await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000))
  }
}

const send = async (baseUrl: string, apiKey: string, method: Method, path: string, options: CallOptions) => {
  const url = new URL(path, baseUrl)
  for (const [name, value] of Object.entries(options.query ?? {})) url.searchParams.set(name, value)
  const response = await fetch(url, {
    method,
    headers: {
      authorization: `Bearer ${apiKey}`,
      ...(options.body === undefined ? {} : { "content-type": "application/json" }),
      ...options.headers
    },
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) })
  })
  const text = await response.text()
  return { status: response.status, headers: response.headers, text, json: parseJson(text) }
}

/**
 * Asserts an ErrorBody exactly: the status, `{ error }` or `{ error, errorCode }` and no other key.
 * Returns the message.
 */
export const expectError = (wire: Wire, status: number, errorCode?: string): string => {
  expect(wire.status, wire.text).toBe(status)
  expect(wire.headers.get("content-type")).toMatch(/^application\/json/)
  const body = wire.json as Record<string, unknown>
  expect(Object.keys(body).sort(), wire.text).toEqual(errorCode === undefined ? ["error"] : ["error", "errorCode"])
  expect(Schema.is(ErrorBody)(body)).toBe(true)
  expect(typeof body["error"] === "string" && body["error"].length > 0).toBe(true)
  if (errorCode !== undefined) expect(body["errorCode"]).toBe(errorCode)
  return body["error"] as string
}

/** 400 whose message names `field`. */
export const expectBadRequest = (wire: Wire, field: string): string => {
  const message = expectError(wire, 400)
  expect(message).toContain(field)
  return message
}

export const decodePayout = (json: unknown): Payout => Schema.decodeUnknownSync(Payout)(json)
export const decodePayoutList = (json: unknown): PayoutList => Schema.decodeUnknownSync(PayoutList)(json)

/**
 * A 200 (or `status`) whose JSON is the contract's encoding of what it decodes to: no field more, none less, none
 * written otherwise (for answers the service writes as built, without encoding them through `schema` again).
 */
export const expectContractEncoding = <A, I>(
  schema: Schema.Codec<A, I>,
  wire: Pick<Wire, "status" | "text" | "json">,
  status = 200
) => {
  expect(wire.status, wire.text).toBe(status)
  const encoded = Schema.encodeSync(schema)(Schema.decodeUnknownSync(schema)(wire.json))
  expect(wire.json).toEqual(JSON.parse(JSON.stringify(encoded)))
}

/** More pages than any test's list has: a list still going after this many does not end. */
const MAX_PAGES = 100

/**
 * Follows a cursor list to its end, `limit` a page: `list` is called with `query` plus `limit` (and, after the first
 * page, the `nextCursor` it was given) until `nextCursor` is null. Each page's items, in order; no page is over `limit`.
 */
export const pagesOf = async <Item>(
  query: Record<string, string>,
  limit: number,
  list: (query: Record<string, string>) => Promise<ListPage<Item>>
): Promise<ReadonlyArray<ReadonlyArray<Item>>> => {
  const pages: Array<ReadonlyArray<Item>> = []
  let cursor: string | null = null
  do {
    const page: ListPage<Item> = await list({ ...query, limit: String(limit), ...(cursor === null ? {} : { cursor }) })
    expect(page.items.length).toBeLessThanOrEqual(limit)
    pages.push(page.items)
    cursor = page.nextCursor
    expect(pages.length, "pagination must end").toBeLessThanOrEqual(MAX_PAGES)
  } while (cursor !== null)
  return pages
}

/** Every item of a cursor list, following `nextCursor` to the end (see `pagesOf`). */
export const pageAll = async <Item>(
  query: Record<string, string>,
  limit: number,
  list: (query: Record<string, string>) => Promise<ListPage<Item>>
): Promise<ReadonlyArray<Item>> => (await pagesOf(query, limit, list)).flat()

/** The lists' documented order: createdAt ascending, then the id. A comparator for `sort`. */
export const byCreatedThenId =
  <Item extends { readonly createdAt: string }>(idOf: (item: Item) => string) => (a: Item, b: Item): number =>
    a.createdAt === b.createdAt ? (idOf(a) < idOf(b) ? -1 : 1) : Date.parse(a.createdAt) - Date.parse(b.createdAt)

// ---------------------------------------------------------------------------------------------- partners

export interface PayoutBody {
  readonly userAddress: string
  readonly destinationCop: string
  readonly breBKey: string
  readonly accountOwnerName: string
  readonly fromToken?: string
  readonly quoteId?: string
  readonly previewId?: string
}

export interface Partner {
  readonly integrationId: IntegrationId
  readonly apiKey: string
  readonly get: (path: string, query?: Record<string, string>) => Promise<Wire>
  readonly post: (path: string, body: unknown, headers?: Record<string, string>) => Promise<Wire>
  /** Sends and verifies the OTP for `address` (fresh by default): an approved customer. */
  readonly approvedUser: (address?: `0x${string}`) => Promise<`0x${string}`>
  readonly createPayout: (body: PayoutBody, headers?: Record<string, string>) => Promise<Wire>
  /** Creates a payout for `userAddress`, asserts 201 and decodes it. */
  readonly payout: (userAddress: string, overrides?: Partial<PayoutBody>) => Promise<Payout>
  readonly confirm: (payoutId: string, body: unknown, headers?: Record<string, string>) => Promise<Wire>
  readonly getPayout: (payoutId: string) => Promise<Wire>
}

export const payoutBody = (userAddress: string, overrides: Partial<PayoutBody> = {}): PayoutBody => ({
  userAddress,
  destinationCop: "250000",
  breBKey: "@maria2024",
  accountOwnerName: "Maria Perez",
  ...overrides
})

export const newPartner = async (server: TestServer): Promise<Partner> => {
  const { apiKey, integrationId } = await server.newIntegration()
  const get = (path: string, query?: Record<string, string>) =>
    call(server.baseUrl, apiKey, "GET", path, query === undefined ? {} : { query })
  const post = (path: string, body: unknown, headers?: Record<string, string>) =>
    call(server.baseUrl, apiKey, "POST", path, headers === undefined ? { body } : { body, headers })
  const createPayout = (body: PayoutBody, headers?: Record<string, string>) => post(PAYOUTS, body, headers)
  return {
    integrationId,
    apiKey,
    get,
    post,
    approvedUser: async (address = newAddress()) => {
      const sent = await post(`${BREB}/kyc/otp/send`, {
        email: `${address.slice(2, 10)}@example.com`,
        userAddress: address
      })
      expect(sent.status, sent.text).toBe(200)
      const verified = await post(`${BREB}/kyc/otp/verify`, { userAddress: address, code: "123456" })
      expect(verified.status, verified.text).toBe(200)
      expect((verified.json as { kycStatus: unknown }).kycStatus).toBe("approved")
      return address
    },
    createPayout,
    payout: async (userAddress, overrides) => {
      const created = await createPayout(payoutBody(userAddress, overrides))
      expect(created.status, created.text).toBe(201)
      return decodePayout(created.json)
    },
    confirm: (payoutId, body, headers) => post(`${PAYOUTS}/${payoutId}/confirm`, body, headers),
    getPayout: (payoutId) => get(`${PAYOUTS}/${payoutId}`)
  }
}

/** Polls GET /payouts/{id} until `done` holds (bounded), returning every status seen on the way. */
export const pollPayout = async (
  partner: Partner,
  payoutId: string,
  done: (payout: Payout) => boolean,
  timeout = 15_000
): Promise<{ readonly payout: Payout; readonly seen: ReadonlyArray<string> }> => {
  const seen: Array<string> = []
  const payout = await vi.waitFor(async () => {
    const wire = await partner.getPayout(payoutId)
    expect(wire.status, wire.text).toBe(200)
    const current = decodePayout(wire.json)
    if (seen[seen.length - 1] !== current.status) seen.push(current.status)
    if (!done(current)) throw new Error(`payout ${payoutId} is still ${current.status}`)
    return current
  }, { timeout, interval: 10 })
  return { payout, seen }
}

// ---------------------------------------------------------------------------------------------- SQL

type Services = SqlClient.SqlClient | Lifecycle

/**
 * Runs an Effect against the app's services. The harness types `run` with the services it names; the
 * runtime behind it is the whole app (including Lifecycle), so widening the type here is sound.
 */
export const runApp = <A, E>(server: TestServer, effect: Effect.Effect<A, E, Services>): Promise<A> =>
  (server.run as <A1, E1>(e: Effect.Effect<A1, E1, Services>) => Promise<A1>)(effect)

export const sql = <Row extends object>(
  server: TestServer,
  query: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<Row>, unknown>
): Promise<ReadonlyArray<Row>> => runApp(server, Effect.flatMap(SqlClient.SqlClient, query))

export const countPayouts = async (server: TestServer, integrationId: string): Promise<number> => {
  const [row] = await sql<{ n: number }>(
    server,
    (q) => q`SELECT count(*)::int AS n FROM payouts WHERE integration_id = ${integrationId}`
  )
  return row?.n ?? -1
}

/** Moves the payout's deposit window into the past. */
export const expirePayoutWindow = (server: TestServer, payoutId: string) =>
  sql(server, (q) => q`UPDATE payouts SET expires_at = now() - interval '1 minute' WHERE id = ${payoutId} RETURNING id`)

// ---------------------------------------------------------------------------------------------- money

interface Ratio {
  readonly n: bigint
  readonly d: bigint
}

const pow10 = (e: number): bigint => 10n ** BigInt(e)
const ceilDiv = (a: bigint, b: bigint): bigint => (a + b - 1n) / b
const halfUpDiv = (a: bigint, b: bigint): bigint => (2n * a + b) / (2n * b)

const ratioOf = (x: BigDecimal.BigDecimal): Ratio =>
  x.scale >= 0 ? { n: x.value, d: pow10(x.scale) } : { n: x.value * pow10(-x.scale), d: 1n }

/** Integer units of a plain decimal string, at `decimals` fraction digits (exact; throws if it does not fit). */
export const unitsOf = (wire: string, decimals: number): bigint => {
  const match = /^([0-9]+)(?:\.([0-9]+))?$/.exec(wire)
  if (match === null) throw new Error(`not a plain decimal: ${JSON.stringify(wire)}`)
  const fraction = match[2] ?? ""
  if (fraction.length > decimals && /[1-9]/.test(fraction.slice(decimals))) {
    throw new Error(`${wire} has more than ${decimals} decimals`)
  }
  return BigInt(`${match[1]}${fraction.slice(0, decimals).padEnd(decimals, "0")}`)
}

/** Units as a plain string with exactly `decimals` fraction digits. */
export const fixed = (units: bigint, decimals: number): string => {
  const digits = units.toString().padStart(decimals + 1, "0")
  return decimals === 0 ? digits : `${digits.slice(0, -decimals)}.${digits.slice(-decimals)}`
}

export interface ExpectedPayout {
  /** token base units */
  readonly deposit: bigint
  readonly bridge: bigint
  readonly bridgeFx: bigint
  readonly serviceFee: bigint
  readonly totalPaid: bigint
  /** whole-token wire strings */
  readonly wire: {
    readonly deposit: string
    readonly bridge: string
    readonly bridgeFx: string
    readonly serviceFee: string
    readonly totalPaid: string
    readonly effectiveUsdCop: string
    readonly display: string
    readonly commissionDisplayAmount: string
  }
}

/**
 * DESIGN §3, with D = destinationCop, S = sell rate, M = mid rate, all in exact integers:
 * X = ceil(D / (0.995 S)), bridge = ceil(0.5% X), bridge_fx = halfUp((X − bridge)(1 − S/M)),
 * F = ceil(1% X), T = X + F, E = floor6(D / T), display floor2(E), commission = halfUp2(legs).
 */
export const expectedPayout = (
  destinationCop: string,
  config: {
    readonly mockSellRate: BigDecimal.BigDecimal
    readonly mockMidRate: BigDecimal.BigDecimal
    readonly tokenDecimals: number
  }
): ExpectedPayout => {
  const decimals = config.tokenDecimals
  const unit = pow10(decimals)
  const cents = unitsOf(destinationCop, 2)
  const S = ratioOf(config.mockSellRate)
  const M = ratioOf(config.mockMidRate)
  // X · unit = D · unit / (995/1000 · S) = cents/100 · unit · 1000 · S.d / (995 · S.n)
  const deposit = ceilDiv(cents * unit * 1000n * S.d, 100n * 995n * S.n)
  const bridge = ceilDiv(deposit * 5n, 1000n)
  // 1 − S/M = (M.n S.d − S.n M.d) / (M.n S.d); the mock rates have S < M
  const spread = M.n * S.d - S.n * M.d
  if (spread < 0n) throw new Error("expectedPayout assumes S < M")
  const bridgeFx = halfUpDiv((deposit - bridge) * spread, M.n * S.d)
  const serviceFee = ceilDiv(deposit, 100n)
  const totalPaid = deposit + serviceFee
  // E · 10^6 = (cents / 100) · 10^6 / (T / unit)
  const effectiveMicros = (cents * pow10(4) * unit) / totalPaid
  const displayCents = effectiveMicros / pow10(4)
  const commissionCents = halfUpDiv(bridge + bridgeFx + serviceFee, pow10(decimals - 2))
  return {
    deposit,
    bridge,
    bridgeFx,
    serviceFee,
    totalPaid,
    wire: {
      deposit: fixed(deposit, decimals),
      bridge: fixed(bridge, decimals),
      bridgeFx: fixed(bridgeFx, decimals),
      serviceFee: fixed(serviceFee, decimals),
      totalPaid: fixed(totalPaid, decimals),
      effectiveUsdCop: fixed(effectiveMicros, 6),
      display: `1 USD = ${fixed(displayCents, 2)} COP`,
      commissionDisplayAmount: fixed(commissionCents, 2)
    }
  }
}
