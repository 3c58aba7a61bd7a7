/**
 * Families of metric series by label set, in Effect's default metric registry (the admin listener exports it): one
 * metric object per label set, made on first use and kept, so an update costs a key, a Map lookup and the update.
 * Callers keep their labels bounded (a status, an outcome, a kind: never an id, a URL or an integration).
 */
import { Context, Effect, Exit, Metric } from "effect"

/** Effect's default metric registry: the context every update and the admin listener's scrape read it with. */
export const metricsContext = Context.empty()

type Labels = Readonly<Record<string, string>>

const keyOf = (labels: Labels) => Object.values(labels).join("\u0000")

const family = <M>(make: (labels: Labels) => M) => {
  const series = new Map<string, M>()
  return (labels: Labels): M => {
    const key = keyOf(labels)
    let found = series.get(key)
    if (found === undefined) {
      found = make(labels)
      series.set(key, found)
    }
    return found
  }
}

export interface CounterFamily<L extends Labels> {
  readonly add: (labels: L, amount?: number) => void
  /** Makes the series at 0 (Effect's exporter lists a series only once updated), so a rate over it is defined. */
  readonly touch: (labels: L) => void
}

/** Name it with `_total` (Effect's exporter adds no suffix). */
export const counterFamily = <L extends Labels>(name: string, description: string): CounterFamily<L> => {
  const of = family((attributes) => Metric.counter(name, { description, attributes, incremental: true }))
  return {
    add: (labels, amount = 1) => of(labels).updateUnsafe(amount, metricsContext),
    touch: (labels) => of(labels).updateUnsafe(0, metricsContext)
  }
}

export interface HistogramFamily<L extends Labels> {
  readonly observe: (labels: L, value: number) => void
}

export const histogramFamily = <L extends Labels>(
  name: string,
  description: string,
  boundaries: ReadonlyArray<number>
): HistogramFamily<L> => {
  const of = family((attributes) => Metric.histogram(name, { description, attributes, boundaries }))
  return { observe: (labels, value) => of(labels).updateUnsafe(value, metricsContext) }
}

export interface GaugeFamily<L extends Labels> {
  readonly set: (labels: L, value: number) => void
}

export const gaugeFamily = <L extends Labels>(name: string, description: string): GaugeFamily<L> => {
  const of = family((attributes) => Metric.gauge(name, { description, attributes }))
  return { set: (labels, value) => of(labels).updateUnsafe(value, metricsContext) }
}

/** A sampled age gauge's value: seconds from `since` to `at`, never negative; 0 when there is nothing (`null`). */
export const secondsSince = (since: Date | null, at: Date): number =>
  since === null ? 0 : Math.max(0, (at.getTime() - since.getTime()) / 1000)

/** Seconds; from a local call (a millisecond) to a remote one that timed out (30 s). */
export const CALL_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

/**
 * Counts each run of `effect` under `operation` and the outcome `outcomeOf` names for its exit (a success, a failure
 * by its tag, `interrupted`), and times it. For a port's calls (src/provider, src/chain).
 */
export const measureCall = <A, E, R>(
  calls: CounterFamily<{ readonly operation: string; readonly outcome: string }>,
  durations: HistogramFamily<{ readonly operation: string; readonly outcome: string }>,
  operation: string,
  outcomeOf: (exit: Exit.Exit<A, E>) => string,
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> =>
  Effect.suspend(() => {
    const started = performance.now()
    return Effect.onExit(effect, (exit) =>
      Effect.sync(() => {
        const labels = { operation, outcome: outcomeOf(exit) }
        calls.add(labels)
        durations.observe(labels, (performance.now() - started) / 1000)
      }))
  })

/** The outcome of a call's exit: `ok`, the failure's name (`failureName`), `interrupted`, or `defect`. */
export const outcomeOfExit = <E>(failureName: (error: E) => string) => (exit: Exit.Exit<unknown, E>): string => {
  if (Exit.isSuccess(exit)) return "ok"
  if (Exit.hasInterrupts(exit)) return "interrupted"
  const failure = Exit.findErrorOption(exit)
  return failure._tag === "Some" ? failureName(failure.value) : "defect"
}
