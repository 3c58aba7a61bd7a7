import { IntegrationsApi } from "@cop-integrations/contracts"
import { Config, Context, Duration, Effect, Layer, Option, Redacted, Result, Schema, SchemaIssue } from "effect"
import { HttpEffect, HttpRouter, HttpServer } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import type { SqlClient } from "effect/sql"
import { keyKindForMode } from "./auth/ApiKey.ts"
import { AuditEntries } from "./auth/AuditEntries.ts"
import { AuditLog } from "./auth/AuditLog.ts"
import { ApiKeyRepo } from "./auth/ApiKeyRepo.ts"
import { Chain, withChainSpansLayer } from "./chain/Chain.ts"
import { measuredChain } from "./chain/ChainMetrics.ts"
import { ChainLive } from "./chain/ChainLive.ts"
import { ChainMock } from "./chain/ChainMock.ts"
import { TxHashClaims } from "./chain/TxHashClaims.ts"
import { TxHashClaimsMock } from "./chain/TxHashClaimsMock.ts"
import { AppConfig, type AppConfigShape } from "./config/Config.ts"
import { databaseLayer } from "./db/Database.ts"
import { PageBudget } from "./db/PageBudget.ts"
import { Deployment } from "./auth/Deployment.ts"
import { ApiKeysHttpLive } from "./http/ApiKeysHttp.ts"
import { AuthenticationLive } from "./http/Authentication.ts"
import { BrebHttpLive } from "./http/BrebHttp.ts"
import { DocsLive } from "./http/Docs.ts"
import { DashboardHttpLive } from "./http/DashboardHttp.ts"
import { DashboardPageLive } from "./dashboard/DashboardPage.ts"
import { DashboardSessions } from "./dashboard/DashboardSessions.ts"
import { SessionRepo } from "./dashboard/SessionRepo.ts"
import { PayoutBatchesHttpLive } from "./http/PayoutBatchesHttp.ts"
import { ReportsHttpLive } from "./http/ReportsHttp.ts"
import { RequestLogsHttpLive } from "./http/RequestLogsHttp.ts"
import { AuditLogHttpLive } from "./http/AuditLogHttp.ts"
import { WebhookSigningKeyHttpLive } from "./http/WebhookSigningKeyHttp.ts"
import { WebhookSigningKey } from "./partnerEvents/SigningKey.ts"
import { WebhookReplays } from "./partnerEvents/WebhookReplays.ts"
import { RequestMiddleware } from "./http/RequestMiddleware.ts"
import { RouteTemplateLive } from "./http/HttpMetrics.ts"
import { DeliveryRepo } from "./partnerEvents/DeliveryRepo.ts"
import { EndpointRepo } from "./partnerEvents/EndpointRepo.ts"
import { EventRepo } from "./partnerEvents/EventRepo.ts"
import { Outbox } from "./outbox/Outbox.ts"
import { PartnerEvents } from "./partnerEvents/PartnerEvents.ts"
import { WebhookEndpoints } from "./partnerEvents/WebhookEndpoints.ts"
import { type WebhookTargets, WebhookTargetsOpen, WebhookTargetsStrict } from "./partnerEvents/WebhookTargets.ts"
import { HealthHttpLive } from "./http/HealthHttp.ts"
import { serveApi } from "./http/Serve.ts"
import { EventsHttpLive } from "./http/EventsHttp.ts"
import { SwapsHttpLive } from "./http/SwapsHttp.ts"
import { TestHelpersHttpLive, TestHelpersUnservedLive } from "./http/TestHelpersHttp.ts"
import { WebhooksHttpLive } from "./http/WebhooksHttp.ts"
import { IdempotencyStore } from "./idempotency/IdempotencyStore.ts"
import { type DemoBootstrap, DemoBootstrapNone } from "./auth/Demo.ts"
import { DemoBootstrapMock } from "./auth/DemoMock.ts"
import { IntegrationRepo } from "./auth/IntegrationRepo.ts"
import { JobQueue } from "./background/JobQueue.ts"
import { JobWorkerLive } from "./worker/JobWorker.ts"
import { WorkSignal } from "./background/WorkSignal.ts"
import { CustomerKyc } from "./kyc/CustomerKyc.ts"
import { CustomerRepo } from "./kyc/CustomerRepo.ts"
import { DestinationPreviews } from "./destinations/DestinationPreviews.ts"
import { PreviewRepo } from "./destinations/PreviewRepo.ts"
import { VerificationBudget, VerificationsPerMinute } from "./destinations/VerificationBudget.ts"
import { type OtpCodes, OtpCodesLive } from "./kyc/OtpCodes.ts"
import { OtpCodesMock } from "./kyc/OtpCodesMock.ts"
import { OtpRepo } from "./kyc/OtpRepo.ts"
import { OtpService } from "./kyc/OtpService.ts"
import { type Mailer, MailerDisabled } from "./kyc/Mailer.ts"
import { MailerHttp } from "./kyc/MailerHttp.ts"
import { liveConfigError } from "./config/LiveRequirements.ts"
import { MockScenarioLive } from "./base/MockScenario.ts"
import { TracingOff, tracingLayer } from "./base/Tracing.ts"
import { Lifecycle } from "./payouts/Lifecycle.ts"
import { PayoutConfirm } from "./payouts/PayoutConfirm.ts"
import { BatchRepo } from "./payouts/BatchRepo.ts"
import { BatchConfirm } from "./payouts/BatchConfirm.ts"
import { PayoutBatches } from "./payouts/PayoutBatches.ts"
import { PayoutRepo } from "./payouts/PayoutRepo.ts"
import { PayoutChainId } from "./payouts/Present.ts"
import { PayoutCancel } from "./payouts/PayoutCancel.ts"
import { PayoutService } from "./payouts/PayoutService.ts"
import type { Market } from "./market/Market.ts"
import { MarketLive } from "./market/MarketLive.ts"
import { MarketMock } from "./market/MarketMock.ts"
import { PayoutProvider, withProviderSpansLayer } from "./provider/PayoutProvider.ts"
import { measuredProvider } from "./provider/ProviderMetrics.ts"
import type { ProviderCallbacks } from "./provider/ProviderCallbacks.ts"
import { BridgeCallbacks } from "./provider/bridge/BridgeCallbacks.ts"
import { type BridgeOptions, BridgeProvider, BridgeReturnPolicyCheck } from "./provider/bridge/BridgeClient.ts"
import { ProviderMock } from "./provider/mock/ProviderMock.ts"
import { TransferLifecycleMock } from "./provider/mock/TransferLifecycleMock.ts"
import { QuoteRepo } from "./quotes/QuoteRepo.ts"
import { QuoteService } from "./quotes/QuoteService.ts"
import { RateCache } from "./quotes/RateCache.ts"
import { RateCacheMock } from "./quotes/RateCacheMock.ts"
import { SwapRepo } from "./swaps/SwapRepo.ts"
import type { SwapRouter } from "./router/SwapRouter.ts"
import { SwapRouterLive } from "./router/SwapRouterLive.ts"
import { SwapRouterMock } from "./router/SwapRouterMock.ts"
import { SwapService } from "./swaps/SwapService.ts"
import { type TestHelpers, TestHelpersNone } from "./testHelpers/TestHelpers.ts"
import { TestHelpersMock } from "./testHelpers/TestHelpersMock.ts"
import { ProviderEventRepo } from "./providerWebhooks/ProviderEventRepo.ts"
import { ProviderWebhook } from "./providerWebhooks/ProviderWebhook.ts"
import { RequestLogRecorder } from "./requestLogs/RequestLogRecorder.ts"
import { ReportRepo } from "./reports/ReportRepo.ts"
import { Reports } from "./reports/Reports.ts"
import { RequestLogRepo } from "./requestLogs/RequestLogRepo.ts"
import { RequestLogs } from "./requestLogs/RequestLogs.ts"

