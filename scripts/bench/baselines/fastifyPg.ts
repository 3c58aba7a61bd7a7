/**
 * Baseline: a Fastify 5 + node-postgres server for the quote, payout create, confirm, get and list, sending exactly the
 * service's statements (the texts are the service's, as counted on the wire by statements.ts; the bench checks the two
 * against each other, `checkSameStatements`), each with parameters prepared once per connection by name as the service
 * does, BEGIN and COMMIT as simple queries:
 *   quote: the quote INSERT (1; the rate comes from memory, refreshed from rate_cache at most every 30 s, as the
 *   service's rate cache);
 *   create with Idempotency-Key: key claim, customer read, intent UPDATE, verification budget, then BEGIN, key lock,
 *   creation time (advisory lock), payout INSERT, event + deliveries INSERT, key `done` upsert, COMMIT (9 + 2);
 *   confirm: BEGIN, payout lock, verifying claims, claim INSERT, COMMIT, BEGIN, payout lock, claim marked, payout
 *   UPDATE, event + deliveries INSERT, two job INSERTs, COMMIT (9 + 4);
 *   get: one SELECT; list: the list horizon and one SELECT (2).
 * And the per-request work of a plain service, so a ratio compares frameworks, not work skipped (issue #20):
 *   - the bearer key's format and checksum checked and the key hashed with the project's own src/auth/ApiKey.ts, the
 *     hash looked up with the service's own statement and remembered for API_KEY_CACHE_MS (as src/auth/KeyCache);
 *   - query strings and bodies validated with Ajv against the committed contract's own JSON Schemas
 *     (contracts/openapi.json), unknown body fields refused as the service does; the create's request hashed (sha-256)
 *     for its Idempotency-Key;
 *   - quote and payout priced with the project's own exact money code (src/money computePayout, from the cached
 *     rate), amounts formatted into the answer; rows answered as JSON with camelCase names;
 *   - one JSON access line per request on stdout, the fields of the service's access line.
 * Not done: the service's request logs (one batched INSERT per flush, not per request), metrics and tracing.
 * Bodies have the service's shape, copied from the service's own answers (BASELINE_TEMPLATES) with the ids and the
 * priced amounts replaced. No provider calls (the service's mock provider makes none on these paths either); the jobs a
 * confirm queues are due in the far future (no worker here, and the service's must not take them).
 */
import Ajv2020 from "ajv/dist/2020.js"
import addFormats from "ajv-formats"
import { BigDecimal } from "effect"
import Fastify from "fastify"
import { createHash, randomUUID } from "node:crypto"
import { readFileSync } from "node:fs"
import pg from "pg"
import { parseApiKey } from "../../../src/auth/ApiKey.ts"
import { computePayout, formatPayoutAmounts } from "../../../src/money/index.ts"

interface Templates {
  readonly key: string
  readonly integrationId: string
  readonly userAddress: string
  readonly health: string
  readonly quote: Record<string, unknown>
  readonly payout: Record<string, unknown>
  /** One stored payouts row (column → value) to insert again under new ids. */
  readonly row: Record<string, unknown>
}

const templates = JSON.parse(process.env["BASELINE_TEMPLATES"] ?? "{}") as Templates

type Rows = { rows: Array<Record<string, unknown>>; rowCount: number | null }
interface Queryable {
  query(text: string): Promise<Rows>
  query(config: { name: string; text: string; values: ReadonlyArray<unknown> }): Promise<Rows>
}
// The service reaches pg through its own client; the baseline calls pg's promise API directly, typed by hand here.
const pool = new pg.Pool({ connectionString: process.env["DATABASE_URL"] ?? "", max: 10 }) as unknown as Queryable & {
  connect(): Promise<Queryable & { release(): void }>
  end(): Promise<void>
}

