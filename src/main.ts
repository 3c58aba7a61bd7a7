import { createServer } from "node:http"
import { HttpServer } from "@effect/platform"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { SqlError } from "@effect/sql"
import { Cause, ConfigError, Console, Effect, Layer, Option } from "effect"
import { serverLayer } from "./App.ts"
import { AppConfigShape, describeDatabase } from "./Config.ts"
import { bootstrapDemo } from "./integrations/Demo.ts"
import { LoggingLive } from "./Logging.ts"

const banner = (lines: ReadonlyArray<string>) => Console.log(["", ...lines.map((line) => `  ${line}`), ""].join("\n"))

const main = Effect.gen(function*() {
  const config = yield* AppConfigShape
  const startedAt = performance.now()
  const server = serverLayer(config).pipe(
    Layer.provideMerge(NodeHttpServer.layer(createServer, { port: config.port, host: config.host }))
  )
  yield* Effect.scoped(Effect.gen(function*() {
    const context = yield* Layer.build(server)
    const demoKey = yield* Effect.provide(bootstrapDemo, context)
    const address = yield* Effect.provide(HttpServer.addressWith(Effect.succeed), context)
    const base = address._tag === "TcpAddress" ? `http://${address.hostname}:${address.port}` : `unix:${address.path}`
    yield* banner([
      `Integrations API ${config.mode} mode, ready in ${Math.round(performance.now() - startedAt)} ms`,
      `listening on ${base}   docs: ${base}/docs   openapi: ${base}/openapi.json`,
      `database: ${describeDatabase(config)}`,
      ...Option.match(demoKey, {
        onSome: (key) => [`test API key for integration "demo" (shown once, store it now):`, key],
        onNone: () => [
          config.mode === "mock" ? "issue a test key: npm run -s keys -- issue <integration-name>" : ""
        ]
      })
    ])
    // SIGTERM/SIGINT interrupt this fiber; the server then stops accepting and drains in-flight requests.
    process.once("SIGTERM", () => setTimeout(() => process.exit(1), config.shutdownGraceMs).unref())
    return yield* Effect.never
  }))
})

const causeMessage = (error: SqlError.SqlError) =>
  error.cause instanceof Error && error.cause.message !== "" ? `: ${error.cause.message}` : ""

/** A configuration or database mistake is one plain line for the operator; anything else is logged with its cause. */
const reportFailure = (cause: Cause.Cause<unknown>) => {
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure) && ConfigError.isConfigError(failure.value)) {
    return Console.error(`configuration error: ${String(failure.value).replace(/^\((.*)\)$/s, "$1")}`)
  }
  if (Option.isSome(failure) && failure.value instanceof SqlError.SqlError) {
    return Console.error(`database error: ${failure.value.message}${causeMessage(failure.value)}`)
  }
  return Cause.isInterruptedOnly(cause) ? Effect.void : Effect.logError("the service stopped", cause)
}

NodeRuntime.runMain(main.pipe(Effect.tapErrorCause(reportFailure), Effect.provide(LoggingLive)), {
  disablePrettyLogger: true,
  disableErrorReporting: true
})
