/**
 * Baseline: a Fastify 5 + node-postgres server for the quote, payout create and list, sending the SQL the service
 * sent before issue #10 (the texts are the service's, from src/; the bench counts both on the wire):
 *   quote: the cached rate read, the quote INSERT (2);
 *   create with Idempotency-Key: key claim, customer read, rate read, intent UPDATE, then BEGIN, key lock, payout
 *   INSERT, event INSERT, deliveries INSERT, key `done` upsert, COMMIT (9 statements with parameters, unprepared,
 *   + BEGIN/COMMIT);
 *   list: one SELECT.
 * And the same per-request work as the service, so a ratio compares frameworks, not work skipped (issue #20):
 *   - the bearer key's format and checksum checked and the key hashed with the project's own src/auth/ApiKey.ts, the
 *     hash looked up with the service's own statement and remembered for API_KEY_CACHE_MS (as src/auth/KeyCache);
 *   - query strings and bodies validated with Ajv against the committed contract's own JSON Schemas
 *     (contracts/openapi.json), unknown body fields refused as the service does;
 *   - quote and payout priced with the project's own exact money code (src/money computePayout, from the cached
 *     rate), amounts formatted into the answer;
 *   - one JSON access line per request on stdout, the fields of the service's access line.
 * Bodies have the service's shape, copied from the service's own answers (BASELINE_TEMPLATES) with the ids and the
 * priced amounts replaced. No provider calls (the service's mock provider makes none on these paths either).
 */
import Ajv2020 from "ajv/dist/2020.js"
import addFormats from "ajv-formats"
import { BigDecimal } from "effect"
import Fastify from "fastify"
import { randomUUID } from "node:crypto"
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
interface Queryable {
  query(
    text: string,
    values?: ReadonlyArray<unknown>
  ): Promise<{ rows: Array<Record<string, unknown>>; rowCount: number | null }>
}
// The service reaches pg through @effect/sql-pg; the baseline calls pg's promise API directly, typed by hand here.
const pool = new pg.Pool({ connectionString: process.env["DATABASE_URL"] ?? "", max: 10 }) as unknown as Queryable & {
  connect(): Promise<Queryable & { release(): void }>
  end(): Promise<void>
}
const PAIR = "USD_COP"
const columns = Object.keys(templates.row)
const insertPayout = `INSERT INTO payouts (${columns.map((c) => `"${c}"`).join(",")}) VALUES (${
  columns.map((_, i) => `$${i + 1}`).join(",")
}) RETURNING *`

const KEY_CACHE_MS = Number(process.env["API_KEY_CACHE_MS"] ?? "30000")
const keys = new Map<string, { readonly integrationId: string; readonly until: number }>()

/** The service's key lookup (src/auth/ApiKeyRepo.findActiveByHash), same text, same `last_used_at` note. */
const findActiveByHash = (hash: string) =>
  pool.query(
    `WITH found AS (
              SELECT k.id, k.integration_id, i.name AS integration_name, k.kind, k.last4, k.created_at, k.revoked_at,
                        k.expires_at, k.last_used_at, k.replaced_by FROM api_keys k JOIN integrations i ON i.id = k.integration_id
              WHERE k.key_hash = $1 AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now())
            ), used AS (
              UPDATE api_keys SET last_used_at = now()
              WHERE id IN (SELECT id FROM found) AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')
            )
            SELECT * FROM found`,
    [hash]
  )

