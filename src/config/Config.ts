import { BigDecimal, Config, Context, Effect, Layer, Option, Redacted, Result } from "effect"
import type { ApiMode } from "@cop-integrations/contracts"
import { parseCidrList } from "../base/IpAddresses.ts"
import { configError } from "../base/StartupFailure.ts"
import { parseMarketHoursConfig } from "../market/MarketHours.ts"
import type { DatabasePooler } from "../db/Database.ts"

/** Checks a value; the error names the variable. */
const check = <A>(name: string, message: string, valid: (value: A) => boolean) =>
  Config.mapEffect((value: A) => (valid(value) ? Effect.succeed(value) : Effect.fail(configError([name], message))))

/** An optional secret; set but blank counts as unset. */
const optionalSecret = (name: string) =>
  Config.option(Config.Redacted(name)).pipe(Config.map(Option.filter((value) => Redacted.value(value).trim() !== "")))

const decimal = (name: string, fallback: string) =>
  Config.String(name).pipe(
    Config.withDefault(fallback),
    Config.mapEffect((raw) =>
      Option.match(Option.filter(BigDecimal.fromString(raw.trim()), BigDecimal.isPositive), {
        onNone: () => Effect.fail(configError([name], "must be a positive decimal number")),
        onSome: Effect.succeed
      })
    )
  )

const address = (name: string, fallback: string) =>
  Config.String(name).pipe(
    Config.withDefault(fallback),
    check(name, "must be a 0x-prefixed 20-byte address", (s: string) => /^0x[0-9a-fA-F]{40}$/.test(s))
  )

const positiveInt = (name: string, fallback: number) =>
  Config.Int(name).pipe(
    Config.withDefault(fallback),
    check(name, "must be a positive integer", (n: number) => n > 0)
  )

/** A rate: a positive number, decimals allowed (`0.5`: one every two seconds). */
const positiveRate = (name: string, fallback: number) =>
  Config.Number(name).pipe(
    Config.withDefault(fallback),
    check(name, "must be a positive number", (n: number) => Number.isFinite(n) && n > 0)
  )

/** Load balancers whose X-Forwarded-For / Forwarded name the client (src/http/ClientAddress.ts); none by default. */
const trustedProxies = Config.String("TRUSTED_PROXIES").pipe(
  Config.withDefault(""),
  Config.mapEffect((list) =>
    Result.match(parseCidrList(list), {
      onFailure: (entry) =>
        Effect.fail(
          configError(
            ["TRUSTED_PROXIES"],
            `"${entry}" is not a CIDR: give comma-separated ranges such as 10.0.0.0/8 or 2001:db8::/32, or single addresses`
          )
        ),
      onSuccess: Effect.succeed
    })
  )
)

/** postgres:// or postgresql:// with a host (in the authority, or `?host=` for a Unix socket directory). */
const isPostgresUrl = (value: string) => {
  if (!URL.canParse(value)) return false
  const url = new URL(value)
  return /^postgres(ql)?:$/.test(url.protocol) && (url.hostname !== "" || url.searchParams.has("host"))
}

/** The sandbox's fee wallet: fine for mock mode, refused by live mode (fees would be lost). */
export const PLACEHOLDER_FEE_WALLET = "0x1111111111111111111111111111111111111111"

/** The USD/COP market's hours from MARKET_* (each optional: the defaults are the Colombian FX market's). */
export const MarketHoursConfig = Config.all({
  timeZone: Config.String("MARKET_TIME_ZONE").pipe(Config.withDefault(undefined)),
  sessions: Config.String("MARKET_SESSION").pipe(Config.withDefault(undefined)),
  holidays: Config.String("MARKET_HOLIDAYS").pipe(Config.withDefault(undefined)),
  closedDates: Config.String("MARKET_CLOSED_DATES").pipe(Config.withDefault(undefined)),
  openDates: Config.String("MARKET_OPEN_DATES").pipe(Config.withDefault(undefined))
}).pipe(Config.mapEffect(parseMarketHoursConfig))

/**
 * OTEL_EXPORTER_OTLP_HEADERS as OpenTelemetry writes it: `key=value` pairs separated by commas, values URL-encoded.
 * Secret (a collector's API key travels there).
 */