/** The ports to the outside world that the domain services use; each mode has its own Layers for them. */
export type Ports =
  | PayoutProvider
  | ProviderCallbacks
  | Chain
  | SwapRouter
  | Market
  | Mailer
  | OtpCodes
  | DemoBootstrap
  | WebhookTargets

/** The domain services the test helpers drive (mock mode). */
type TestHelperNeeds =
  | SqlClient.SqlClient
  | AppConfig
  | PayoutRepo
  | SwapRepo
  | CustomerRepo
  | EventRepo
  | Lifecycle
  | OtpService
  | PayoutService
  | PayoutConfirm
  | PayoutBatches
  | BatchConfirm
  | SwapService
  | WebhookEndpoints
  | DeliveryRepo
  | Outbox
  | AuditLog

/**
 * What differs between modes: the ports (built over config and repositories), the outbox, rate cache and txHash
 * claims (which the mock's outside world reacts to or reaches into: its scenarios reach the last two), test helpers
 * and the router middleware of the mode.
 */
export interface ModeLayers {
  readonly ports: Layer.Layer<Ports, Config.ConfigError, AppConfig | IntegrationRepo | ApiKeyRepo>
  readonly outbox: Layer.Layer<Outbox, never, SqlClient.SqlClient | JobQueue | AppConfig>
  readonly rateCache: Layer.Layer<RateCache, never, SqlClient.SqlClient | PayoutProvider | AppConfig>
  readonly claims: Layer.Layer<TxHashClaims, never, SqlClient.SqlClient>
  readonly testHelpers: Layer.Layer<TestHelpers, never, TestHelperNeeds>
  readonly apiMiddleware: Layer.Layer<never, never, HttpRouter.HttpRouter>
}