const integrationOf = async (authorization: string | undefined): Promise<string | undefined> => {
  const parsed = parseApiKey(authorization?.startsWith("Bearer ") ? authorization.slice(7) : "")
  if (parsed._tag !== "Valid") return undefined
  const now = Date.now()
  const cached = keys.get(parsed.hash)
  if (cached !== undefined && cached.until > now) return cached.integrationId
  const found = (await findActiveByHash(parsed.hash)).rows[0]
  if (found === undefined) return undefined
  const integrationId = String(found["integration_id"])
  if (KEY_CACHE_MS > 0) keys.set(parsed.hash, { integrationId, until: now + KEY_CACHE_MS })
  return integrationId
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
const validQuoteQuery = querySchema("/api/integrations/breb/quote")
const validListQuery = querySchema("/api/integrations/breb/payouts")

const badRequest = (errors: typeof validCreate.errors) => ({
  error: `${errors?.[0]?.instancePath || "request"}: ${errors?.[0]?.message ?? "invalid"}`
})

/** The service's pricing: exact decimals from the cached rate, formatted into the answer's amounts. */
const price = (destinationCop: string, sellRate: unknown, midRate: unknown) =>
  formatPayoutAmounts(computePayout({
    destinationCop: BigDecimal.fromStringUnsafe(destinationCop),
    sellRate: BigDecimal.fromStringUnsafe(String(sellRate)),
    midRate: BigDecimal.fromStringUnsafe(String(midRate)),
    tokenDecimals: 6
  }))

/** The template answer with the priced amounts it carries replaced (the answer keeps the service's shape). */
const withAmounts = (template: Record<string, unknown>, amounts: object) => ({
  ...template,
  ...Object.fromEntries(Object.entries(amounts).filter(([name]) => name in template))
})

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
  const rate = await pool.query(
    "SELECT sell_rate, mid_rate, fetched_at FROM rate_cache WHERE pair = $1 AND fetched_at > $2",
    [PAIR, new Date(at.getTime() - 30_000)]
  )
  const row = rate.rows[0] ?? { sell_rate: "3960", mid_rate: "4000" }
  const id = `qt_${randomUUID()}`
  await pool.query(
    `INSERT INTO quotes ("id","integration_id","from_token","sell_rate","mid_rate","destination_cop","created_at","expires_at") VALUES ($1,$2,$3,$4,$5,$6,$7,$8)`,
    [
      id,
      request.integrationId,
      "USDC",
      row.sell_rate,
      row.mid_rate,
      destinationCop,
      at,
      new Date(at.getTime() + 60_000)
    ]
  )
  return { ...withAmounts(templates.quote, price(destinationCop, row.sell_rate, row.mid_rate)), quoteId: id }
})

