/**
 * Request metrics, in Effect's metric registry (the admin listener exports it, src/http/AdminServer.ts). Labels are
 * bounded: the route's template (never the path with its ids), the method, the status class, and the integration only
 * when METRICS_PER_INTEGRATION asks for it.
 */
import { Context, Effect, Metric, Tracer } from "effect"
import { HttpRouter, HttpServerRequest } from "effect/http"
import { ResponseHints } from "../base/ResponseHints.ts"
import { nameRequestSpan } from "../base/Tracing.ts"

/** The route label of a request no route answered (no match, or answered before routing: 404, 413, 415, ...). */
export const UNMATCHED_ROUTE = "unmatched"

/** Seconds; Prometheus client libraries' default buckets, which a create (tens of ms) and a slow list both fall in. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])

const methodLabel = (method: string) => (METHODS.has(method) ? method : "other")

const statusClass = (status: number) => `${Math.min(5, Math.max(1, Math.floor(status / 100)))}xx`

/** The registry's context: Effect's default registry, which a scrape reads with the same empty context. */
export const metricsContext = Context.empty()

interface RequestSeries {
  readonly count: Metric.Counter<number>
  readonly duration: Metric.Histogram<number>
}

/**
 * One metric object per label set, made once: a metric caches its registry key, so a request costs a string key, a
 * Map lookup and two updates, never a key rebuilt from its attributes.
 */
const series = new Map<string, RequestSeries>()

const seriesFor = (route: string, method: string, status: string, integration: string | undefined) => {
  const key = integration === undefined
    ? `${route} ${method} ${status}`
    : `${route} ${method} ${status} ${integration}`
  let found = series.get(key)
  if (found === undefined) {
    const attributes: Record<string, string> = { route, method, status_class: status }
    if (integration !== undefined) attributes["integration"] = integration
    found = {
      count: Metric.counter("cop_http_requests_total", {
        description: "HTTP requests answered by the app, by route template, method and status class.",
        attributes
      }),
      duration: Metric.histogram("cop_http_request_duration_seconds", {
        description: "Time from a request's arrival in the app to its answer, in seconds.",
        attributes,
        boundaries: DURATION_BUCKETS
      })
    }
    series.set(key, found)
  }
  return found
}

export interface AnsweredRequest {
  readonly route: string | undefined
  readonly method: string
  readonly status: number
  readonly seconds: number
  /** Set only with METRICS_PER_INTEGRATION. */
  readonly integration: string | undefined
}

export const recordRequest = (request: AnsweredRequest): void => {
  const { count, duration } = seriesFor(
    request.route ?? UNMATCHED_ROUTE,
    methodLabel(request.method),
    statusClass(request.status),
    request.integration
  )
  count.updateUnsafe(1, metricsContext)
  duration.updateUnsafe(request.seconds, metricsContext)
}

/**
 * Route middleware: notes the matched route's template in the request's hints (the request middleware, outside the
 * router, records the metrics once the answer is known) and names the request's span by it, when one is recorded.
 * Provided to the Layers that add routes.
 */
export const RouteTemplateLive = HttpRouter.middleware((app) =>
  Effect.withFiber((fiber) => {
    const hints = Context.getOrUndefined(fiber.context, ResponseHints)
    const route = Context.getOrUndefined(fiber.context, HttpRouter.RouteContext)
    if (route !== undefined) {
      if (hints !== undefined) hints.route = route.route.path
      if (fiber.cache.tracerEnabled) {
        const method = Context.getOrUndefined(fiber.context, HttpServerRequest.HttpServerRequest)?.method ?? "GET"
        nameRequestSpan(Context.getOrUndefined(fiber.context, Tracer.ParentSpan), method, route.route.path)
      }
    }
    return app
  })
).layer

/** Why a request was answered 503 before the app saw it (src/http/ServeLifecycle.ts). */
export type ShedReason = "in_flight_limit" | "database_queue" | "starting" | "shutting_down"

const shedCounters = new Map<ShedReason, Metric.Counter<number>>(
  (["in_flight_limit", "database_queue", "starting", "shutting_down"] as const).map((reason) => {
    const counter = Metric.counter("cop_http_requests_shed_total", {
      description:
        "Requests answered 503 before the app saw them: over the admission limits, starting or shutting down.",
      attributes: { reason }
    })
    // Present at 0 from the start, so a rate over it is defined before the first shed request.
    counter.updateUnsafe(0, metricsContext)
    return [reason, counter]
  })
)

export const countShed = (reason: ShedReason): void => shedCounters.get(reason)?.updateUnsafe(1, metricsContext)