/** The service's statements, word for word; each prepared once per connection under its name. */
const SQL = {
  findKey: `WITH found AS (
              SELECT k.id, k.integration_id, i.name AS integration_name, k.kind, k.last4, k.created_at, k.revoked_at,
                        k.expires_at, k.last_used_at, k.replaced_by FROM api_keys k JOIN integrations i ON i.id = k.integration_id
              WHERE k.key_hash = $1 AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now())
            ), used AS (
              UPDATE api_keys SET last_used_at = now()
              WHERE id IN (SELECT id FROM found) AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')
            )
            SELECT * FROM found`,
  rate: "SELECT sell_rate, mid_rate, fetched_at FROM rate_cache WHERE pair = $1",
  insertQuote:
    `INSERT INTO quotes ("id","integration_id","from_token","sell_rate","mid_rate","destination_cop","swap_sell_amount","created_at","expires_at") VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9)`,
  claimKey:
    `INSERT INTO idempotency_keys (integration_id, idempotency_key, request_hash, state, response_status, response_body, resource_id, provider_key, attempt, started_at) VALUES ($1, $2, $3, 'started', 0, '{}'::jsonb, $4, $5, $6, now()) ON CONFLICT DO NOTHING RETURNING 1 AS claimed`,
  customer:
    "SELECT integration_id, user_address, email, kyc_status, kyc_url, provider_customer_id, created_at, updated_at FROM customers WHERE integration_id = $1 AND user_address = $2",
  keyIntent:
    "UPDATE idempotency_keys SET intent = $1::jsonb WHERE integration_id = $2 AND idempotency_key = $3 AND state = 'started' AND attempt = $4",
  verificationToken:
    "INSERT INTO destination_verification_budgets AS budget (integration_id, full_at) VALUES ($1, statement_timestamp() + $2 * interval '1 second') ON CONFLICT (integration_id) DO UPDATE SET full_at = GREATEST(budget.full_at, statement_timestamp()) + $3 * interval '1 second' WHERE budget.full_at <= statement_timestamp() + $4 * interval '1 second' RETURNING budget.integration_id",
  lockKey:
    "SELECT request_hash, state, response_status, response_body, resource_id, provider_key, attempt, intent, false AS stale FROM idempotency_keys WHERE integration_id = $1 AND idempotency_key = $2 FOR UPDATE",
  creationTime:
    "SELECT date_trunc('milliseconds', clock_timestamp()) AS at FROM (SELECT pg_advisory_xact_lock_shared(hashtext($1), hashtext($2)) OFFSET 0) AS announced",
  recordEvent:
    "WITH counter AS ( INSERT INTO event_sequences (integration_id, resource_id, last_sequence) VALUES ($1, $2, 1) ON CONFLICT (integration_id, resource_id) DO UPDATE SET last_sequence = event_sequences.last_sequence + 1 RETURNING last_sequence), event AS ( INSERT INTO events (id, integration_id, type, resource_id, sequence, body, created_at, traceparent) SELECT $3, $4, $5, $6, last_sequence, $7::text || last_sequence::text || $8::text, $9, $10 FROM counter RETURNING id, body) INSERT INTO event_deliveries (event_id, endpoint_id, resource_id, state, next_attempt_at, created_at) SELECT event.id, w.id, $11, 'pending', $12, $13 FROM event, webhook_endpoints w WHERE w.integration_id = $14 AND w.deleted_at IS NULL AND w.status = 'enabled' AND (w.events @> ARRAY['*']::text[] OR w.events @> ARRAY[$15]::text[]) ORDER BY w.id",
  keyDone:
    "INSERT INTO idempotency_keys (integration_id, idempotency_key, request_hash, state, response_status, response_body, resource_id) VALUES ($1, $2, $3, 'done', $4, $5::jsonb, $6) ON CONFLICT (integration_id, idempotency_key) DO UPDATE SET state = 'done', response_status = EXCLUDED.response_status, response_body = EXCLUDED.response_body, resource_id = EXCLUDED.resource_id",
  insertPayout:
    `INSERT INTO payouts ("id","integration_id","status","user_address","from_token","destination_cop","bre_b_key","account_owner_name","bank_name","document_last4","sell_rate","mid_rate","deposit_chain","deposit_currency","deposit_address","deposit_amount","service_fee","total_paid","effective_usd_cop","rate_display","fee_legs","transaction","fee_transaction","commission_usd","provider_transfer_id","tx_hash","fee_tx_hash","created_at","updated_at","expires_at","completed_at","timeline","source_amount","total_received_cop","failure","refund","canceled_at","batch_id","reference") VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21,$22,$23,$24,$25,$26,$27,$28,$29,$30,$31,$32,$33,$34,$35,$36,$37,$38,$39)`,
  lockPayout: "SELECT * FROM payouts WHERE id = $1 AND integration_id = $2 FOR UPDATE",
  verifyingClaims:
    "SELECT tx_hash FROM tx_hash_claims WHERE resource_kind = $1 AND resource_id = $2 AND state = 'verifying'",
  claimHash:
    "INSERT INTO tx_hash_claims (tx_hash, resource_kind, resource_id, state) VALUES ($1, $2, $3, 'verifying') ON CONFLICT DO NOTHING RETURNING tx_hash",
  markClaimed:
    "UPDATE tx_hash_claims SET state = 'claimed' WHERE tx_hash IN ($1) AND resource_kind = $2 AND resource_id = $3 AND state = 'verifying' RETURNING tx_hash",
  updatePayout:
    "WITH previous AS (SELECT status FROM payouts WHERE id = $1) UPDATE payouts SET status = $2, fee_legs = $3::jsonb, tx_hash = $4, fee_tx_hash = $5, updated_at = $6, expires_at = $7, completed_at = $8, total_received_cop = COALESCE($9, total_received_cop), failure = COALESCE(failure, $10::jsonb), refund = COALESCE($11::jsonb, refund), canceled_at = COALESCE(canceled_at, $12), timeline = timeline || $13::jsonb || CASE WHEN status = $14 THEN '[]'::jsonb ELSE $15::jsonb END || $16::jsonb WHERE id = $17 RETURNING payouts.*, (SELECT status FROM previous) AS previous_status",
  enqueueJob: "INSERT INTO jobs (kind, payload, run_at, traceparent) VALUES ($1, $2::jsonb, $3, $4)",
  onePayout: `SELECT * FROM "payouts" WHERE id = $1 AND integration_id = $2`,
  listHorizon:
    `SELECT (extract(epoch FROM date_trunc('milliseconds', statement_timestamp())) * 1000)::bigint AS asked, (extract(epoch FROM date_trunc('milliseconds', LEAST(statement_timestamp(), min(COALESCE(a.xact_start, 'epoch'::timestamptz))))) * 1000)::bigint AS horizon, EXISTS (SELECT 1 FROM "payouts" WHERE integration_id = $1 AND created_at >= date_trunc('milliseconds', statement_timestamp())) AS fresh FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2 AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) AND l.classid::bigint = ((hashtext($2))::bigint & 4294967295) AND l.objid::bigint = ((hashtext($3))::bigint & 4294967295)`,
  listPage: `SELECT * FROM "payouts" WHERE integration_id = $1 AND created_at < $2 ORDER BY created_at, id LIMIT $3`
} as const

