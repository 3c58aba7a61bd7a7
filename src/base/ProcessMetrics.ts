/**
 * The process's own metrics, in Effect's default metric registry (the admin listener exports it): event loop delay
 * since the previous scrape, GC pauses by kind, heap and resident memory. Read at scrape time, except GC pauses,
 * which V8 reports as they happen.
 */
import { constants as perfConstants, monitorEventLoopDelay, PerformanceObserver } from "node:perf_hooks"
import { Context, Metric } from "effect"

/** Effect's default metric registry: the context the admin listener's scrape reads it with. */
const registry = Context.empty()

/** Seconds, as prom-client's nodejs_gc_duration_seconds: a minor GC takes about a millisecond, a major one more. */
const GC_BUCKETS = [0.001, 0.01, 0.1, 1, 2, 5]

const GC_KINDS: ReadonlyArray<readonly [number, string]> = [
  [perfConstants.NODE_PERFORMANCE_GC_MINOR, "minor"],
  [perfConstants.NODE_PERFORMANCE_GC_MAJOR, "major"],
  [perfConstants.NODE_PERFORMANCE_GC_INCREMENTAL, "incremental"],
  [perfConstants.NODE_PERFORMANCE_GC_WEAKCB, "weakcb"]
]

const gcDurations = new Map(GC_KINDS.map(([kind, name]) => [
  kind,
  Metric.histogram("cop_process_gc_duration_seconds", {
    description: "Garbage collection pauses, in seconds, by kind (minor, major, incremental, weakcb).",
    attributes: { kind: name },
    boundaries: GC_BUCKETS
  })
]))

const gauge = (name: string, description: string, read: () => number) =>
  Metric.registerUnsafe(Metric.gauge(name, { description }), registry, {
    get: () => ({ value: read() }),
    update: () => {},
    modify: () => {}
  })

/** Node reports the delay in nanoseconds, and NaN for a percentile of no sample. */
const seconds = (nanoseconds: number) => (Number.isFinite(nanoseconds) ? nanoseconds / 1e9 : 0)

export interface ProcessMetrics {
  /** Takes the figures the gauges show: call it before each export. */
  readonly sample: () => void
  readonly stop: () => void
}

/**
 * Starts watching the event loop and the GC, and registers the gauges an export reads (the figures `sample` took);
 * the event loop's cover the time since the previous sample. `stop` undoes all of it.
 */
export const startProcessMetrics = (): ProcessMetrics => {
  const loopDelay = monitorEventLoopDelay({ resolution: 10 })
  loopDelay.enable()
  const gc = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      // A gc entry carries its kind in `detail` (Node's NodeGCPerformanceDetail).
      const kind = (entry as PerformanceEntry & { readonly detail?: { readonly kind?: number } }).detail?.kind
      if (kind !== undefined) gcDurations.get(kind)?.updateUnsafe(entry.duration / 1000, registry)
    }
  })
  gc.observe({ entryTypes: ["gc"] })
  let sampled = { p50: 0, p99: 0, max: 0, memory: process.memoryUsage() }
  const sample = () => {
    sampled = {
      p50: seconds(loopDelay.percentile(50)),
      p99: seconds(loopDelay.percentile(99)),
      max: seconds(loopDelay.max),
      memory: process.memoryUsage()
    }
    loopDelay.reset()
  }
  const registrations = [
    gauge(
      "cop_process_event_loop_delay_p50_seconds",
      "Median event loop delay since the previous scrape, in seconds.",
      () => sampled.p50
    ),
    gauge(
      "cop_process_event_loop_delay_p99_seconds",
      "99th percentile event loop delay since the previous scrape, in seconds.",
      () => sampled.p99
    ),
    gauge(
      "cop_process_event_loop_delay_max_seconds",
      "Longest event loop delay since the previous scrape, in seconds.",
      () => sampled.max
    ),
    gauge("cop_process_heap_used_bytes", "V8 heap in use, in bytes.", () => sampled.memory.heapUsed),
    gauge("cop_process_heap_total_bytes", "V8 heap allocated, in bytes.", () => sampled.memory.heapTotal),
    gauge("cop_process_resident_memory_bytes", "Resident set size, in bytes.", () => sampled.memory.rss)
  ]
  return {
    sample,
    stop: () => {
      gc.disconnect()
      loopDelay.disable()
      registrations.forEach((registration) => registration.remove())
    }
  }
}
