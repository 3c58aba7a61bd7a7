/**
 * npm run conformance [-- --out-dir <dir>] [-- <kit options, e.g. --grep PAYOUT --seed 7>]
 *
 * Starts the service on a fresh database (a new database on TEST_DATABASE_URL's server when it is set,
 * else a throw-away embedded PostgreSQL) on a free loopback port, issues test keys for two integrations, runs
 * the conformance kit's CLI against it over HTTP in a child process, writes junit.xml and report.json
 * to --out-dir (default .conformance/) and exits with the kit's exit code.
 */
import { createHttpServer } from "../src/http/NodeServer.ts"
import { startThrowawayPostgres } from "../src/db/EmbeddedPostgres.ts"
import { spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { join } from "node:path"
import { NodeHttpServer } from "@effect/platform-node"
import { PgClient } from "@effect/sql-pg"
import { Effect, Exit, Layer, Option, Redacted, References, Scope } from "effect"
import { HttpServer } from "effect/http"
import { NetAddress } from "effect/net"
import { serverLayer } from "../src/App.ts"
import { ApiKeyRepo } from "../src/auth/ApiKeyRepo.ts"
import { AppConfigShape } from "../src/config/Config.ts"
import { redactUrl } from "../src/db/Database.ts"
import { IntegrationRepo } from "../src/auth/IntegrationRepo.ts"

const log = (line: string) => process.stderr.write(`[conformance] ${line}\n`)

const splitArgs = (argv: ReadonlyArray<string>) => {
  const index = argv.indexOf("--out-dir")
  if (index === -1) return { outDir: ".conformance", kitArgs: argv.filter((arg) => arg !== "--") }
  const outDir = argv[index + 1]
  if (outDir === undefined) throw new Error("--out-dir needs a directory")
  return { outDir, kitArgs: [...argv.slice(0, index), ...argv.slice(index + 2)].filter((arg) => arg !== "--") }
}

const withAdmin = <A>(url: string, f: (sql: PgClient.PgClient) => Effect.Effect<A, unknown>) =>
  Effect.runPromise(
    Effect.flatMap(PgClient.PgClient, f).pipe(
      Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 }))
    )
  )

/** A fresh database: its own on TEST_DATABASE_URL's server (dropped afterwards), or a throw-away embedded server. */
const freshDatabase = async (): Promise<{ readonly url: string; readonly drop: () => Promise<void> }> => {
  const serverUrl = process.env["TEST_DATABASE_URL"]
  if (serverUrl === undefined || serverUrl === "") {
    const server = await startThrowawayPostgres()
    log(`database: throw-away embedded PostgreSQL on 127.0.0.1:${server.port}`)
    return { url: server.url, drop: server.stop }
  }
  const name = `conformance_${randomBytes(5).toString("hex")}`
  await withAdmin(serverUrl, (sql) => sql`CREATE DATABASE ${sql(name)}`)
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  log(`database: ${redactUrl(url.toString())} (new, dropped afterwards)`)
  return {
    url: url.toString(),
    drop: () =>
      withAdmin(serverUrl, (sql) => sql`DROP DATABASE IF EXISTS ${sql(name)} WITH (FORCE)`).then(() => undefined)
  }
}

const startService = async (databaseUrl: string) => {
  const loaded = await Effect.runPromise(AppConfigShape)
  const config = {
    ...loaded,
    databaseUrl: Option.some(Redacted.make(databaseUrl)),
    host: "127.0.0.1",
    port: 0
  }
  const layer = serverLayer(config).pipe(
    Layer.provideMerge(NodeHttpServer.layer(createHttpServer, { port: 0, host: "127.0.0.1" })),
    Layer.provideMerge(Layer.succeed(References.MinimumLogLevel, "Warn"))
  )
  const scope = Effect.runSync(Scope.make())
  const services = await Effect.runPromise(Layer.buildWithScope(layer, scope))
  const run = <A, E>(effect: Effect.Effect<A, E, Layer.Success<typeof layer>>) =>
    Effect.runPromise(Effect.provideContext(effect, services))
  const { address } = await run(HttpServer.HttpServer)
  if (!NetAddress.isInetAddress(address)) throw new Error("expected a TCP address")
  const issueKey = (name: string) =>
    run(Effect.gen(function*() {
      const integration = yield* Effect.flatMap(IntegrationRepo, (repo) => repo.ensure(name))
      return (yield* Effect.flatMap(ApiKeyRepo, (keys) =>
        keys.issue(integration.id, config.mode === "live" ? "live" : "test"))).key
    }))
  return {
    baseUrl: `http://127.0.0.1:${address.port}`,
    mode: config.mode,
    issueKey,
    stop: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

const runKit = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv): Promise<number> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", join("testkit", "src", "cli.ts"), ...args], {
      env,
      stdio: "inherit"
    })
    child.once("error", reject)
    child.once("exit", (code, signal) => resolve(code ?? (signal === null ? 1 : 128)))
  })

const main = async (): Promise<number> => {
  const { kitArgs, outDir } = splitArgs(process.argv.slice(2))
  const database = await freshDatabase()
  const started = performance.now()
  const service = await startService(database.url)
  try {
    log(`service (${service.mode} mode) on ${service.baseUrl}, ready in ${Math.round(performance.now() - started)} ms`)
    const [first, second] = [await service.issueKey("conformance-a"), await service.issueKey("conformance-b")]
    return await runKit(
      [
        "--base-url",
        service.baseUrl,
        "--reporter",
        "console",
        "--reporter",
        `junit=${join(outDir, "junit.xml")}`,
        "--reporter",
        `json=${join(outDir, "report.json")}`,
        ...kitArgs
      ],
      { ...process.env, CONFORMANCE_API_KEY: first, CONFORMANCE_SECOND_API_KEY: second }
    )
  } finally {
    await service.stop()
    await database.drop()
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    log(`failed: ${error instanceof Error ? error.stack ?? error.message : String(error)}`)
    process.exit(2)
  }
)
