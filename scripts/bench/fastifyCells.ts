/**
 * The service beside the Fastify + pg baseline (baselines/fastifyPg.ts) on the same database: cached quote, payout
 * create with an Idempotency-Key, confirm, get, list limit 50, and list limit 500 after bulk-seeding 10,000 payouts
 * with SQL; then pgbench running the create sequence of before issue #10 (simple and prepared protocol) as the
 * database's own ceiling.
 */
import { execFileSync, spawnSync } from "node:child_process"
import { randomUUID } from "node:crypto"
import { writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import type { LoadRequest } from "./load.ts"
import { API, approvedCustomer, json, payoutBody, type Service } from "./service.ts"

interface Db {
  query(text: string, values?: ReadonlyArray<unknown>): Promise<{ rows: Array<Record<string, unknown>> }>
  end(): Promise<void>
}

export const SEEDED = 10_000

const literal = (value: unknown): string => {
  if (value === null || value === undefined) return "NULL"
  if (value instanceof Date) return `'${value.toISOString()}'`
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") {
    return `'${String(value).replaceAll("'", "''")}'`
  }
  // pgbench reads `:name` inside any literal as a variable: JSON (full of `":`) is replaced by an empty array.
  return `'[]'::jsonb`
}

/** Templates for the baseline, taken from the service's own answers and its stored row. */
export const prepareFastify = async (service: Service, databaseUrl: string) => {
  const api = `${service.baseUrl}${API}`
  const userAddress = await approvedCustomer(service)
  const quote = await fetch(`${api}/quote?destinationCop=250000`, { headers: service.auth }).then((r) =>
    r.json() as Promise<Record<string, unknown>>
  )
  const payout = await fetch(`${api}/payouts`, {
    method: "POST",
    headers: { ...service.auth, ...json, "idempotency-key": randomUUID() },
    body: payoutBody(userAddress)
  }).then((r) => r.json() as Promise<{ payoutId: string }>)
  const db = new pg.Pool({ connectionString: databaseUrl, max: 1 }) as unknown as Db
  try {
    const [row] = (await db.query("SELECT * FROM payouts WHERE id = $1", [payout.payoutId])).rows
    if (row === undefined) throw new Error("the template payout was not stored")
    const integrationId = String(row["integration_id"])
    const health = await fetch(`${service.baseUrl}/healthz`).then((r) => r.text())
    return { templates: { key: service.key, integrationId, userAddress, health, quote, payout, row }, row, userAddress }
  } finally {
    await db.end()
  }
}

/**
 * Bulk-seeds `count` payouts of the template's integration (copies of its row, older, with new ids), in batches
 * of at most 100,000 rows; `from` numbers them after an earlier seeding.
 */
export const seedPayouts = async (databaseUrl: string, row: Record<string, unknown>, count: number, from = 0) => {
  const db = new pg.Pool({ connectionString: databaseUrl, max: 1 }) as unknown as Db
  const columns = Object.keys(row)
  const select = columns.map((c) =>
    c === "id" ?
      `'po_seed_' || g` :
      c === "provider_transfer_id" ?
      `'tr_seed_' || g` :
      c === "created_at" || c === "updated_at"
      ? `p.${c} - g * interval '1 millisecond'`
      : `p."${c}"`
  )
  try {
    for (let start = from + 1; start <= from + count; start += 100_000) {
      await db.query(
        `INSERT INTO payouts (${columns.map((c) => `"${c}"`).join(",")}) SELECT ${select.join(",")}
         FROM payouts p, generate_series($2::int, $3::int) g WHERE p.id = $1`,
        [row["id"], start, Math.min(from + count, start + 99_999)]
      )
    }
    await db.query("ANALYZE payouts")
  } finally {
    await db.end()
  }
}

export const fastifyWorkloads = (templates: { userAddress: string }, auth: Record<string, string>) => {
  const create = (prefix: string): LoadRequest => ({
    path: `${API}/payouts`,
    method: "POST",
    headers: { ...auth, ...json },
    body: (i) => ({
      body: payoutBody(templates.userAddress),
      headers: { "idempotency-key": `${prefix}-${randomUUID()}-${i}` }
    })
  })
  return {
    quote: { path: `${API}/quote?destinationCop=250000`, headers: auth } satisfies LoadRequest,
    create,
    one: (payoutId: string): LoadRequest => ({ path: `${API}/payouts/${payoutId}`, headers: auth }),
    list: (limit: number): LoadRequest => ({ path: `${API}/payouts?limit=${limit}`, headers: auth })
  }
}