const otlpHeaders = optionalSecret("OTEL_EXPORTER_OTLP_HEADERS").pipe(
  Config.mapEffect((raw) => {
    const headers: Record<string, string> = {}
    if (Option.isNone(raw)) return Effect.succeed(Redacted.make(headers))
    for (const pair of Redacted.value(raw.value).split(",")) {
      if (pair.trim() === "") continue
      const at = pair.indexOf("=")
      const name = at < 0 ? "" : pair.slice(0, at).trim()
      if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) {
        return Effect.fail(
          configError(["OTEL_EXPORTER_OTLP_HEADERS"], "must be comma-separated name=value pairs, such as api-key=abc")
        )
      }
      try {
        headers[name.toLowerCase()] = decodeURIComponent(pair.slice(at + 1).trim())
      } catch {
        return Effect.fail(configError(["OTEL_EXPORTER_OTLP_HEADERS"], `the value of "${name}" is not URL-encoded`))
      }
    }
    return Effect.succeed(Redacted.make(headers))
  })
)

/** Traces (src/base/Tracing.ts): exported only when OTEL_EXPORTER_OTLP_ENDPOINT names a collector. */
const TracingConfig = Config.all({
  otlpEndpoint: Config.option(
    Config.String("OTEL_EXPORTER_OTLP_ENDPOINT").pipe(
      check(
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "must be the collector's http(s) URL, such as http://127.0.0.1:4318 (traces go to <url>/v1/traces)",
        (s: string) => URL.canParse(s) && /^https?:$/.test(new URL(s).protocol)
      )
    )
  ).pipe(Config.map(Option.filter((s) => s.trim() !== ""))),
  otlpHeaders,
  otelServiceName: Config.String("OTEL_SERVICE_NAME").pipe(
    Config.withDefault("cop-integrations"),
    check("OTEL_SERVICE_NAME", "must not be empty", (s: string) => s.trim() !== "")
  ),
  tracesSampleRatio: Config.Number("OTEL_TRACES_SAMPLER_ARG").pipe(
    Config.withDefault(1),
    check(
      "OTEL_TRACES_SAMPLER_ARG",
      "must be a ratio from 0 to 1 (0.1: one trace in ten)",
      (n: number) => Number.isFinite(n) && n >= 0 && n <= 1
    )
  ),
  /** OpenTelemetry's batch delay: ended spans are sent every this many milliseconds. */
  tracesExportIntervalMs: positiveInt("OTEL_BSP_SCHEDULE_DELAY", 5000)
})

