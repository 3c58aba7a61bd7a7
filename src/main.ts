import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Cause, Console, Context, Deferred, Effect, Exit, Fiber, Layer, Option } from "effect"
import { HttpServer } from "effect/http"
import { serverLayer } from "./App.ts"
import { type AppConfigShape, AppConfigShape as LoadConfig, databaseTarget, describeDatabase } from "./config/Config.ts"
import { DatabasePressure } from "./db/DatabasePressure.ts"
import { defaultInFlightLimit } from "./http/InFlightLimit.ts"
import { type AdminListener, serveAdmin } from "./http/AdminServer.ts"
import { createHttpServer } from "./http/NodeServer.ts"
import { manageLifecycle } from "./http/ServeLifecycle.ts"
import { Deployment } from "./auth/Deployment.ts"
import { type DemoAccess, DemoBootstrap } from "./auth/Demo.ts"
import { DashboardSessions } from "./dashboard/DashboardSessions.ts"
import { loggingLayer, LogLevelConfig } from "./base/Logging.ts"
import { startupFailureLine } from "./base/StartupFailure.ts"
import { TracingOff } from "./base/Tracing.ts"

/** On stderr: stdout carries only JSON log lines. */
const banner = (lines: ReadonlyArray<string>) => Console.error(["", ...lines.map((line) => `  ${line}`), ""].join("\n"))

const server = createHttpServer()
/**
 * Connections the kernel completes before the service takes them in (Node's default is 511; Linux caps it at
 * net.core.somaxconn, 4096 by default): past it a burst's connections are dropped or reset before the service can
 * answer them, even with a 503.
 */
const BACKLOG = 4096
const lifecycle = manageLifecycle(server)

/** Completed by SIGTERM/SIGINT once the service is up; before that a signal interrupts the start-up. */
const stopRequested = Deferred.makeUnsafe<NodeJS.Signals>()
/** Completed by a later signal: stop waiting for in-flight requests. */
const hurryRequested = Deferred.makeUnsafe<NodeJS.Signals>()
let serving = false

/** Where a browser on this machine reaches the service: a wildcard address is reached on loopback. */
const browserOrigin = (base: string) => base.replace("//0.0.0.0:", "//127.0.0.1:").replace("//[::]:", "//[::1]:")

/** The demo key (when this start made it) and a dashboard sign-in link for its integration. */
const demoLines = (demo: DemoAccess, origin: string) =>
  Effect.gen(function*() {
    const link = yield* Effect.flatMap(DashboardSessions, (sessions) => sessions.createLink(demo, origin))
    return [
      ...Option.match(demo.key, {
        onSome: (key) => [`test API key for integration "${demo.name}" (shown once, store it now):`, key],
        onNone: () => [`issue another key: npm run -s keys -- issue ${demo.name}`]
      }),
      `dashboard for "${demo.name}" (a sign-in link: one use, within 5 minutes):`,
      link.url
    ]
  })

const announce = (config: AppConfigShape, startedAt: number, admin: Option.Option<AdminListener>) =>
  Effect.gen(function*() {
    const { keyKind, mode } = yield* Deployment
    const demo = yield* Effect.flatMap(DemoBootstrap, (bootstrap) => bootstrap.run)
    const { address } = yield* HttpServer.HttpServer
    const base = address._tag === "UnixPathAddress" ? `unix:${address.path}` : HttpServer.formatAddress(address)
    const origin = Option.getOrElse(config.publicBaseUrl, () => browserOrigin(base))
    yield* banner([
      `Integrations API ${mode} mode, ready in ${Math.round(performance.now() - startedAt)} ms`,
      `listening on ${base}   docs: ${base}/docs   openapi: ${base}/openapi.json`,
      ...Option.match(admin, { onNone: () => [], onSome: ({ metricsUrl }) => [`metrics: ${metricsUrl}`] }),
      `database: ${describeDatabase(config)}`,
      ...(Option.isSome(demo) ? yield* demoLines(demo.value, origin) : [
        `issue a ${keyKind} key: npm run -s keys -- issue <integration-name> --create`,
        `dashboard sign-in link: npm run -s keys -- dashboard-link <integration-name>`
      ])
    ])
  })

/** A configuration, database or port mistake is one plain line for the operator; anything else is logged with its cause. */
const reportFailure = (database?: string) => (cause: Cause.Cause<unknown>) =>
  Option.match(startupFailureLine(cause, database), {
    onSome: Console.error,
    onNone: () => (Cause.hasInterruptsOnly(cause) ? Effect.void : Effect.logError("the service stopped", cause))
  })

/** One line a second while requests are being shed (never one per request: that is when the process is busiest). */
const reportShedding = (inFlight: number, maxQueueMs: number) =>
  Effect.gen(function*() {
    let reported = 0
    while (true) {
      yield* Effect.sleep("1 second")
      const shed = lifecycle.shed()
      if (shed > reported) {
        yield* Effect.logWarning(
          `overloaded: ${shed - reported} requests answered 503 in the last second ` +
            `(at most ${inFlight} in flight, or the database's queue over ${maxQueueMs} ms)`
        )
      }
      reported = shed
    }
  })