/** pgbench with the baseline's create sequence; null when pgbench is not installed or fails. */
export const pgbenchCreate = (
  databaseUrl: string,
  templates: { integrationId: string; userAddress: string },
  row: Record<string, unknown>,
  seconds: number
) => {
  if (spawnSync("pgbench", ["--version"]).status !== 0) return null
  const columns = Object.keys(row)
  const values = columns.map((c) =>
    c === "id"
      ? ":pid"
      : c === "provider_transfer_id"
      ? "'tr_' || :pid"
      : c === "created_at" || c === "updated_at"
      ? "now()"
      : literal(row[c])
  )
  const integration = literal(templates.integrationId)
  const script = `
\\set n random(1, 2000000000)
\\set pid '\\'po_bench_' || :client_id || '_' || :n || '\\''
INSERT INTO idempotency_keys (integration_id, idempotency_key, request_hash, state, response_status, response_body, resource_id, provider_key, attempt, started_at) VALUES (${integration}, 'pgb-' || :client_id || '-' || :n, 'hash', 'started', 0, '{}'::jsonb, 'r', 'p', 'a', now()) ON CONFLICT DO NOTHING RETURNING 1 AS claimed;
SELECT integration_id, user_address, email, kyc_status, kyc_url, provider_customer_id FROM customers WHERE integration_id = ${integration} AND user_address = ${
    literal(templates.userAddress.toLowerCase())
  };
SELECT sell_rate, mid_rate, fetched_at FROM rate_cache WHERE pair = 'USD_COP' AND fetched_at > now() - interval '30 seconds';
UPDATE idempotency_keys SET intent = '{}'::jsonb WHERE integration_id = ${integration} AND idempotency_key = 'pgb-' || :client_id || '-' || :n AND state = 'started' AND attempt = 'a';
BEGIN;
SELECT request_hash, state, response_status, response_body, resource_id, provider_key, attempt, intent, false AS stale FROM idempotency_keys WHERE integration_id = ${integration} AND idempotency_key = 'pgb-' || :client_id || '-' || :n FOR UPDATE;
INSERT INTO payouts (${columns.map((c) => `"${c}"`).join(",")}) VALUES (${
    values.join(",").replaceAll(":pid", "'po_bench_' || :client_id || '_' || :n")
  }) RETURNING *;
INSERT INTO event_sequences (integration_id, resource_id, last_sequence) VALUES (${integration}, 'po_bench_' || :client_id || '_' || :n, 1) ON CONFLICT (integration_id, resource_id) DO UPDATE SET last_sequence = event_sequences.last_sequence + 1;
INSERT INTO events (id, integration_id, type, resource_id, sequence, body, created_at) VALUES ('evt_bench_' || :client_id || '_' || :n, ${integration}, 'payout.created', 'po_bench_' || :client_id || '_' || :n, 1, '{}', now());
INSERT INTO event_deliveries (event_id, endpoint_id, resource_id, state, next_attempt_at, created_at) SELECT 'evt_bench_' || :client_id || '_' || :n, w.id, 'po', 'pending', now(), now() FROM webhook_endpoints w WHERE w.integration_id = ${integration} AND w.deleted_at IS NULL AND w.status = 'enabled' ORDER BY w.id;
INSERT INTO idempotency_keys (integration_id, idempotency_key, request_hash, state, response_status, response_body, resource_id) VALUES (${integration}, 'pgb-' || :client_id || '-' || :n, 'hash', 'done', 201, '"{}"'::jsonb, 'po') ON CONFLICT (integration_id, idempotency_key) DO UPDATE SET state = 'done', response_status = EXCLUDED.response_status, response_body = EXCLUDED.response_body, resource_id = EXCLUDED.resource_id;
COMMIT;
`.replace("\\set pid '\\'po_bench_' || :client_id || '_' || :n || '\\''\n", "")
  const file = join(tmpdir(), `bench-create-${process.pid}.sql`)
  writeFileSync(file, script)
  const url = new URL(databaseUrl)
  const run = (mode: "simple" | "prepared") => {
    const out = execFileSync("pgbench", [
      "-n",
      "-f",
      file,
      "-M",
      mode,
      "-c",
      "16",
      "-j",
      "2",
      "-T",
      String(seconds),
      "-h",
      url.hostname,
      "-p",
      url.port || "5432",
      "-U",
      decodeURIComponent(url.username || "postgres"),
      url.pathname.slice(1)
    ], { env: { ...process.env, PGPASSWORD: decodeURIComponent(url.password) }, encoding: "utf8" })
    return Math.round(Number(/tps = ([\d.]+)/.exec(out)?.[1] ?? "0"))
  }
  try {
    return { simple: run("simple"), prepared: run("prepared") }
  } catch (error) {
    console.log(`pgbench failed: ${String(error).split("\n")[0]}`)
    return null
  }
}
