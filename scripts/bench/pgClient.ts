/**
 * `npx tsx scripts/bench/pgClient.ts`: the same statements through plain `pg` (named prepared statements, its promise
 * API) and through the service's client (src/db/PgSqlClient.ts over src/db/PgPool.ts, as src/db/Database.ts builds
 * it), in this one process, 16 at a time, alternating rounds; CPU µs of this process per statement (user + system,
 * `process.cpuUsage`), so what the client costs on top of the same driver is what differs. Also @effect/sql-pg 4's own
 * driver, for reference. DATABASE_URL names the server (a table `bench_client_rows` is created and dropped there).
 * It runs bundled, as `npm start` runs the service (esbuild, NODE_BUNDLE): under tsx every function of src/ would carry
 * a naming helper the bundle does not. BENCH_CLIENTS / BENCH_WORKLOADS (comma-separated) pick a subset, BENCH_ROUNDS and
 * BENCH_STATEMENTS the size, BENCH_NODE_ARGS node's flags (`--cpu-prof` …).
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, type Layer, ManagedRuntime, Option, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { spawnSync } from "node:child_process"
import { randomUUID } from "node:crypto"
import { mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import pg from "pg"
import { makeSqlLayer } from "../../src/db/Database.ts"

const url = process.env["DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/test"
const ROUNDS = Number(process.env["BENCH_ROUNDS"] ?? "5")
const PER_ROUND = Number(process.env["BENCH_STATEMENTS"] ?? "4000")
const CONCURRENCY = 16
const SEEDED = 1000

const TABLE = `CREATE TABLE IF NOT EXISTS bench_client_rows (
  id uuid PRIMARY KEY, integration_id uuid NOT NULL, status text NOT NULL, amount numeric NOT NULL,
  big int8 NOT NULL, created_at timestamptz NOT NULL DEFAULT now(), data jsonb NOT NULL, note text)`

const ids: Array<string> = Array.from({ length: SEEDED }, () => randomUUID())
const integration = randomUUID()
const idAt = (i: number) => ids[i % SEEDED]!

/** One workload, written for each client: `run(i)` sends statement number i. */
interface Client {
  readonly select1: (i: number) => Promise<unknown>
  readonly byKey: (i: number) => Promise<unknown>
  readonly insert: (i: number) => Promise<unknown>
  /** A transaction of three statements (read, update, insert): counted as three. */
  readonly transaction3: (i: number) => Promise<unknown>
  readonly close: () => Promise<void>
}

const STATEMENTS = {
  select1: "SELECT $1::int4 AS n",
  byKey: "SELECT * FROM bench_client_rows WHERE id = $1",
  insert:
    "INSERT INTO bench_client_rows (id, integration_id, status, amount, big, data, note) VALUES ($1, $2, $3, $4, $5, $6, $7)",
  update: "UPDATE bench_client_rows SET note = $2 WHERE id = $1"
}

const plainPg = (): Client => {
  const pool = new pg.Pool({ connectionString: url, max: 10 })
  const q = (name: keyof typeof STATEMENTS, values: Array<unknown>) =>
    pool.query({ name, text: STATEMENTS[name], values })
  return {
    select1: (i) => q("select1", [i]),
    byKey: (i) => q("byKey", [idAt(i)]),
    insert: () => q("insert", [randomUUID(), integration, "created", "12.50", "7", "{\"a\":1}", "x"]),
    transaction3: async (i) => {
      const client = await pool.connect()
      try {
        await client.query("BEGIN")
        await client.query({ name: "byKey", text: STATEMENTS.byKey, values: [idAt(i)] })
        await client.query({ name: "update", text: STATEMENTS.update, values: [idAt(i), `n${i}`] })
        await client.query({
          name: "insert",
          text: STATEMENTS.insert,
          values: [randomUUID(), integration, "created", "12.50", "7", "{\"a\":1}", "x"]
        })
        await client.query("COMMIT")
      } finally {
        client.release()
      }
    },
    close: () => pool.end()
  }
}

/** The four workloads through an effect/sql client, run on a runtime built once from `layer`. */
const throughEffect = async (layer: Layer.Layer<SqlClient.SqlClient, unknown>): Promise<Client> => {
  const runtime = ManagedRuntime.make(layer)
  const sql = await runtime.runPromise(Effect.service(SqlClient.SqlClient))
  const run = <A>(effect: Effect.Effect<A, unknown, never>) => Effect.runPromise(effect)
  const insert = () =>
    sql`INSERT INTO bench_client_rows (id, integration_id, status, amount, big, data, note) VALUES (${randomUUID()}, ${integration}, ${"created"}, ${"12.50"}, ${"7"}, ${"{\"a\":1}"}, ${"x"})`
  return {
    select1: (i) => run(sql`SELECT ${i}::int4 AS n`),
    byKey: (i) => run(sql`SELECT * FROM bench_client_rows WHERE id = ${idAt(i)}`),
    insert: () => run(insert()),
    transaction3: (i) =>
      run(sql.withTransaction(Effect.gen(function*() {
        yield* sql`SELECT * FROM bench_client_rows WHERE id = ${idAt(i)}`
        yield* sql`UPDATE bench_client_rows SET note = ${`n${i}`} WHERE id = ${idAt(i)}`
        yield* insert()
      }))),
    close: () => runtime.dispose()
  }
}