const run = (db: Queryable, name: keyof typeof SQL, values: ReadonlyArray<unknown>) =>
  db.query({ name, text: SQL[name], values })

/** Column order of the service's payout INSERT. */
const PAYOUT_COLUMNS = /INSERT INTO payouts \(([^)]+)\)/.exec(SQL.insertPayout)![1]!.split(",").map((c) =>
  c.replaceAll("\"", "")
)

const asParameter = (value: unknown) =>
  value !== null && typeof value === "object" && !(value instanceof Date) ? JSON.stringify(value) : value

const KEY_CACHE_MS = Number(process.env["API_KEY_CACHE_MS"] ?? "30000")
const keys = new Map<string, { readonly integrationId: string; readonly until: number }>()

const integrationOf = async (authorization: string | undefined): Promise<string | undefined> => {
  const parsed = parseApiKey(authorization?.startsWith("Bearer ") ? authorization.slice(7) : "")
  if (parsed._tag !== "Valid") return undefined
  const now = Date.now()
  const cached = keys.get(parsed.hash)
  if (cached !== undefined && cached.until > now) return cached.integrationId
  const found = (await run(pool, "findKey", [parsed.hash])).rows[0]
  if (found === undefined) return undefined
  const integrationId = String(found["integration_id"])
  if (KEY_CACHE_MS > 0) keys.set(parsed.hash, { integrationId, until: now + KEY_CACHE_MS })
  return integrationId
}

