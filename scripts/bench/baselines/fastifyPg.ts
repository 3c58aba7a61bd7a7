/**
 * Baseline: a minimal Fastify 5 + node-postgres server for the quote, payout create and list, sending the SQL the
 * service sent before issue #10 (the texts are the service's, from src/; the bench counts both on the wire):
 *   quote: the cached rate read, the quote INSERT (2);
 *   create with Idempotency-Key: key claim, customer read, rate read, intent UPDATE, then BEGIN, key lock, payout
 *   INSERT, event INSERT, deliveries INSERT, key `done` upsert, COMMIT (9 statements with parameters, unprepared,
 *   + BEGIN/COMMIT);
 *   list: one SELECT.
 * It checks the bearer key against the one it was given (as the service's key cache does) and answers bodies of the
 * service's shape, copied from the service's own answers (BASELINE_TEMPLATES) with the ids replaced. No validation,
 * pricing or provider calls: a floor for what the same database work can cost in Node.
 */
import { randomUUID } from "node:crypto"
import Fastify from "fastify"
import pg from "pg"

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

const app = Fastify({ logger: false })

app.addHook("onRequest", async (request, reply) => {
  if (request.url === "/healthz") return
  if (request.headers.authorization !== `Bearer ${templates.key}`) {
    return reply.code(401).send({ error: "unauthorized" })
  }
})

// The service's own health body (answered without the database, as the service does).
app.get("/healthz", async (_, reply) => reply.header("content-type", "application/json").send(templates.health))

app.get("/api/integrations/breb/quote", async () => {
  const at = new Date()
  const rate = await pool.query(
    "SELECT sell_rate, mid_rate, fetched_at FROM rate_cache WHERE pair = $1 AND fetched_at > $2",
    [PAIR, new Date(at.getTime() - 30_000)]
  )
  const row = rate.rows[0] ?? { sell_rate: "3960", mid_rate: "4000" }
  const id = `qt_${randomUUID()}`
  await pool.query(
    `INSERT INTO quotes ("id","integration_id","from_token","sell_rate","mid_rate","destination_cop","created_at","expires_at") VALUES ($1,$2,$3,$4,$5,$6,$7,$8)`,
    [id, templates.integrationId, "USDC", row.sell_rate, row.mid_rate, "250000.00", at, new Date(at.getTime() + 60_000)]
  )
  return { ...templates.quote, quoteId: id }
})

app.post("/api/integrations/breb/payouts", async (request, reply) => {
  const key = String(request.headers["idempotency-key"] ?? randomUUID())
  const body = request.body as { userAddress: string }
  const payoutId = `po_${randomUUID()}`
  const attempt = randomUUID()
  const at = new Date()
  const claimed = await pool.query(
    `INSERT INTO idempotency_keys (integration_id, idempotency_key, request_hash, state, response_status, response_body, resource_id, provider_key, attempt, started_at)
     VALUES ($1, $2, $3, 'started', 0, '{}'::jsonb, $4, $5, $6, now()) ON CONFLICT DO NOTHING RETURNING 1 AS claimed`,
    [templates.integrationId, key, "hash", payoutId, `transfer:${payoutId}`, attempt]
  )
  if (claimed.rowCount === 0) return reply.code(409).send({ error: "key in use" })
  await pool.query(
    `SELECT integration_id, user_address, email, kyc_status, kyc_url, provider_customer_id FROM customers WHERE integration_id = $1 AND user_address = $2`,
    [templates.integrationId, body.userAddress.toLowerCase()]
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
      templates.integrationId,
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
      [templates.integrationId, key]
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
    const presented = { ...templates.payout, payoutId }
    const eventId = `evt_${randomUUID()}`
    await client.query(
      `INSERT INTO events (id, integration_id, type, resource_id, body, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
      [
        eventId,
        templates.integrationId,
        "payout.created",
        payoutId,
        JSON.stringify({ id: eventId, type: "payout.created", data: { object: presented } }),
        at
      ]
    )
    await client.query(
      `INSERT INTO event_deliveries (event_id, endpoint_id, resource_id, state, next_attempt_at, created_at) SELECT $1, w.id, $2, 'pending', $3, $4 FROM webhook_endpoints w WHERE w.integration_id = $5 AND w.deleted_at IS NULL AND w.status = 'enabled' AND (w.events @> ARRAY['*']::text[] OR w.events @> ARRAY[$6]::text[]) ORDER BY w.id`,
      [eventId, payoutId, at, at, templates.integrationId, "payout.created"]
    )
    response = JSON.stringify(presented)
    await client.query(
      `INSERT INTO idempotency_keys (integration_id, idempotency_key, request_hash, state, response_status, response_body, resource_id)
       VALUES ($1, $2, $3, 'done', $4, $5::jsonb, $6) ON CONFLICT (integration_id, idempotency_key) DO UPDATE
       SET state = 'done', response_status = EXCLUDED.response_status, response_body = EXCLUDED.response_body, resource_id = EXCLUDED.resource_id`,
      [templates.integrationId, key, "hash", 201, JSON.stringify(response), payoutId]
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

app.get("/api/integrations/breb/payouts", async (request) => {
  const limit = Number((request.query as { limit?: string }).limit ?? "50")
  const rows = await pool.query(
    "SELECT * FROM payouts WHERE integration_id = $1 ORDER BY created_at, id LIMIT $2",
    [templates.integrationId, limit]
  )
  const items = rows.rows.map((row: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(row).map(([k, v]) => [camel(k), v]))
  )
  return { integrationId: templates.integrationId, items, nextCursor: null }
})

const address = await app.listen({ port: 0, host: "127.0.0.1" })
process.stdout.write(`listening on ${address}\n`)
process.on("SIGTERM", () => void app.close().then(() => pool.end()).then(() => process.exit(0)))