const serviceClient = () =>
  throughEffect(makeSqlLayer({
    url: Option.some(Redacted.make(url)),
    embeddedDataDir: "",
    preparedStatements: true,
    pooler: "none",
    directUrl: Option.none()
  }))

const nativeClient = () => throughEffect(PgClient.layer({ url: Redacted.make(url), maxConnections: 10 }))

type Workload = "select1" | "byKey" | "insert" | "transaction3"
const STATEMENTS_PER_CALL: Record<Workload, number> = { select1: 1, byKey: 1, insert: 1, transaction3: 3 }

/** CPU µs of this process per statement over `PER_ROUND` statements, `CONCURRENCY` in flight. */
const measure = async (client: Client, workload: Workload): Promise<number> => {
  const calls = Math.round(PER_ROUND / STATEMENTS_PER_CALL[workload])
  let next = 0
  const worker = async () => {
    while (next < calls) await client[workload](next++)
  }
  const before = process.cpuUsage()
  await Promise.all(Array.from({ length: CONCURRENCY }, worker))
  const used = process.cpuUsage(before)
  return (used.user + used.system) / (calls * STATEMENTS_PER_CALL[workload])
}

const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}

const main = async () => {
  const setup = new pg.Client({ connectionString: url })
  await setup.connect()
  await setup.query(TABLE)
  await setup.query("TRUNCATE bench_client_rows")
  await setup.query(
    "INSERT INTO bench_client_rows (id, integration_id, status, amount, big, data, note) SELECT unnest($1::uuid[]), $2, 'created', 12.5, 7, '{\"a\":1}', 'x'",
    [ids, integration]
  )
  const makers: Record<string, () => Client | Promise<Client>> = {
    "plain pg": plainPg,
    "service client": serviceClient,
    "@effect/sql-pg 4": nativeClient
  }
  const onlyClients = process.env["BENCH_CLIENTS"]?.split(",")
  const clients: Record<string, Client> = {}
  for (const [name, make] of Object.entries(makers)) {
    if (onlyClients === undefined || onlyClients.some((c) => name.startsWith(c))) clients[name] = await make()
  }
  const only = process.env["BENCH_WORKLOADS"]?.split(",")
  const workloads = (["select1", "byKey", "insert", "transaction3"] as const).filter((w) =>
    only === undefined || only.includes(w)
  )
  const results = new Map<string, Array<number>>()
  for (const [name, client] of Object.entries(clients)) {
    for (const workload of workloads) await measure(client, workload) // warm: prepared statements, JIT
    void name
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (const workload of workloads) {
      for (const [name, client] of Object.entries(clients)) {
        const key = `${workload}\t${name}`
        results.set(key, [...(results.get(key) ?? []), await measure(client, workload)])
      }
    }
  }
  console.log(`CPU µs per statement (median of ${ROUNDS} rounds of ${PER_ROUND} statements, ${CONCURRENCY} at a time)`)
  console.log(`| statement | ${Object.keys(clients).join(" | ")} | service / plain |`)
  console.log(`|---|${Object.keys(clients).map(() => "---|").join("")}---|`)
  for (const workload of workloads) {
    const figures = Object.keys(clients).map((name) => median(results.get(`${workload}\t${name}`)!))
    console.log(
      `| ${workload} | ${figures.map((f) => f.toFixed(0)).join(" | ")} | ${
        ((figures[1] ?? NaN) / (figures[0] ?? NaN)).toFixed(2)
      }× |`
    )
  }
  for (const client of Object.values(clients)) await client.close()
  await setup.query("DROP TABLE bench_client_rows")
  await setup.end()
}

if (process.env["BENCH_PG_CLIENT_BUNDLED"] === "1") {
  await main()
} else {
  const esbuild = await import("esbuild")
  const buildModule: string = "../build.mjs" // untyped JavaScript: its one export used here is esbuild's options
  const { NODE_BUNDLE } = (await import(buildModule)) as { readonly NODE_BUNDLE: object }
  // Inside the project, so the bundle's external packages resolve from its node_modules.
  const cache = join(fileURLToPath(new URL("../../node_modules/.cache", import.meta.url)))
  mkdirSync(cache, { recursive: true })
  const outfile = join(mkdtempSync(join(cache, "bench-pg-client-")), "pgClient.mjs")
  await esbuild.build({
    ...NODE_BUNDLE,
    entryPoints: [fileURLToPath(import.meta.url)],
    outfile,
    minifyWhitespace: true,
    minifySyntax: true
  })
  const child = spawnSync(process.execPath, [
    ...(process.env["BENCH_NODE_ARGS"]?.split(" ").filter(Boolean) ?? []),
    outfile
  ], {
    stdio: "inherit",
    env: { ...process.env, BENCH_PG_CLIENT_BUNDLED: "1" }
  })
  rmSync(dirname(outfile), { recursive: true, force: true })
  process.exitCode = child.status ?? 1
}