/** The rate, from memory: read from rate_cache at most every 30 s (the service's rate cache). */
const PAIR = "USD_COP"
let rate: { sellRate: string; midRate: string; until: number } | undefined
const currentRate = async () => {
  if (rate !== undefined && rate.until > Date.now()) return rate
  const row = (await run(pool, "rate", [PAIR])).rows[0] as { sell_rate?: string; mid_rate?: string } | undefined
  rate = {
    sellRate: row?.sell_rate ?? "3960",
    midRate: row?.mid_rate ?? "4000",
    until: Date.now() + 30_000
  }
  return rate
}

// The contract's own schemas (the document the service publishes), compiled once, as the service's are.
const contract = JSON.parse(readFileSync(new URL("../../../contracts/openapi.json", import.meta.url), "utf8")) as {
  components: { schemas: Record<string, unknown> }
  paths: Record<string, Record<string, { parameters?: Array<{ name: string; in: string; schema: unknown }> }>>
}
const ajv = new Ajv2020.default({ strict: false, allErrors: false, coerceTypes: true })
addFormats.default(ajv)
/** A contract schema with its `$ref`s pointing at `$defs` (one self-contained JSON Schema for Ajv). */
const localRefs = (schema: unknown): unknown =>
  JSON.parse(JSON.stringify(schema).replaceAll("#/components/schemas/", "#/$defs/")) as unknown
const defs = localRefs(contract.components.schemas)
const bodySchema = (name: string) => ajv.compile({ $defs: defs, $ref: `#/$defs/${name}` })
const querySchema = (path: string) => {
  const parameters = (contract.paths[path]?.["get"]?.parameters ?? []).filter((p) => p.in === "query")
  return ajv.compile({
    $defs: defs,
    type: "object",
    properties: Object.fromEntries(parameters.map((p) => [p.name, localRefs(p.schema)])),
    additionalProperties: false
  })
}
const validCreate = bodySchema("CreatePayoutRequest")
const validConfirm = bodySchema("ConfirmPayoutRequest")
const validQuoteQuery = querySchema("/api/integrations/breb/quote")
const validListQuery = querySchema("/api/integrations/breb/payouts")

const badRequest = (errors: typeof validCreate.errors) => ({
  error: `${errors?.[0]?.instancePath || "request"}: ${errors?.[0]?.message ?? "invalid"}`
})

/** The service's pricing: exact decimals from the cached rate, formatted into the answer's amounts. */
const price = (destinationCop: string, sellRate: string, midRate: string) =>
  formatPayoutAmounts(computePayout({
    destinationCop: BigDecimal.fromStringUnsafe(destinationCop),
    sellRate: BigDecimal.fromStringUnsafe(sellRate),
    midRate: BigDecimal.fromStringUnsafe(midRate),
    tokenDecimals: 6
  }))

/** The template answer with the priced amounts it carries replaced (the answer keeps the service's shape). */
const withAmounts = (template: Record<string, unknown>, amounts: object) => ({
  ...template,
  ...Object.fromEntries(Object.entries(amounts).filter(([name]) => name in template))
})

const camel = (name: string) => name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase())
const present = (row: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(row).map(([k, v]) => [camel(k), v instanceof Date ? v.toISOString() : v]))

/** The service's event statement: sequence, event and deliveries in one; the body is split around its sequence. */
const recordEvent = (
  db: Queryable,
  integrationId: string,
  resourceId: string,
  type: string,
  object: unknown,
  at: Date
) => {
  const id = `evt_${randomUUID()}`
  const body = JSON.stringify({ id, type, sequence: 0, data: { object } })
  const [before, after] = body.split(`"sequence":0`)
  return run(db, "recordEvent", [
    integrationId,
    resourceId,
    id,
    integrationId,
    type,
    resourceId,
    `${before}"sequence":`,
    after,
    at,
    null,
    resourceId,
    at,
    at,
    integrationId,
    type
  ])
}

/** A transaction on one connection, as the service's: BEGIN and COMMIT sent as simple queries. */
const inTransaction = async <A>(work: (db: Queryable) => Promise<A>): Promise<A> => {
  const client = await pool.connect()
  try {
    await client.query("BEGIN")
    const result = await work(client)
    await client.query("COMMIT")
    return result
  } catch (error) {
    await client.query("ROLLBACK")
    throw error
  } finally {
    client.release()
  }
}

const app = Fastify({ logger: false })

declare module "fastify" {
  interface FastifyRequest {
    integrationId: string
    startedAt: number
  }
}

