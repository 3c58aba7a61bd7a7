/**
 * Traces: OpenTelemetry spans through Effect's own tracer and its OTLP/HTTP exporter (protobuf), when an endpoint is
 * configured; otherwise the tracer is off and nothing is propagated. Sampling by ratio, decided once per trace by
 * its id, parent-based: a caller's sampled `traceparent` is followed, an unsampled one is not recorded. A span that
 * is not recorded costs one small object (no attributes kept, nothing exported), and still carries its trace id on.
 */
import { Context, Duration, Effect, type Exit, Layer, Option, References, Tracer } from "effect"
import { FetchHttpClient, Headers, HttpMiddleware, HttpTraceContext } from "effect/http"
import { OtlpExporter, OtlpSerialization, OtlpTracer } from "effect/observability"

export interface TracingOptions {
  /** OTEL_EXPORTER_OTLP_ENDPOINT: the collector's base URL; spans go to `<endpoint>/v1/traces`. */
  readonly endpoint: string
  readonly headers: Readonly<Record<string, string>>
  readonly serviceName: string
  readonly serviceVersion?: string | undefined
  /** The share of new traces recorded, 0 to 1. */
  readonly ratio: number
  /** How often a batch of ended spans is sent. */
  readonly exportIntervalMs: number
  /** Paths whose requests are never traced (health checks: probed every few seconds, they would cost for nothing). */
  readonly untracedPaths?: ReadonlyArray<string> | undefined
}

const EMPTY_ATTRIBUTES: ReadonlyMap<string, unknown> = new Map()

const randomHex = (bytes: number) => {
  let hex = ""
  for (let i = 0; i < bytes; i++) hex += Math.floor(Math.random() * 256).toString(16).padStart(2, "0")
  return hex
}

type SpanStart = Parameters<Tracer.Tracer["span"]>[0]

/** A span that is not recorded: it keeps its ids (so its trace is propagated, flagged unsampled) and nothing else. */
class UnrecordedSpan implements Tracer.Span {
  readonly _tag = "Span"
  readonly sampled = false
  readonly attributes = EMPTY_ATTRIBUTES
  readonly name: string
  readonly parent: Option.Option<Tracer.AnySpan>
  readonly annotations: Context.Context<never>
  readonly links: ReadonlyArray<Tracer.SpanLink>
  readonly kind: Tracer.SpanKind
  status: Tracer.SpanStatus
  private ownTraceId: string | undefined
  private ownSpanId: string | undefined = undefined

  constructor(options: SpanStart, traceId?: string) {
    this.name = options.name
    this.parent = options.parent
    this.annotations = options.annotations
    this.links = options.links
    this.kind = options.kind
    this.status = { _tag: "Started", startTime: options.startTime }
    this.ownTraceId = traceId
  }

  get traceId(): string {
    return this.ownTraceId ??= Option.isSome(this.parent) ? this.parent.value.traceId : randomHex(16)
  }

  get spanId(): string {
    return this.ownSpanId ??= randomHex(8)
  }

  end(endTime: bigint, exit: Exit.Exit<unknown, unknown>): void {
    if (this.status._tag === "Started") {
      this.status = { _tag: "Ended", startTime: this.status.startTime, endTime, exit }
    }
  }

  attribute(): void {}
  event(): void {}
  addLinks(): void {}
}

/**
 * Whether a new trace with this id is recorded at `ratio`: its last 8 hex digits (random in W3C trace ids) read as a
 * fraction of 2^32, below the ratio. The same id always gets the same answer.
 */
export const sampledAtRatio = (traceId: string, ratio: number): boolean => {
  if (ratio >= 1) return true
  if (ratio <= 0) return false
  const low = Number.parseInt(traceId.slice(-8), 16)
  return Number.isFinite(low) && low < ratio * 0x1_0000_0000
}

/**
 * Where a trace may start: a request (server span) or a piece of background work (consumer span: a job, a webhook
 * delivery). A statement, call or service span with no parent (a polling loop's query, a batch of request logs, a
 * start-up step) starts none, so the loops' polling does not fill the collector.
 */
const startsTrace = (kind: Tracer.SpanKind) => kind === "server" || kind === "consumer"

/**
 * `tracer`, recording `ratio` of new traces. A span whose parent was not recorded (Effect passes `sampled: false`
 * then, a caller's `traceparent` flagged 00 included) is not recorded either; a span under a recorded parent is
 * (a caller's flag 01 is followed whatever the ratio); a root that may start a trace is decided by its trace id.
 */
export const sampleByRatio = (tracer: Tracer.Tracer, ratio: number): Tracer.Tracer =>
  Tracer.make({
    span(options) {
      if (!options.sampled) return new UnrecordedSpan(options)
      if (Option.isSome(options.parent)) return tracer.span(options)
      if (!startsTrace(options.kind)) return new UnrecordedSpan(options)
      if (ratio >= 1) return tracer.span(options)
      const span = tracer.span(options)
      return sampledAtRatio(span.traceId, ratio) ? span : new UnrecordedSpan(options, span.traceId)
    },
    context: tracer.context
  })