export const AppConfigShape = Config.all({
  mode: Config.Literals(["mock", "live"], "APP_MODE").pipe(Config.withDefault<ApiMode>("mock")),
  host: Config.String("HOST").pipe(Config.withDefault("127.0.0.1")),
  port: Config.Int("PORT").pipe(
    Config.withDefault(8787),
    check("PORT", "must be 0 (any free port) to 65535", (n: number) => n >= 0 && n <= 65535)
  ),
  databaseUrl: optionalSecret("DATABASE_URL").pipe(
    check(
      "DATABASE_URL",
      "must be a PostgreSQL URL such as postgres://user:password@host:5432/database (or unset for the embedded PostgreSQL)",
      (url: Option.Option<Redacted.Redacted<string>>) => Option.isNone(url) || isPostgresUrl(Redacted.value(url.value))
    )
  ),
  embeddedDataDir: Config.String("EMBEDDED_DATA_DIR").pipe(Config.withDefault(".data/postgres")),
  /** Unset: on, unless DATABASE_POOLER=transaction (src/db/Database.ts). */
  databasePreparedStatements: Config.option(Config.Boolean("DATABASE_PREPARED_STATEMENTS")),
  databasePooler: Config.Literals(["none", "transaction"], "DATABASE_POOLER").pipe(
    Config.withDefault<DatabasePooler>("none")
  ),
  databaseDirectUrl: optionalSecret("DATABASE_DIRECT_URL").pipe(
    check(
      "DATABASE_DIRECT_URL",
      "must be a PostgreSQL URL such as postgres://user:password@host:5432/database (or unset)",
      (url: Option.Option<Redacted.Redacted<string>>) => Option.isNone(url) || isPostgresUrl(Redacted.value(url.value))
    )
  ),
  /**
   * While the oldest request for a database connection has waited longer than this, new requests are answered 503 at
   * once: a fifth of the 5 s connect timeout, so that what is admitted still gets its connections in time.
   */
  databaseMaxQueueMs: positiveInt("DATABASE_MAX_QUEUE_MS", 1000),
  /** The admin listener's port (GET /metrics); unset: none. Never the public port; 0: any free port. */
  adminPort: Config.option(
    Config.Int("ADMIN_PORT").pipe(
      check("ADMIN_PORT", "must be 0 (any free port) to 65535", (n: number) => n >= 0 && n <= 65535)
    )
  ),
  adminHost: Config.String("ADMIN_HOST").pipe(Config.withDefault("127.0.0.1")),
  /**
   * How often the worker samples the database for the metrics' gauges (outbox backlog, job queue, payouts in flight),
   * when the admin listener is on: one cheap indexed query each.
   */
  metricsSampleIntervalMs: positiveInt("METRICS_SAMPLE_INTERVAL_MS", 15_000),
  tracing: TracingConfig,
  /** Request metrics carry an `integration` label (one series per integration: bounded by how many there are). */
  metricsPerIntegration: Config.Boolean("METRICS_PER_INTEGRATION").pipe(Config.withDefault(false)),
  /** Requests one replica serves at once (health checks aside); more are answered 503 at once. Default: from the heap. */
  maxRequestsInFlight: Config.option(
    Config.Int("MAX_REQUESTS_IN_FLIGHT").pipe(
      check("MAX_REQUESTS_IN_FLIGHT", "must be a positive integer", (n: number) => n > 0)
    )
  ),
  mockOtpDebugCode: Config.String("MOCK_OTP_DEBUG_CODE").pipe(
    Config.withDefault("123456"),
    check("MOCK_OTP_DEBUG_CODE", "must be 6 digits", (s: string) => /^[0-9]{6}$/.test(s))
  ),
  mockMidRate: decimal("MOCK_USD_COP_MID", "4000.00"),
  mockSellRate: decimal("MOCK_USD_COP_SELL", "3960.00"),
  mockLifecycleDelayMs: positiveInt("MOCK_LIFECYCLE_DELAY_MS", 2000),
  rateCacheTtlSeconds: positiveInt("RATE_CACHE_TTL_SECONDS", 30),
  quoteTtlSeconds: positiveInt("QUOTE_TTL_SECONDS", 120),
  requoteToleranceBps: Config.Int("REQUOTE_TOLERANCE_BPS").pipe(Config.withDefault(50)),
  rateBufferBps: Config.Int("RATE_BUFFER_BPS").pipe(
    Config.withDefault(0),
    check("RATE_BUFFER_BPS", "must be 0 to 500", (n: number) => n >= 0 && n <= 500)
  ),
  payoutWindowMinutes: positiveInt("PAYOUT_WINDOW_MINUTES", 30),
  /** A payout in deposit_confirmed or processing unchanged this long is reported delayed (`payout.delayed`, once). */
  payoutDelayedAfterMinutes: positiveInt("PAYOUT_DELAYED_AFTER_MINUTES", 30),
  brebMaxCop: decimal("BREB_MAX_COP", "11552000"),
  rateLimitPerSecond: positiveRate("RATE_LIMIT_PER_SECOND", 100),
  rateLimitBurst: positiveInt("RATE_LIMIT_BURST", 200),
  /** Destination verifications per integration a minute; unset: the mode's default (src/App.ts). */
  previewRateLimitPerMinute: Config.option(
    Config.Int("PREVIEW_RATE_LIMIT_PER_MINUTE").pipe(
      check("PREVIEW_RATE_LIMIT_PER_MINUTE", "must be a positive integer", (n: number) => n > 0)
    )
  ),
  trustedProxies,
  apiKeyCacheMs: Config.Int("API_KEY_CACHE_MS").pipe(
    Config.withDefault(5000),
    check("API_KEY_CACHE_MS", "must be 0 (no cache) or a positive number of milliseconds", (n: number) => n >= 0)
  ),
  chainName: Config.String("CHAIN_NAME").pipe(Config.withDefault("celo")),
  chainRpcUrl: optionalSecret("CHAIN_RPC_URL"),
  chainId: Config.option(
    Config.Int("CHAIN_ID").pipe(check("CHAIN_ID", "must be a positive integer", (n: number) => n > 0))
  ),
  chainConfirmations: positiveInt("CHAIN_CONFIRMATIONS", 1),
  tokenAddress: address("TOKEN_ADDRESS", "0xcebA9300f2b948710d2653dD7B07f33A8B32118C"),
  tokenDecimals: positiveInt("TOKEN_DECIMALS", 6),
  copTokenAddress: address("COP_TOKEN_ADDRESS", "0x8A567e2aE79CA692Bd748aB832081C45de4041eA"),
  copTokenDecimals: positiveInt("COP_TOKEN_DECIMALS", 18),
  swapRouterAddress: address("SWAP_ROUTER_ADDRESS", "0x5555555555555555555555555555555555555555"),
  mockSwapFeeBps: Config.Int("MOCK_SWAP_FEE_BPS").pipe(
    Config.withDefault(32),
    check("MOCK_SWAP_FEE_BPS", "must be 0 to 1000", (n: number) => n >= 0 && n <= 1000)
  ),
  swapTtlSeconds: positiveInt("SWAP_TTL_SECONDS", 300),
  swapApiUrl: Config.String("SWAP_API_URL").pipe(
    Config.withDefault("https://api.0x.org"),
    check(
      "SWAP_API_URL",
      "must be an http(s) URL",
      (s: string) => URL.canParse(s) && /^https?:$/.test(new URL(s).protocol)
    )
  ),
  swapApiKey: optionalSecret("SWAP_API_KEY"),
  feeWalletAddress: address("FEE_WALLET_ADDRESS", PLACEHOLDER_FEE_WALLET),
  providerWebhookPublicKey: optionalSecret("PROVIDER_WEBHOOK_PUBLIC_KEY"),
  providerApiUrl: Config.String("PROVIDER_API_URL").pipe(
    Config.withDefault("https://api.bridge.xyz/v0"),
    check(
      "PROVIDER_API_URL",
      "must be an http(s) URL",
      (s: string) => URL.canParse(s) && /^https?:$/.test(new URL(s).protocol)
    )
  ),
  providerApiKey: optionalSecret("PROVIDER_API_KEY"),
  providerSourceRail: Config.option(Config.String("PROVIDER_SOURCE_RAIL")),
  providerDestinationRail: Config.String("PROVIDER_DESTINATION_RAIL").pipe(Config.withDefault("breb")),
  providerTimeoutMs: positiveInt("PROVIDER_TIMEOUT_MS", 10000),
  providerRetries: Config.Int("PROVIDER_RETRIES").pipe(
    Config.withDefault(3),
    check("PROVIDER_RETRIES", "must be 0 to 10", (n: number) => n >= 0 && n <= 10)
  ),
  emailApiKey: optionalSecret("EMAIL_API_KEY"),
  emailApiUrl: Config.String("EMAIL_API_URL").pipe(
    Config.withDefault("https://api.resend.com"),
    check(
      "EMAIL_API_URL",
      "must be an http(s) URL",
      (s: string) => URL.canParse(s) && /^https?:$/.test(new URL(s).protocol)
    )
  ),
  emailFrom: Config.String("EMAIL_FROM").pipe(Config.withDefault("Integrations API <no-reply@example.com>")),
  jobsPollIntervalMs: positiveInt("JOBS_POLL_INTERVAL_MS", 200),
  jobsIdleIntervalMs: positiveInt("JOBS_IDLE_INTERVAL_MS", 2000),
  rateCacheInMemory: Config.Boolean("RATE_CACHE_IN_MEMORY").pipe(Config.withDefault(true)),
  workerEnabled: Config.Boolean("WORKER_ENABLED").pipe(Config.withDefault(true)),
  jobsMaxAttempts: positiveInt("JOBS_MAX_ATTEMPTS", 10),
  expirySweepIntervalMs: positiveInt("EXPIRY_SWEEP_INTERVAL_MS", 5000),
  housekeepingIntervalMs: positiveInt("HOUSEKEEPING_INTERVAL_MS", 60 * 60 * 1000),
  reconcileIntervalMs: positiveInt("RECONCILE_INTERVAL_MS", 60_000),
  reconcileStaleAfterMs: positiveInt("RECONCILE_STALE_AFTER_MS", 5 * 60_000),
  reconcileExpiredForMs: positiveInt("RECONCILE_EXPIRED_FOR_MS", 24 * 60 * 60_000),
  reconcileClaimStaleAfterMs: positiveInt("RECONCILE_CLAIM_STALE_AFTER_MS", 2 * 60_000),
  reconcileBatchSize: positiveInt("RECONCILE_BATCH_SIZE", 50),
  retentionDays: positiveInt("RETENTION_DAYS", 30),
  webhookEventRetentionDays: positiveInt("WEBHOOK_EVENT_RETENTION_DAYS", 90),
  /** Days a request log row is kept (src/requestLogs). */
  requestLogRetentionDays: positiveInt("REQUEST_LOG_RETENTION_DAYS", 7),
  /** Request log entries waiting to be written, at most; past it an entry is dropped (and counted), never waited for. */
  requestLogBufferSize: positiveInt("REQUEST_LOG_BUFFER_SIZE", 10_000),
  shutdownGraceMs: positiveInt("SHUTDOWN_GRACE_MS", 10000),
  webhookTimeoutMs: positiveInt("WEBHOOK_TIMEOUT_MS", 10_000),
  webhookRetryBaseMs: positiveInt("WEBHOOK_RETRY_BASE_MS", 5_000),
  webhookRetryWindowSeconds: positiveInt("WEBHOOK_RETRY_WINDOW_SECONDS", 3 * 24 * 60 * 60),
  marketHours: MarketHoursConfig,
  /** How long a dashboard session lasts after its sign-in link is opened. */
  dashboardSessionHours: positiveInt("DASHBOARD_SESSION_HOURS", 12),
  /** The service's public origin, for the links it hands out; unset: each request's own Host (src/dashboard/). */
  publicBaseUrl: Config.option(
    Config.String("PUBLIC_BASE_URL").pipe(
      check(
        "PUBLIC_BASE_URL",
        "must be the service's public http(s) origin, such as https://api.example.com (no path, query or fragment)",
        (s: string) =>
          URL.canParse(s) && /^https?:$/.test(new URL(s).protocol) && new URL(s).pathname === "/" &&
          new URL(s).search === "" && new URL(s).hash === ""
      ),
      Config.map((s) => new URL(s).origin)
    )
  )
})

export type AppConfigShape = Config.Success<typeof AppConfigShape>

export class AppConfig extends Context.Service<AppConfig, AppConfigShape>()("AppConfig") {
  static readonly layer = Layer.effect(AppConfig, AppConfigShape)
  static readonly layerWith = (overrides: Partial<AppConfigShape>) =>
    Layer.effect(AppConfig, Effect.map(AppConfigShape, (config) => ({ ...config, ...overrides })))
}

/** Where the service connects, for a start-up failure: names DATABASE_URL when it came from there (never its password). */
export const databaseTarget = (config: AppConfigShape): string =>
  Option.isSome(config.databaseUrl) ? `DATABASE_URL (${describeDatabase(config)})` : `the ${describeDatabase(config)}`

export const describeDatabase = (config: AppConfigShape): string =>
  Option.match(config.databaseUrl, {
    onNone: () => `embedded PostgreSQL (${config.embeddedDataDir})`,
    onSome: (url) => {
      const parsed = URL.canParse(Redacted.value(url)) ? new URL(Redacted.value(url)) : undefined
      return parsed ? `PostgreSQL ${parsed.hostname}:${parsed.port || "5432"}${parsed.pathname}` : "PostgreSQL"
    }
  })