const mailer = (config: AppConfigShape) =>
  Option.match(config.emailApiKey, { onNone: () => MailerDisabled, onSome: MailerHttp })

/** Mock mode's ports around a provider, a chain and a mailer (tests put a scripted provider or chain in). */
export const mockPorts = <EP, RP, EC, RC, RM>(parts: {
  readonly provider: Layer.Layer<PayoutProvider, EP, RP>
  readonly chain: Layer.Layer<Chain, EC, RC>
  readonly mailer: Layer.Layer<Mailer, never, RM>
}) =>
  Layer.mergeAll(
    withProviderSpansLayer(parts.provider),
    // The sandbox hears callbacks signed and shaped as Bridge's (a deployment's tests and the simulator send them).
    BridgeCallbacks,
    withChainSpansLayer(parts.chain),
    SwapRouterMock,
    MarketMock,
    OtpCodesMock,
    DemoBootstrapMock,
    WebhookTargetsOpen,
    parts.mailer
  )

/** Mock mode: deterministic stand-ins for the outside world (no network) and the `X-Mock-Scenario` header. */
export const mockMode = (config: AppConfigShape): ModeLayers => ({
  ports: mockPorts({ provider: ProviderMock, chain: ChainMock, mailer: mailer(config) }),
  outbox: TransferLifecycleMock,
  rateCache: RateCacheMock,
  claims: TxHashClaimsMock,
  testHelpers: TestHelpersMock,
  apiMiddleware: MockScenarioLive
})

/** The ports that differ in live mode only by how codes behave (no sandbox, no demo key). */
export const livePorts = Layer.mergeAll(OtpCodesLive, DemoBootstrapNone)

const bridgeOptions = (config: AppConfigShape, secrets: LiveSecrets): BridgeOptions => ({
  baseUrl: config.providerApiUrl,
  apiKey: secrets.providerApiKey,
  sourceRail: Option.getOrElse(config.providerSourceRail, () => config.chainName),
  destinationRail: config.providerDestinationRail,
  timeout: Duration.millis(config.providerTimeoutMs),
  retries: config.providerRetries
})

/**
 * Live mode: Bridge's HTTP API (its crypto return policy checked at start-up: refunds go to the sender), the chain
 * through a JSON-RPC node (token decimals and chain id checked at start-up), the configured market hours and the e-mail API. No scenario middleware: `X-Mock-Scenario` is ignored.
 * `liveConfigError` has already checked that every required setting is there.
 */
export const liveMode = (config: AppConfigShape, secrets: LiveSecrets): ModeLayers => ({
  ports: Layer.mergeAll(
    livePorts,
    withProviderSpansLayer(BridgeProvider(bridgeOptions(config, secrets))),
    BridgeReturnPolicyCheck(bridgeOptions(config, secrets)),
    BridgeCallbacks,
    withChainSpansLayer(ChainLive),
    SwapRouterLive({
      baseUrl: config.swapApiUrl,
      apiKey: secrets.swapApiKey,
      chainId: secrets.chainId,
      timeout: Duration.millis(config.providerTimeoutMs),
      retries: config.providerRetries
    }),
    MarketLive(config.marketHours),
    MailerHttp(secrets.emailApiKey),
    WebhookTargetsStrict()
  ),
  outbox: Outbox.Default,
  rateCache: RateCache.Default,
  claims: TxHashClaims.Default,
  testHelpers: TestHelpersNone,
  apiMiddleware: Layer.empty
})

interface LiveSecrets {
  readonly providerApiKey: Redacted.Redacted<string>
  readonly emailApiKey: Redacted.Redacted<string>
  readonly swapApiKey: Redacted.Redacted<string>
  readonly chainId: number
}