/**
 * The tracer off, at no cost: spans are not built (Effect's no-op spans) and no `traceparent` or `b3` goes out on an
 * HTTP client request (`DisablePropagation`: without it, the client put a no-op span's "noop" ids in the headers).
 */
export const TracingOff: Layer.Layer<never> = Layer.mergeAll(
  Layer.succeed(References.TracerEnabled, false),
  Layer.succeed(Tracer.DisablePropagation, true)
)

/**
 * The request's span named by its route's template (`POST /api/integrations/breb/payouts/:id`, never the path with
 * its ids) once routing found it, with `http.route`; before that it carries the method only (a request no route
 * answers keeps that name). Found as the nearest server span above the current one.
 */
export const nameRequestSpan = (current: Tracer.AnySpan | undefined, method: string, route: string): void => {
  let span = current
  while (span !== undefined && span._tag === "Span" && span.kind !== "server") span = Option.getOrUndefined(span.parent)
  if (span === undefined || span._tag !== "Span" || !span.sampled) return
  Object.assign(span, { name: `${method} ${route}` })
  span.attribute("http.route", route)
}

/** Spans exported over OTLP/HTTP (protobuf) to `options.endpoint`, sampled at `options.ratio`. */
export const tracingLayer = (options: TracingOptions): Layer.Layer<never> => {
  const untraced = new Set(options.untracedPaths ?? [])
  return Layer.mergeAll(
    Layer.effect(
      Tracer.Tracer,
      Effect.map(
        OtlpTracer.make({
          url: `${options.endpoint.replace(/\/+$/, "")}/v1/traces`,
          headers: options.headers,
          resource: { serviceName: options.serviceName, serviceVersion: options.serviceVersion },
          exportInterval: Duration.millis(options.exportIntervalMs)
        }),
        (tracer) => sampleByRatio(tracer, options.ratio)
      )
    ),
    Layer.succeed(References.TracerEnabled, true),
    Layer.succeed(Tracer.DisablePropagation, false),
    Layer.succeed(HttpMiddleware.TracerDisabledWhen, (request) => untraced.has(request.url.split("?")[0] ?? ""))
  ).pipe(
    Layer.provide(Layer.mergeAll(FetchHttpClient.layer, OtlpSerialization.layerProtobuf, OtlpExporter.layerFlusher))
  )
}

/** A stored `traceparent` (W3C, version 00) as a parent span; none when absent or not one. */
export const parentFromTraceparent = (traceparent: string | null): Tracer.ExternalSpan | undefined =>
  traceparent === null
    ? undefined
    : Option.getOrUndefined(HttpTraceContext.w3c(Headers.fromRecordUnsafe({ traceparent })))

const TRACE_ID = /^[0-9a-f]{32}$/
const SPAN_ID = /^[0-9a-f]{16}$/

/**
 * The W3C `traceparent` of `span`, to send on a request or store with work done later; undefined while tracing is off
 * (Effect's no-op spans carry "noop" ids and `DisablePropagation`) or outside any span.
 */
export const traceparentOf = (span: Tracer.AnySpan | undefined): string | undefined => {
  if (span === undefined || Context.get(span.annotations, Tracer.DisablePropagation)) return undefined
  const traceId = span.traceId.padStart(32, "0")
  if (!TRACE_ID.test(traceId) || !SPAN_ID.test(span.spanId)) return undefined
  return `00-${traceId}-${span.spanId}-${span.sampled ? "01" : "00"}`
}

/** The current span's `traceparent` (see `traceparentOf`), or null. */
export const currentTraceparent: Effect.Effect<string | null> = Effect.withFiber((fiber) =>
  Effect.succeed(
    fiber.getRef(Tracer.DisablePropagation)
      ? null
      : traceparentOf(Context.getOrUndefined(fiber.context, Tracer.ParentSpan)) ?? null
  )
)

/**
 * `effect` in a span named `name` while the tracer is on; with it off, the effect as it is (not even a no-op span:
 * making one captures a stack trace, `new Error()`, which cost more than a mock-mode port call's own work).
 */
export const spanWhenTracing = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  name: string,
  attributes: Record<string, unknown>
): Effect.Effect<A, E, R> =>
  Effect.withFiber((fiber) => fiber.cache.tracerEnabled ? Effect.withSpan(effect, name, { attributes }) : effect)

/**
 * A span of background work (a job, a webhook delivery: kind consumer), continuing the trace of the `traceparent`
 * stored with it (that trace's sampling decision with it), or starting one of its own when none was stored.
 */
export const withWorkSpan =
  (name: string, traceparent: string | null, attributes: Record<string, unknown>) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => {
    const parent = parentFromTraceparent(traceparent)
    return Effect.withSpan(
      effect,
      name,
      parent === undefined ? { kind: "consumer", attributes, root: true } : { kind: "consumer", attributes, parent }
    )
  }