/** Serves until a signal, then drains in-flight requests before the pool and the database close. */
const main = Effect.gen(function*() {
  const config = yield* LoadConfig.pipe(Effect.tapCause(reportFailure()))
  return yield* serve(config).pipe(Effect.tapCause(reportFailure(databaseTarget(config))))
})

const serve = (config: AppConfigShape) =>
  Effect.gen(function*() {
    const startedAt = performance.now()
    const layer = serverLayer(config).pipe(
      Layer.provideMerge(NodeHttpServer.layer(() => server, { port: config.port, host: config.host, backlog: BACKLOG }))
    )
    const admitted = Option.getOrElse(config.maxRequestsInFlight, defaultInFlightLimit)
    lifecycle.limitAdmission({ inFlight: admitted, overloaded: () => false })
    return yield* Effect.scoped(Effect.gen(function*() {
      // First, so it answers scrapes while the service starts and while it drains (closed last).
      const admin = yield* Effect.transposeOption(
        Option.map(config.adminPort, (port) => serveAdmin({ host: config.adminHost, port }))
      )
      const context = yield* Layer.build(layer)
      const database = Context.get(context, DatabasePressure)
      lifecycle.limitAdmission({
        inFlight: admitted,
        overloaded: () => database.oldestWaitMs() > config.databaseMaxQueueMs
      })
      yield* reportShedding(admitted, config.databaseMaxQueueMs).pipe(Effect.forkScoped)
      yield* Effect.provideContext(announce(config, startedAt, admin), context)
      serving = true
      const signal = yield* Deferred.await(stopRequested)
      const draining = performance.now()
      yield* Deferred.await(hurryRequested).pipe(
        Effect.flatMap((again) =>
          Effect.logWarning(`${again} again: cutting off ${lifecycle.inFlight()} in-flight requests`)
        ),
        Effect.andThen(Effect.sync(() => server.closeAllConnections())),
        Effect.forkScoped
      )
      const inFlight = lifecycle.inFlight()
      const drain = lifecycle.drain(config.shutdownGraceMs)
      // Only once the port is closed does the log line say so (a client may act on it).
      yield* Effect.promise(() => drain.stoppedAccepting)
      yield* Effect.logInfo(`${signal}: shutting down; stopped accepting, draining ${inFlight} in-flight requests`)
      const outcome = yield* Effect.promise(() => drain.outcome)
      const line = `drained ${outcome.drained} requests in ${Math.round(performance.now() - draining)} ms ` +
        `(${outcome.turnedAway} arriving meanwhile answered 503)`
      yield* outcome.abandoned === 0
        ? Effect.logInfo(`${line}; closing the database pool`)
        : Effect.logWarning(
          `${line}; ${outcome.abandoned} still running after ${config.shutdownGraceMs} ms were cut off`
        )
      return outcome.abandoned === 0 ? 0 : 1
    }))
  })

/**
 * JSON logs at LOG_LEVEL. The tracer is off here (start-up and shutdown); the app's Layers turn it on when a trace
 * exporter is configured (`tracing` in App.ts), so without one no span is built for nobody (measured: see the README's
 * performance section).
 */
const withRuntime = <A, E>(program: Effect.Effect<A, E>) =>
  Effect.flatMap(
    LogLevelConfig.pipe(Effect.tapCause(reportFailure())),
    (level) => Effect.provide(program, Layer.merge(loggingLayer(level), TracingOff))
  )

const fiber = Effect.runFork(withRuntime(main))

/**
 * A terminal's Ctrl-C reaches this process twice, from the terminal and again from npm, which forwards the signals
 * it gets (as does a supervisor signalling a whole process group): a repeat this soon after the first is the same
 * request to stop.
 */
const SAME_REQUEST_MS = 1_000
let firstSignalAt: number | undefined
let hurried = false

/**
 * The first signal drains; a later one cuts off the requests still running, and the pool and the embedded database
 * still close in order; a third exits at once (an embedded database is still stopped, on exit).
 */
const onSignal = (signal: NodeJS.Signals) => {
  if (firstSignalAt === undefined) {
    firstSignalAt = performance.now()
    if (serving) Effect.runSync(Deferred.succeed(stopRequested, signal))
    else Effect.runFork(Fiber.interrupt(fiber))
    return
  }
  if (performance.now() - firstSignalAt < SAME_REQUEST_MS) return
  if (hurried) return process.exit(1)
  hurried = true
  Effect.runSync(Deferred.succeed(hurryRequested, signal))
}
process.on("SIGTERM", onSignal)
process.on("SIGINT", onSignal)

fiber.addObserver((exit) => {
  const code = Exit.match(exit, {
    onFailure: (cause) => (Cause.hasInterruptsOnly(cause) ? 0 : 1),
    onSuccess: (code) => code
  })
  process.exit(hurried ? 1 : code)
})