/** A live deployment without the settings it needs (liveConfigError has named them already). */
const settingsMissing = new Config.ConfigError(
  new Schema.SchemaError(
    new SchemaIssue.Pointer(
      ["APP_MODE"],
      new SchemaIssue.InvalidValue({ message: "live mode cannot start: settings missing" })
    )
  )
)

/** The Layers of the configured mode, or why it cannot start (decided before anything is built). */
const modeLayers = (config: AppConfigShape): Result.Result<ModeLayers, Config.ConfigError> => {
  if (config.mode === "mock") return Result.succeed(mockMode(config))
  const problem = liveConfigError(config)
  if (Option.isSome(problem)) return Result.fail(problem.value)
  const required = Option.all({
    providerApiKey: config.providerApiKey,
    emailApiKey: config.emailApiKey,
    swapApiKey: config.swapApiKey,
    chainId: config.chainId
  })
  return Option.match(required, {
    onNone: () => Result.fail(settingsMissing),
    onSome: (secrets) => Result.succeed(liveMode(config, secrets))
  })
}

const repositories = (mode: ModeLayers) =>
  Layer.mergeAll(
    IntegrationRepo.Default,
    EndpointRepo.Default,
    EventRepo.Default,
    DeliveryRepo.Default,
    ApiKeyRepo.Default,
    CustomerRepo.Default,
    OtpRepo.Default,
    QuoteRepo.Default,
    PreviewRepo.Default,
    VerificationBudget.Default,
    PayoutRepo.Default,
    BatchRepo.Default,
    SwapRepo.Default,
    IdempotencyStore.Default,
    SessionRepo.Default,
    mode.claims,
    ProviderEventRepo.Default,
    RequestLogRepo.Default,
    ReportRepo.Default,
    AuditLog.Default,
    WebhookSigningKey.Default
  ).pipe(Layer.provideMerge(mode.outbox), Layer.provideMerge(JobQueue.Default))

/** The background loops (jobs, webhook deliveries, sweeps), unless this replica only serves HTTP (WORKER_ENABLED=false). */
const worker = (config: AppConfigShape) => (config.workerEnabled ? JobWorkerLive : Layer.empty)

const domain = (config: AppConfigShape, mode: ModeLayers) =>
  Layer.mergeAll(
    OtpService.Default,
    // A batch takes each of its items through the payout service's own steps.
    PayoutBatches.Default.pipe(Layer.provideMerge(PayoutService.Default)),
    PayoutConfirm.Default,
    BatchConfirm.Default,
    PayoutCancel.Default,
    SwapService.Default,
    ProviderWebhook.Default,
    WebhookEndpoints.Default,
    WebhookReplays.Default,
    PartnerEvents.Default,
    DashboardSessions.Default,
    RequestLogs.Default,
    AuditEntries.Default,
    RequestLogRecorder.Default,
    Reports.Default,
    worker(config)
  ).pipe(
    Layer.provideMerge(Lifecycle.Default),
    Layer.provideMerge(QuoteService.Default),
    Layer.provideMerge(DestinationPreviews.Default),
    Layer.provideMerge(CustomerKyc.Default),
    Layer.provideMerge(mode.rateCache),
    Layer.provideMerge(WorkSignal.Default),
    Layer.provideMerge(PageBudget.Default)
  )

/** The contract's groups, each with its handlers and authentication. */
const api = HttpApiBuilder.layer(IntegrationsApi).pipe(
  Layer.provide([
    BrebHttpLive,
    PayoutBatchesHttpLive,
    SwapsHttpLive,
    EventsHttpLive,
    DashboardHttpLive,
    RequestLogsHttpLive,
    AuditLogHttpLive,
    ReportsHttpLive,
    ApiKeysHttpLive,
    TestHelpersHttpLive,
    WebhooksHttpLive,
    WebhookSigningKeyHttpLive,
    HealthHttpLive
  ]),
  Layer.provide(AuthenticationLive)
)

/**
 * Destination verifications per integration a minute unless PREVIEW_RATE_LIMIT_PER_MINUTE says: in live mode each
 * tells whether a real Bre-B key exists and who holds it, so few; the sandbox's holders are made up, and a conformance
 * run verifies about 80 destinations in a minute, run after run.
 */
const LIVE_VERIFICATIONS_PER_MINUTE = 30
const SANDBOX_VERIFICATIONS_PER_MINUTE = 600

