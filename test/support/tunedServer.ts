/**
 * Like `startTestServer`, for tests that change how the app reaches its database: the app may connect
 * through another URL (a TCP proxy, see ./tcpProxy.ts), and `overrides` provides values the app's
 * layers read with a production default (e.g. shorter database timeouts). The test keeps a direct
 * connection to the same database (`direct`) that the proxy does not affect.
 */
import { createServer } from "node:http"
import { HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import type { SqlClient } from "@effect/sql"
import { ConfigProvider, Effect, Exit, Layer, Logger, LogLevel, Option, Redacted, type Runtime, Scope } from "effect"
import { serverLayer } from "../../src/App.ts"
import { ApiKeyRepo } from "../../src/auth/ApiKeyRepo.ts"
import { AppConfigShape } from "../../src/Config.ts"
import { IntegrationRepo } from "../../src/integrations/IntegrationRepo.ts"
import { acquireTestDatabase, type TestDatabase } from "./database.ts"
import type { TestServer } from "./server.ts"

export interface TunedServerOptions {
  /** The URL the app connects with, given the test database's own URL (default: that URL). */
  readonly appDatabaseUrl?: (url: string) => string | Promise<string>
  /** Provided to the app's layers (Context.Reference overrides). */
  readonly overrides?: Layer.Layer<never>
  readonly env?: Record<string, string>
}

export interface TunedServer extends TestServer {
  /** Runs an Effect on a direct connection to the test database (not through the app's pool). */
  readonly direct: <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) => Promise<A>
}

const testDefaults: Record<string, string> = {
  MOCK_LIFECYCLE_DELAY_MS: "150",
  JOBS_POLL_INTERVAL_MS: "25",
  RATE_LIMIT_PER_SECOND: "1000",
  RATE_LIMIT_BURST: "2000"
}

let integrationCounter = 0

const closeAll = async (scope: Scope.CloseableScope, database: TestDatabase) => {
  await Effect.runPromise(Scope.close(scope, Exit.void))
  await database.release()
}

export const startTunedServer = async (options: TunedServerOptions = {}): Promise<TunedServer> => {
  const env = new Map(Object.entries({ ...testDefaults, ...options.env }))
  const loaded = await Effect.runPromise(Effect.withConfigProvider(AppConfigShape, ConfigProvider.fromMap(env)))
  const database = await acquireTestDatabase()
  let appUrl = database.url
  try {
    appUrl = (await options.appDatabaseUrl?.(database.url)) ?? database.url
  } catch (error) {
    await database.release()
    throw error
  }
  const config = { ...loaded, databaseUrl: Option.some(Redacted.make(appUrl)), port: 0 }

  const layer = serverLayer(config).pipe(
    Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
    Layer.provide(options.overrides ?? Layer.empty),
    Layer.provide(Logger.minimumLogLevel(LogLevel.None))
  )
  const scope = Effect.runSync(Scope.make())
  const directScope = Effect.runSync(Scope.make())
  let runtime: Runtime.Runtime<Layer.Layer.Success<typeof layer>>
  let directRuntime: Runtime.Runtime<SqlClient.SqlClient>
  try {
    directRuntime = await Effect.runPromise(Scope.extend(Layer.toRuntime(database.layer), directScope))
    runtime = await Effect.runPromise(Scope.extend(Layer.toRuntime(layer), scope))
  } catch (error) {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    await closeAll(directScope, database)
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
    logs: [],
    newIntegration: (kind = "test") =>
      run(Effect.gen(function*() {
        const integration = yield* IntegrationRepo.pipe(
          Effect.flatMap((repo) => repo.ensure(`tuned-${process.pid}-${++integrationCounter}-${Date.now()}`))
        )
        const issued = yield* Effect.flatMap(ApiKeyRepo, (keys) => keys.issue(integration.id, kind))
        return { integrationId: integration.id, apiKey: issued.key }
      })),
    run,
    direct: (effect) => Effect.runPromise(Effect.provide(effect, directRuntime)),
    close: async () => {
      await Effect.runPromise(Scope.close(scope, Exit.void))
      await closeAll(directScope, database)
    }
  }
}
