/** The one line an operator sees when the service cannot start, computed in-process (no process per case). */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { ConfigProvider, Effect, Exit, Layer, Option, References } from "effect"
import { serverLayer } from "../../src/App.ts"
import { startupFailureLine } from "../../src/base/StartupFailure.ts"
import { AppConfigShape, databaseTarget } from "../../src/config/Config.ts"
import { createHttpServer } from "../../src/http/NodeServer.ts"

/** Builds the app from `env` (PORT 0) and answers its start-up failure line, or "started". */
export const startupFailure = async (env: Record<string, string>) => {
  let database: string | undefined
  const exit = await Effect.runPromiseExit(
    Effect.flatMap(AppConfigShape, (config) => {
      database = databaseTarget(config)
      return Layer.build(
        serverLayer(config).pipe(Layer.provide(NodeHttpServer.layer(createHttpServer, { port: 0, host: "127.0.0.1" })))
      )
    }).pipe(
      Effect.scoped,
      Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: { PORT: "0", ...env } })),
      Effect.provideService(References.MinimumLogLevel, "None")
    )
  )
  return Exit.isFailure(exit) ? Option.getOrUndefined(startupFailureLine(exit.cause, database)) : "started"
}