const deployment = (config: AppConfigShape) =>
  Layer.mergeAll(
    Layer.succeed(Deployment, { mode: config.mode, keyKind: keyKindForMode(config.mode) }),
    Layer.succeed(PayoutChainId, config.chainId),
    Layer.succeed(
      VerificationsPerMinute,
      Option.getOrElse(
        config.previewRateLimitPerMinute,
        () => config.mode === "mock" ? SANDBOX_VERIFICATIONS_PER_MINUTE : LIVE_VERIFICATIONS_PER_MINUTE
      )
    )
  )

/**
 * The mode's ports, with every call to the provider and the chain counted and timed: wrapped here, once, whichever
 * mode's adapters (or a test's stand-ins) are inside.
 */
const measuredPorts = <E, R>(ports: Layer.Layer<Ports, E, R>) =>
  Layer.merge(
    Layer.effect(PayoutProvider, Effect.map(PayoutProvider, measuredProvider)),
    Layer.effect(Chain, Effect.map(Chain, measuredChain))
  ).pipe(Layer.provideMerge(ports))

/** The domain services over the mode's ports, the repositories and the database. */
const services = (config: AppConfigShape, mode: ModeLayers) =>
  mode.testHelpers.pipe(
    Layer.provideMerge(domain(config, mode)),
    Layer.provideMerge(measuredPorts(mode.ports)),
    Layer.provideMerge(repositories(mode)),
    Layer.provideMerge(databaseLayer(config)),
    Layer.provideMerge(deployment(config)),
    Layer.provideMerge(Layer.succeed(AppConfig, config))
  )

/** The routes (the contract's, /openapi.json, /docs and /dashboard) and the mode's router middleware, on one router. */
const routes = (mode: ModeLayers) =>
  Layer.mergeAll(api, DocsLive, DashboardPageLive, mode.apiMiddleware).pipe(Layer.provide(RouteTemplateLive))

/** Serves the app over `mode`'s Layers on whatever HttpServer is provided. */
export const serverLayerFor = (config: AppConfigShape, mode: ModeLayers) =>
  serveApi.pipe(
    Layer.provide(routes(mode)),
    Layer.provide(Layer.merge(HttpRouter.layer, TestHelpersUnservedLive)),
    Layer.provideMerge(services(config, mode)),
    HttpServer.withLogAddress
  )

/** `build` over the configured mode's Layers; a mode that cannot start fails before anything is built. */
const inConfiguredMode = <A, E, R>(
  config: AppConfigShape,
  build: (mode: ModeLayers) => Layer.Layer<A, E, R>
): Layer.Layer<A, E | Config.ConfigError, R> =>
  Result.match(modeLayers(config), {
    onFailure: (error) => Layer.effectContext<A, Config.ConfigError, never>(Effect.fail(error)),
    onSuccess: build
  })

/**
 * Traces, exported over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT names a collector (sampled at OTEL_TRACES_SAMPLER_ARG);
 * otherwise the tracer is off: no spans are built and no `traceparent` goes out.
 */
export const tracing = (config: AppConfigShape): Layer.Layer<never> =>
  Option.match(config.tracing.otlpEndpoint, {
    onNone: () => TracingOff,
    onSome: (endpoint) =>
      tracingLayer({
        endpoint,
        headers: Redacted.value(config.tracing.otlpHeaders),
        serviceName: config.tracing.otelServiceName,
        ratio: config.tracing.tracesSampleRatio,
        exportIntervalMs: config.tracing.tracesExportIntervalMs,
        untracedPaths: ["/healthz", "/readyz"]
      })
  })

/** Serves the app on whatever HttpServer is provided (Node's in main.ts, a random port in tests). */
export const serverLayer = (config: AppConfigShape) =>
  inConfiguredMode(config, (mode) => serverLayerFor(config, mode)).pipe(Layer.provide(tracing(config)))

/** The same app as a web-standard `(Request) => Promise<Response>` handler (Deno.serve, Bun, edge, tests). */
export const webHandler = (config: AppConfigShape) =>
  HttpEffect.toWebHandlerLayerWith(
    inConfiguredMode(config, (mode) =>
      Layer.merge(routes(mode), TestHelpersUnservedLive).pipe(
        Layer.provideMerge(HttpRouter.layer),
        Layer.provideMerge(HttpServer.layerServices),
        Layer.provideMerge(services(config, mode))
      )).pipe(Layer.provide(tracing(config))),
    {
      toHandler: (context) =>
        Effect.map(
          Effect.provideContext(RequestMiddleware, context),
          (middleware) => middleware(Context.get(context, HttpRouter.HttpRouter).asHttpEffect())
        )
    }
  )
