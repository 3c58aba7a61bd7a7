import { AuditLog } from "../../src/auth/AuditLog.ts"
import { WebhookSigningKey } from "../../src/partnerEvents/SigningKey.ts"
import { Outbox } from "../../src/outbox/Outbox.ts"
import { WebhookTargetsOpen } from "../../src/partnerEvents/WebhookTargets.ts"
import { DeliveryRepo } from "../../src/partnerEvents/DeliveryRepo.ts"
import { EventRepo } from "../../src/partnerEvents/EventRepo.ts"
import { TxHashClaims } from "../../src/chain/TxHashClaims.ts"
/**
 * The job worker while the database is down, driven by the TestClock: every query of a SqlClient whose
 * connections cannot be acquired fails at once, so the worker's loops run deterministically.
 */
import { PgClient } from "@effect/sql-pg"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer, Logger, LogLevel, Ref } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import { SqlClient } from "effect/sql"
import { SqlError, UnknownError } from "effect/sql/SqlError"
import { TestClock } from "effect/testing"
import { AppConfig, AppConfigShape } from "../../src/config/Config.ts"
import { JobQueue } from "../../src/background/JobQueue.ts"
import { JobWorkerLive, MAX_TICK_BACKOFF_MS } from "../../src/worker/JobWorker.ts"
import { WorkSignal } from "../../src/background/WorkSignal.ts"
import { Lifecycle } from "../../src/payouts/Lifecycle.ts"
import { PayoutRepo } from "../../src/payouts/PayoutRepo.ts"
import { SwapRepo } from "../../src/swaps/SwapRepo.ts"
import { ChainMock } from "../../src/chain/ChainMock.ts"
import { ProviderMock } from "../../src/provider/mock/ProviderMock.ts"

// Explicit, not left to `it.scoped`: with vitest's isolate:false another file's @effect/vitest `layer()` can
// replace the environment `it.scoped` provides (it mutates the shared `it`), and this test needs the TestClock.
const withTestClock = Effect.provide(TestClock.layer())

const POLL_MS = 200
/** No LISTEN connection without a database: the loops fall back to their idle interval. */
const noWorkNotifications = Layer.succeed(
  WorkSignal,
  WorkSignal.of({ armed: Effect.succeed(Effect.never), wake: Effect.void })
)
/**
 * The worker's polling loops: jobs, deliveries, the expiry sweep, the delay sweep, event positions, housekeeping and the
 * reconciler, each at least POLL_MS apart.
 */
const LOOPS = 7
const WINDOW_MS = 10 * 60 * 1000

/** How many times a loop that starts at `every` ms and doubles its delay after each failure (up to `cap`) runs in `window` ms. */
const attemptsWithin = (windowMs: number, everyMs: number, capMs: number) => {
  let runs = 0
  for (let at = 0; at <= windowMs; at += Math.min(capMs, everyMs * 2 ** runs)) runs++
  return runs
}

interface Logged {
  readonly level: LogLevel.LogLevel
  readonly message: string
  readonly hasCause: boolean
}

describe("job worker with the database down", () => {
  it.effect("backs off exponentially and logs one short line per loop, without a stack", () =>
    Effect.gen(function*() {
      const attempts = yield* Ref.make(0)
      const logged: Array<Logged> = []
      const databaseDown = Layer.effect(
        SqlClient.SqlClient,
        SqlClient.make({
          acquirer: Effect.andThen(
            Ref.update(attempts, (n) => n + 1),
            Effect.fail(
              new SqlError({
                reason: new UnknownError({
                  message: "Failed to acquire connection",
                  cause: new Error("connect ECONNREFUSED")
                })
              })
            )
          ),
          compiler: PgClient.makeCompiler(),
          driver: "pg",
          spanAttributes: []
        })
      ).pipe(Layer.provide(Reactivity.layer))
      const config = Layer.effect(
        AppConfig,
        Effect.provideService(
          AppConfigShape,
          ConfigProvider.ConfigProvider,
          ConfigProvider.fromEnv({ env: { JOBS_POLL_INTERVAL_MS: String(POLL_MS) } })
        )
      ).pipe(Layer.orDie)
      const capture = Logger.layer([
        Logger.make(({ cause, logLevel, message }) =>
          void logged.push({ level: logLevel, message: [message].flat().join(" "), hasCause: cause.reasons.length > 0 })
        )
      ])
      const worker = JobWorkerLive.pipe(
        Layer.provide(Layer.mergeAll(ProviderMock, ChainMock, WebhookTargetsOpen, noWorkNotifications)),
        Layer.provide(
          Layer.mergeAll(JobQueue.Default, Lifecycle.Default).pipe(
            Layer.provideMerge(
              Layer.mergeAll(
                PayoutRepo.Default,
                SwapRepo.Default,
                DeliveryRepo.Default,
                EventRepo.Default,
                TxHashClaims.Default,
                AuditLog.Default,
                WebhookSigningKey.Default
              )
            ),
            Layer.provideMerge(Outbox.Default)
          )
        ),
        Layer.provide(Layer.merge(databaseDown, config))
      )
      yield* Layer.build(worker).pipe(Effect.provide(capture))

      yield* TestClock.adjust(WINDOW_MS)

      const tried = yield* Ref.get(attempts)
      expect(tried).toBeGreaterThanOrEqual(2)
      // without backoff the jobs loop alone would try WINDOW_MS / POLL_MS times
      expect(tried).toBeLessThanOrEqual(LOOPS * attemptsWithin(WINDOW_MS, POLL_MS, MAX_TICK_BACKOFF_MS))
      expect(tried).toBeLessThan(WINDOW_MS / POLL_MS / 10)
      const warnings = logged.filter((entry) => LogLevel.isGreaterThanOrEqualTo(entry.level, "Warn"))
      expect(warnings.length).toBeGreaterThanOrEqual(1)
      expect(warnings.length).toBeLessThanOrEqual(LOOPS)
      for (const entry of logged) {
        expect(entry.hasCause, entry.message).toBe(false)
        expect(entry.message).not.toContain("\n")
        expect(entry.message.length).toBeLessThanOrEqual(300)
      }
    }).pipe(withTestClock))
})