app.addHook("onRequest", async (request, reply) => {
  request.startedAt = performance.now()
  if (request.url === "/healthz") return
  const integrationId = await integrationOf(request.headers.authorization)
  if (integrationId === undefined) return reply.code(401).send({ error: "unauthorized" })
  request.integrationId = integrationId
})

// One access line per request, the service's fields (src/http/AccessLog.ts), as one JSON line on stdout.
app.addHook("onResponse", async (request, reply) => {
  process.stdout.write(
    `${
      JSON.stringify({
        message: "request",
        logLevel: "INFO",
        timestamp: new Date().toISOString(),
        annotations: {
          requestId: request.id,
          method: request.method,
          path: request.url.split("?")[0],
          status: reply.statusCode,
          durationMs: Math.round(performance.now() - request.startedAt),
          integrationId: request.integrationId
        }
      })
    }\n`
  )
})

// The service's own health body (answered without the database, as the service does).
app.get("/healthz", async (_, reply) => reply.header("content-type", "application/json").send(templates.health))

app.get("/api/integrations/breb/quote", async (request, reply) => {
  if (!validQuoteQuery(request.query)) return reply.code(400).send(badRequest(validQuoteQuery.errors))
  const destinationCop = (request.query as { destinationCop?: string }).destinationCop ?? "250000"
  const at = new Date()
  const { midRate, sellRate } = await currentRate()
  const id = `qt_${randomUUID()}`
  await run(pool, "insertQuote", [
    id,
    request.integrationId,
    "USDC",
    sellRate,
    midRate,
    destinationCop,
    null,
    at,
    new Date(at.getTime() + 60_000)
  ])
  return { ...withAmounts(templates.quote, price(destinationCop, sellRate, midRate)), quoteId: id }
})

/** The verification budget the bench gives the service (PREVIEW_RATE_LIMIT_PER_MINUTE): one token a create. */
const VERIFICATIONS_PER_MINUTE = Number(process.env["PREVIEW_RATE_LIMIT_PER_MINUTE"] ?? "10000000")
const TOKEN_SECONDS = 60 / VERIFICATIONS_PER_MINUTE
const AHEAD_AT_MOST = (VERIFICATIONS_PER_MINUTE - 1) * TOKEN_SECONDS

app.post("/api/integrations/breb/payouts", async (request, reply) => {
  if (!validCreate(request.body)) return reply.code(400).send(badRequest(validCreate.errors))
  const key = String(request.headers["idempotency-key"] ?? randomUUID())
  const body = request.body as { userAddress: string; destinationCop: string }
  const requestHash = createHash("sha256").update(`${request.url}\n${JSON.stringify(body)}`).digest("hex")
  const integrationId = request.integrationId
  const payoutId = `po_${randomUUID()}`
  const attempt = randomUUID()
  const claimed = await run(pool, "claimKey", [
    integrationId,
    key,
    requestHash,
    payoutId,
    `transfer:${payoutId}`,
    attempt
  ])
  if (claimed.rowCount === 0) return reply.code(409).send({ error: "key in use" })
  const customer = await run(pool, "customer", [integrationId, body.userAddress.toLowerCase()])
  if (customer.rows[0]?.["kyc_status"] !== "approved") return reply.code(409).send({ error: "needs_kyc" })
  const { midRate, sellRate } = await currentRate()
  await run(pool, "keyIntent", [JSON.stringify({ sellRate, midRate }), integrationId, key, attempt])
  await run(pool, "verificationToken", [integrationId, TOKEN_SECONDS, TOKEN_SECONDS, AHEAD_AT_MOST])
  const priced = price(body.destinationCop, sellRate, midRate)
  const response = await inTransaction(async (db) => {
    await run(db, "lockKey", [integrationId, key])
    const at = (await run(db, "creationTime", ["created:payouts", integrationId])).rows[0]?.["at"] as Date
    const row: Record<string, unknown> = {
      ...templates.row,
      id: payoutId,
      provider_transfer_id: `tr_${payoutId}`,
      created_at: at,
      updated_at: at
    }
    await run(db, "insertPayout", PAYOUT_COLUMNS.map((c) => asParameter(row[c] ?? null)))
    const presented = { ...withAmounts(templates.payout, priced), payoutId, createdAt: at.toISOString() }
    await recordEvent(db, integrationId, payoutId, "payout.created", presented, at)
    const answer = JSON.stringify(presented)
    await run(db, "keyDone", [integrationId, key, requestHash, 201, JSON.stringify(answer), payoutId])
    return answer
  })
  return reply.code(201).header("content-type", "application/json").send(response)
})