app.post("/api/integrations/breb/payouts", async (request, reply) => {
  if (!validCreate(request.body)) return reply.code(400).send(badRequest(validCreate.errors))
  const key = String(request.headers["idempotency-key"] ?? randomUUID())
  const body = request.body as { userAddress: string; destinationCop: string }
  const integrationId = request.integrationId
  const payoutId = `po_${randomUUID()}`
  const attempt = randomUUID()
  const at = new Date()
  const claimed = await pool.query(
    `INSERT INTO idempotency_keys (integration_id, idempotency_key, request_hash, state, response_status, response_body, resource_id, provider_key, attempt, started_at)
     VALUES ($1, $2, $3, 'started', 0, '{}'::jsonb, $4, $5, $6, now()) ON CONFLICT DO NOTHING RETURNING 1 AS claimed`,
    [integrationId, key, "hash", payoutId, `transfer:${payoutId}`, attempt]
  )
  if (claimed.rowCount === 0) return reply.code(409).send({ error: "key in use" })
  await pool.query(
    `SELECT integration_id, user_address, email, kyc_status, kyc_url, provider_customer_id FROM customers WHERE integration_id = $1 AND user_address = $2`,
    [integrationId, body.userAddress.toLowerCase()]
  )
  const rate = await pool.query(
    "SELECT sell_rate, mid_rate, fetched_at FROM rate_cache WHERE pair = $1 AND fetched_at > $2",
    [
      PAIR,
      new Date(at.getTime() - 30_000)
    ]
  )
  await pool.query(
    `UPDATE idempotency_keys SET intent = $1::jsonb WHERE integration_id = $2 AND idempotency_key = $3 AND state = 'started' AND attempt = $4`,
    [
      JSON.stringify({ sellRate: rate.rows[0]?.sell_rate ?? "3960", midRate: rate.rows[0]?.mid_rate ?? "4000" }),
      integrationId,
      key,
      attempt
    ]
  )
  const client = await pool.connect()
  let response: string
  try {
    await client.query("BEGIN")
    await client.query(
      `SELECT request_hash, state, response_status, response_body, resource_id, provider_key, attempt, intent, false AS stale FROM idempotency_keys WHERE integration_id = $1 AND idempotency_key = $2 FOR UPDATE`,
      [integrationId, key]
    )
    const row = {
      ...templates.row,
      id: payoutId,
      provider_transfer_id: `tr_${payoutId}`,
      created_at: at,
      updated_at: at
    }
    await client.query(
      insertPayout,
      columns.map((c) => {
        const value = (row as Record<string, unknown>)[c]
        return value !== null && typeof value === "object" && !(value instanceof Date) ? JSON.stringify(value) : value
      })
    )
    const priced = price(
      body.destinationCop,
      rate.rows[0]?.["sell_rate"] ?? "3960",
      rate.rows[0]?.["mid_rate"] ?? "4000"
    )
    const presented = { ...withAmounts(templates.payout, priced), payoutId }
    const eventId = `evt_${randomUUID()}`
    // the event's sequence, taken as the service takes it (the resource's counter row)
    await client.query(
      `INSERT INTO event_sequences (integration_id, resource_id, last_sequence) VALUES ($1, $2, 1)
       ON CONFLICT (integration_id, resource_id) DO UPDATE SET last_sequence = event_sequences.last_sequence + 1`,
      [integrationId, payoutId]
    )
    await client.query(
      `INSERT INTO events (id, integration_id, type, resource_id, sequence, body, created_at)
       VALUES ($1, $2, $3, $4, 1, $5, $6)`,
      [
        eventId,
        integrationId,
        "payout.created",
        payoutId,
        JSON.stringify({ id: eventId, type: "payout.created", sequence: 1, data: { object: presented } }),
        at
      ]
    )
    await client.query(
      `INSERT INTO event_deliveries (event_id, endpoint_id, resource_id, state, next_attempt_at, created_at) SELECT $1, w.id, $2, 'pending', $3, $4 FROM webhook_endpoints w WHERE w.integration_id = $5 AND w.deleted_at IS NULL AND w.status = 'enabled' AND (w.events @> ARRAY['*']::text[] OR w.events @> ARRAY[$6]::text[]) ORDER BY w.id`,
      [eventId, payoutId, at, at, integrationId, "payout.created"]
    )
    response = JSON.stringify(presented)
    await client.query(
      `INSERT INTO idempotency_keys (integration_id, idempotency_key, request_hash, state, response_status, response_body, resource_id)
       VALUES ($1, $2, $3, 'done', $4, $5::jsonb, $6) ON CONFLICT (integration_id, idempotency_key) DO UPDATE
       SET state = 'done', response_status = EXCLUDED.response_status, response_body = EXCLUDED.response_body, resource_id = EXCLUDED.resource_id`,
      [integrationId, key, "hash", 201, JSON.stringify(response), payoutId]
    )
    await client.query("COMMIT")
  } catch (error) {
    await client.query("ROLLBACK")
    throw error
  } finally {
    client.release()
  }
  return reply.code(201).header("content-type", "application/json").send(response)
})

const camel = (name: string) => name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase())

app.get("/api/integrations/breb/payouts", async (request, reply) => {
  if (!validListQuery(request.query)) return reply.code(400).send(badRequest(validListQuery.errors))
  const limit = (request.query as { limit?: number }).limit ?? 50
  const rows = await pool.query(
    "SELECT * FROM payouts WHERE integration_id = $1 ORDER BY created_at, id LIMIT $2",
    [request.integrationId, limit]
  )
  const items = rows.rows.map((row: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(row).map(([k, v]) => [camel(k), v]))
  )
  return { integrationId: request.integrationId, items, nextCursor: null }
})

const address = await app.listen({ port: 0, host: "127.0.0.1" })
process.stdout.write(`listening on ${address}\n`)
process.on("SIGTERM", () => void app.close().then(() => pool.end()).then(() => process.exit(0)))
