/**
 * A real server for HTTP tests: the app's own `serverLayer` on a random loopback port, against a fresh
 * database from the picker (TEST_DATABASE_URL → Docker → PGlite). Tests talk to it over real HTTP, with
 * `fetch` for raw wire checks and the typed client derived from the contract.
 */
import { FetchHttpClient, HttpApiClient, HttpClient, HttpClientRequest, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import type { SqlClient } from "@effect/sql"
import { IntegrationsApi } from "@cop-integrations/contracts"
import { ConfigProvider, Effect, Exit, Layer, Logger, LogLevel, Option, Redacted, type Runtime, Scope } from "effect"
import { serverLayer } from "../../src/App.ts"
import { ApiKeyRepo } from "../../src/auth/ApiKeyRepo.ts"
import type { KeyKind } from "../../src/auth/ApiKey.ts"
import { AppConfigShape } from "../../src/Config.ts"
import { createHttpServer } from "../../src/http/NodeServer.ts"
import { IntegrationRepo } from "../../src/integrations/IntegrationRepo.ts"
import { acquireTestDatabase, type TestDatabase } from "./database.ts"

export type AppConfig = Effect.Effect.Success<typeof AppConfigShape>

export interface TestServerOptions {
  /** Environment variables as the service would read them (e.g. `{ MOCK_OTP_DEBUG_CODE: "654321" }`). */
  readonly env?: Record<string, string>
  /** Collect every log line (JSON) the server writes, for log-hygiene tests. */
  readonly captureLogs?: boolean
}

export interface TestServer {
  readonly baseUrl: string
  readonly config: AppConfig
  readonly database: TestDatabase
  readonly logs: ReadonlyArray<string>
  /** A fresh integration (unique name) and one key for it. */
  readonly newIntegration: (kind?: KeyKind) => Promise<{ readonly integrationId: string; readonly apiKey: string }>
  /** Runs an Effect with the app's services (SqlClient, repos, ...) against the test database. */
  readonly run: <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient | ApiKeyRepo | IntegrationRepo>) => Promise<A>
  readonly close: () => Promise<void>
}

const testDefaults: Record<string, string> = {
  MOCK_LIFECYCLE_DELAY_MS: "150",
  JOBS_POLL_INTERVAL_MS: "25",
  EXPIRY_SWEEP_INTERVAL_MS: "100",
  RATE_LIMIT_PER_SECOND: "1000",
  RATE_LIMIT_BURST: "2000"
}

let integrationCounter = 0

export const startTestServer = async (options: TestServerOptions = {}): Promise<TestServer> => {
  const database = await acquireTestDatabase()
  const env = new Map(Object.entries({ ...testDefaults, ...options.env }))
  const loaded = await Effect.runPromise(
    Effect.withConfigProvider(AppConfigShape, ConfigProvider.fromMap(env))
  )
  const config: AppConfig = { ...loaded, databaseUrl: Option.some(Redacted.make(database.url)), port: 0 }
  const logs: Array<string> = []
  const logging = options.captureLogs === true
    ? Logger.replace(Logger.defaultLogger, Logger.map(Logger.jsonLogger, (line) => void logs.push(line)))
    : Logger.minimumLogLevel(LogLevel.Warning)

  const layer = serverLayer(config).pipe(
    Layer.provideMerge(NodeHttpServer.layer(createHttpServer, { port: 0, host: "127.0.0.1" })),
    Layer.provide(logging)
  )
  const scope = Effect.runSync(Scope.make())
  let runtime: Runtime.Runtime<Layer.Layer.Success<typeof layer>>
  try {
    runtime = await Effect.runPromise(Scope.extend(Layer.toRuntime(layer), scope))
  } catch (error) {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    await database.release()
    throw error
  }
  const run = <A, E>(effect: Effect.Effect<A, E, Layer.Layer.Success<typeof layer>>) =>
    Effect.runPromise(Effect.provide(effect, runtime))
  const address = await run(HttpServer.addressWith(Effect.succeed))
  if (address._tag !== "TcpAddress") throw new Error("expected a TCP address")

  return {
    baseUrl: `http://127.0.0.1:${address.port}`,
    config,
    database,
    logs,
    newIntegration: (kind = "test") =>
      run(Effect.gen(function*() {
        const integration = yield* IntegrationRepo.pipe(
          Effect.flatMap((repo) => repo.ensure(`it-${process.pid}-${++integrationCounter}-${Date.now()}`))
        )
        const issued = yield* Effect.flatMap(ApiKeyRepo, (keys) => keys.issue(integration.id, kind))
        return { integrationId: integration.id, apiKey: issued.key }
      })),
    run,
    close: async () => {
      await Effect.runPromise(Scope.close(scope, Exit.void))
      await database.release()
    }
  }
}

/** The typed client derived from the contract, authenticated with `apiKey`. */
export const typedClient = (baseUrl: string, apiKey: string) =>
  HttpApiClient.make(IntegrationsApi, {
    baseUrl,
    transformClient: HttpClient.mapRequest(HttpClientRequest.bearerToken(apiKey))
  })

/** Runs `f` with the typed client; failures come back as the contract's error classes. */
export const withClient = <A, E>(
  baseUrl: string,
  apiKey: string,
  f: (client: Effect.Effect.Success<ReturnType<typeof typedClient>>) => Effect.Effect<A, E>
): Promise<A> =>
  Effect.runPromise(Effect.flatMap(typedClient(baseUrl, apiKey), f).pipe(Effect.provide(FetchHttpClient.layer)))

/** Like `withClient` but resolves to the Exit, so tests can assert on typed failures. */
export const clientExit = <A, E>(
  baseUrl: string,
  apiKey: string,
  f: (client: Effect.Effect.Success<ReturnType<typeof typedClient>>) => Effect.Effect<A, E>
) => Effect.runPromiseExit(Effect.flatMap(typedClient(baseUrl, apiKey), f).pipe(Effect.provide(FetchHttpClient.layer)))