/** Jobs a confirm queues, due when no worker runs (the service's worker shares this database between runs). */
const NEVER = new Date("9999-01-01T00:00:00Z")

app.post("/api/integrations/breb/payouts/:payoutId/confirm", async (request, reply) => {
  if (!validConfirm(request.body)) return reply.code(400).send(badRequest(validConfirm.errors))
  const { payoutId } = request.params as { payoutId: string }
  const txHash = (request.body as { txHash: string }).txHash.toLowerCase()
  const integrationId = request.integrationId
  const begun = await inTransaction(async (db) => {
    const row = (await run(db, "lockPayout", [payoutId, integrationId])).rows[0]
    if (row === undefined) return "not found" as const
    if ((await run(db, "verifyingClaims", ["payout", payoutId])).rows.length > 0) return "in progress" as const
    if ((await run(db, "claimHash", [txHash, "payout", payoutId])).rows.length === 0) return "reused" as const
    return "claimed" as const
  })
  if (begun === "not found") return reply.code(404).send({ error: `no payout ${payoutId}` })
  if (begun !== "claimed") return reply.code(409).send({ error: begun })
  const updated = await inTransaction(async (db) => {
    const row = (await run(db, "lockPayout", [payoutId, integrationId])).rows[0]!
    await run(db, "markClaimed", [txHash, "payout", payoutId])
    const at = new Date()
    const feeLegs = (row["fee_legs"] as Array<Record<string, unknown>>).map((leg) => ({ ...leg, status: "pending" }))
    // The service's timeline hops: the deposit as mock mode's chain saw it, then the status the confirm wrote.
    const mined = JSON.stringify([{ status: "deposit_mined", at: at.toISOString(), source: "mock_chain" }])
    const hop = JSON.stringify([{ status: "deposit_confirmed", at: at.toISOString(), source: "api" }])
    const changed = (await run(db, "updatePayout", [
      payoutId,
      "deposit_confirmed",
      JSON.stringify(feeLegs),
      txHash,
      null,
      at,
      row["expires_at"],
      null,
      null,
      null,
      null,
      null,
      mined,
      "deposit_confirmed",
      hop,
      "[]",
      payoutId
    ])).rows[0]!
    const presented = present(changed)
    await recordEvent(db, integrationId, payoutId, "payout.deposit_confirmed", presented, at)
    // The mock provider's two progress steps, as the service queues them.
    for (const status of ["processing", "completed"]) {
      const job = { _tag: "TransferProgress", transferId: `tr_${payoutId}`, status, fundsArrived: true }
      await run(db, "enqueueJob", [job._tag, JSON.stringify(job), NEVER, null])
    }
    return presented
  })
  return updated
})

app.get("/api/integrations/breb/payouts/:payoutId", async (request, reply) => {
  const { payoutId } = request.params as { payoutId: string }
  const row = (await run(pool, "onePayout", [payoutId, request.integrationId])).rows[0]
  if (row === undefined) return reply.code(404).send({ error: `no payout ${payoutId}` })
  return present(row)
})

app.get("/api/integrations/breb/payouts", async (request, reply) => {
  if (!validListQuery(request.query)) return reply.code(400).send(badRequest(validListQuery.errors))
  const limit = (request.query as { limit?: number }).limit ?? 50
  const integrationId = request.integrationId
  const horizon = (await run(pool, "listHorizon", [integrationId, "created:payouts", integrationId])).rows[0]!
  const rows = await run(pool, "listPage", [integrationId, new Date(Number(horizon["horizon"])), limit + 1])
  const items = rows.rows.slice(0, limit).map(present)
  return { integrationId, items, nextCursor: rows.rows.length > limit ? "more" : null }
})

const address = await app.listen({ port: 0, host: "127.0.0.1" })
process.stdout.write(`listening on ${address}\n`)
process.on("SIGTERM", () => void app.close().then(() => pool.end()).then(() => process.exit(0)))
