import { HttpApiBuilder, HttpServer } from "@effect/platform"
import { IntegrationsApi } from "@cop-integrations/contracts"
import { ConfigError, Layer, Option } from "effect"
import { ApiKeyRepo } from "./auth/ApiKeyRepo.ts"
import { ChainMock } from "./chain/ChainMock.ts"
import { AppConfig, type AppConfigShape } from "./Config.ts"
import { makeSqlLayer } from "./db/Database.ts"
import { MigrationsLive } from "./db/Migrations.ts"
import { AuthenticationLive } from "./http/Authentication.ts"
import { BrebHttpLive } from "./http/BrebHttp.ts"
import { DecodeErrorsLive } from "./http/DecodeErrors.ts"
import { DocsLive } from "./http/Docs.ts"
import { ErrorBodiesLive } from "./http/ErrorBodies.ts"
import { HealthHttpLive } from "./http/HealthHttp.ts"
import { WebhooksHttpLive } from "./http/WebhooksHttp.ts"
import { IdempotencyStore } from "./idempotency/IdempotencyStore.ts"
import { IntegrationRepo } from "./integrations/IntegrationRepo.ts"
import { JobQueue } from "./jobs/JobQueue.ts"
import { JobWorkerLive } from "./jobs/JobWorker.ts"
import { CustomerRepo } from "./kyc/CustomerRepo.ts"
import { OtpService } from "./kyc/OtpService.ts"
import { MailerDisabled } from "./mailer/Mailer.ts"
import { MailerHttp } from "./mailer/MailerHttp.ts"
import { Lifecycle } from "./payouts/Lifecycle.ts"
import { PayoutRepo } from "./payouts/PayoutRepo.ts"
import { PayoutService } from "./payouts/PayoutService.ts"
import { MarketMock } from "./provider/Market.ts"
import { ProviderMock } from "./provider/ProviderMock.ts"
import { QuoteService } from "./quotes/QuoteService.ts"
import { RateCache } from "./quotes/RateCache.ts"
import { RateCacheMock } from "./quotes/RateCacheMock.ts"
import { ProviderWebhook } from "./webhooks/ProviderWebhook.ts"

/** The outside world: mock Layers (deterministic, no network) or, later, live ones. */
const externalServices = (config: AppConfigShape) => {
  if (config.mode === "live") {
    return Layer.fail(
      ConfigError.InvalidData(["APP_MODE"], "live: the live payout provider and mailer Layers are not available in this version (the live chain is: src/chain/ChainLive.ts)")
    )
  }
  const mailer = Option.match(config.emailApiKey, { onNone: () => MailerDisabled, onSome: MailerHttp })
  return Layer.mergeAll(ProviderMock, ChainMock, MarketMock, RateCacheMock, mailer)
}

/** PostgreSQL (or embedded PGlite), migrated before anything else uses it. */
export const databaseLayer = (config: AppConfigShape) => {
  const sql = makeSqlLayer({ url: config.databaseUrl, embeddedDataDir: config.embeddedDataDir })
  return Layer.merge(sql, MigrationsLive.pipe(Layer.provide(sql)))
}

const repositories = Layer.mergeAll(
  IntegrationRepo.Default,
  ApiKeyRepo.Default,
  CustomerRepo.Default,
  PayoutRepo.Default,
  JobQueue.Default,
  IdempotencyStore.Default
)

const domain = Layer.mergeAll(OtpService.Default, PayoutService.Default, ProviderWebhook.Default, JobWorkerLive).pipe(
  Layer.provideMerge(Lifecycle.Default),
  Layer.provideMerge(QuoteService.Default),
  Layer.provideMerge(RateCache.Default),
  Layer.provideMerge(repositories)
)

const api = HttpApiBuilder.api(IntegrationsApi).pipe(
  Layer.provide([BrebHttpLive, WebhooksHttpLive, HealthHttpLive]),
  Layer.provide(AuthenticationLive)
)

/**
 * The domain services over the database and the external services of the configured mode. The external services
 * are built first, so a mode that cannot start fails before any data is touched.
 */
const services = (config: AppConfigShape) =>
  domain.pipe(
    Layer.provideMerge(databaseLayer(config)),
    Layer.provideMerge(externalServices(config)),
    Layer.provideMerge(Layer.succeed(AppConfig, config))
  )

/** The HttpApi with its handlers and API-level middleware and routes. */
const http = Layer.mergeAll(ErrorBodiesLive, DecodeErrorsLive, DocsLive).pipe(Layer.provideMerge(api))

/** Serves the app on whatever HttpServer is provided (Node's in main.ts, a random port in tests). */
export const serverLayer = (config: AppConfigShape) =>
  HttpApiBuilder.serve().pipe(
    Layer.provide(http),
    Layer.provideMerge(services(config)),
    HttpServer.withLogAddress
  )

/** The same app as a web-standard `(Request) => Promise<Response>` handler (Deno.serve, Bun, edge, tests). */
export const webHandler = (config: AppConfigShape) =>
  HttpApiBuilder.toWebHandler(
    Layer.mergeAll(http, HttpServer.layerContext).pipe(Layer.provideMerge(services(config)))
  )
