/**
 * A real server for HTTP tests: the app's own `serverLayer` on a random loopback port, against a fresh
 * database from the picker (test/support/database.ts). Tests talk to it over real HTTP, with
 * `fetch` for raw wire checks and the typed client derived from the contract.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { type IntegrationId, IntegrationsApi } from "@cop-integrations/contracts"
import { ConfigProvider, Context, Effect, Exit, Layer, Logger, Option, Redacted, References, Scope } from "effect"
import { FetchHttpClient, HttpClient, HttpClientRequest, HttpServer } from "effect/http"
import { HttpApiClient } from "effect/http-api"
import type { SqlClient } from "effect/sql"
import { serverLayer } from "../../src/App.ts"
import { ApiKeyRepo } from "../../src/auth/ApiKeyRepo.ts"
import type { KeyKind } from "../../src/auth/ApiKey.ts"
import { jsonLogger } from "../../src/base/Logging.ts"
import { AppConfigShape } from "../../src/config/Config.ts"
import { createHttpServer } from "../../src/http/NodeServer.ts"
import { IntegrationRepo } from "../../src/auth/IntegrationRepo.ts"
import { acquireTestDatabase, type TestDatabase } from "./database.ts"

export type AppConfig = AppConfigShape

export interface TestServerOptions {
  /** Environment variables as the service would read them (e.g. `{ MOCK_OTP_DEBUG_CODE: "654321" }`). */
  readonly env?: Record<string, string>
  /** Collect every log line (JSON) the server writes, for log-hygiene tests. */
  readonly captureLogs?: boolean
  /** The URL the app connects with, given the test database's own URL (e.g. through ./tcpProxy.ts). */
  readonly appDatabaseUrl?: (url: string) => string | Promise<string>
  /** Provided to the app's layers: overrides of values read with a production default (Context.Reference). */
  readonly overrides?: Layer.Layer<never>
  /** The app to serve; `serverLayer` (the configured mode's Layers) by default. */
  readonly app?: typeof serverLayer
  /** Serve on this database (another server's: a second replica) instead of a fresh one; it is left to its owner. */
  readonly database?: TestDatabase
}

export interface TestServer {
  readonly baseUrl: string
  readonly config: AppConfig
  readonly database: TestDatabase
  readonly logs: ReadonlyArray<string>
  /** A fresh integration (unique name) and one key for it. */
  readonly newIntegration: (
    kind?: KeyKind
  ) => Promise<{ readonly integrationId: IntegrationId; readonly apiKey: string }>
  /** Runs an Effect with the app's services (SqlClient, repos, ...) against the test database. */
  readonly run: <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient | ApiKeyRepo | IntegrationRepo>) => Promise<A>
  /** Runs an Effect on a connection of its own to the test database (not the app's pool, not via a proxy). */
  readonly direct: <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) => Promise<A>
  readonly close: () => Promise<void>
}

const testDefaults: Record<string, string> = {
  MOCK_LIFECYCLE_DELAY_MS: "150",
  JOBS_POLL_INTERVAL_MS: "25",
  JOBS_IDLE_INTERVAL_MS: "25",
  EXPIRY_SWEEP_INTERVAL_MS: "100",
  RATE_LIMIT_PER_SECOND: "1000",
  RATE_LIMIT_BURST: "2000",
  // Every payout without a previewId verifies its destination: tests that create many set no budget of their own.
  PREVIEW_RATE_LIMIT_PER_MINUTE: "100000"
}

let integrationCounter = 0

export const startTestServer = async (options: TestServerOptions = {}): Promise<TestServer> => {
  const database = options.database ?? await acquireTestDatabase()
  const scope = Effect.runSync(Scope.make())
  const close = async () => {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    if (options.database === undefined) await database.release()
  }
  try {
    return await serveOn(database, scope, close, options)
  } catch (error) {
    await close()
    throw error
  }
}

const serveOn = async (
  database: TestDatabase,
  scope: Scope.Closeable,
  close: () => Promise<void>,
  options: TestServerOptions
): Promise<TestServer> => {
  const env = { ...testDefaults, ...options.env }
  const loaded = await Effect.runPromise(
    Effect.provideService(AppConfigShape, ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env }))
  )
  const appUrl = (await options.appDatabaseUrl?.(database.url)) ?? database.url
  const config: AppConfig = { ...loaded, databaseUrl: Option.some(Redacted.make(appUrl)), port: 0 }
  const logs: Array<string> = []
  const logging = options.captureLogs === true
    ? Logger.layer([Logger.map(jsonLogger, (line) => void logs.push(line))])
    : Layer.succeed(References.MinimumLogLevel, "Warn")

  const layer = (options.app ?? serverLayer)(config).pipe(
    Layer.provideMerge(NodeHttpServer.layer(createHttpServer, { port: 0, host: "127.0.0.1" })),
    Layer.provide(options.overrides ?? Layer.empty),
    Layer.provide(logging)
  )
  // Closed last (scopes close their finalizers in reverse): the direct pool outlives the app's.
  const directContext = await Effect.runPromise(Layer.buildWithScope(database.layer, scope))
  const context = await Effect.runPromise(Layer.buildWithScope(layer, scope))
  const run = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient | ApiKeyRepo | IntegrationRepo>) =>
    Effect.runPromise(Effect.provideContext(effect, context))
  const { address } = Context.get(context, HttpServer.HttpServer)
  if (address._tag === "UnixPathAddress") throw new Error("expected a TCP address")

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
    direct: (effect) => Effect.runPromise(Effect.provideContext(effect, directContext)),
    close
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
  f: (client: Effect.Success<ReturnType<typeof typedClient>>) => Effect.Effect<A, E>
): Promise<A> =>
  Effect.runPromise(Effect.flatMap(typedClient(baseUrl, apiKey), f).pipe(Effect.provide(FetchHttpClient.layer)))

/** Like `withClient` but resolves to the Exit, so tests can assert on typed failures. */
export const clientExit = <A, E>(
  baseUrl: string,
  apiKey: string,
  f: (client: Effect.Success<ReturnType<typeof typedClient>>) => Effect.Effect<A, E>
) => Effect.runPromiseExit(Effect.flatMap(typedClient(baseUrl, apiKey), f).pipe(Effect.provide(FetchHttpClient.layer)))
