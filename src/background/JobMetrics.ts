/**
 * The job queue's metrics: how long a job waited past its due time when a worker took it (by kind), each run's
 * outcome, counted once committed, and the queue's depth and lag by kind, sampled from the database by the worker
 * (src/worker/MetricsSampler.ts). Kinds are the job kinds this code knows (`Job`'s tags): a bounded set.
 */
import { counterFamily, gaugeFamily, histogramFamily, secondsSince } from "../base/MetricSeries.ts"
import { KNOWN_KINDS } from "./JobQueue.ts"

type Kind = { readonly kind: string }

/** Seconds; a job is taken within a poll interval (25 ms … 1 s) unless the workers fall behind. */
const LAG_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600]

const lags = histogramFamily<Kind>(
  "cop_job_lag_seconds",
  "How long a job had been due when a worker took it (now minus its run_at), in seconds, by kind.",
  LAG_BUCKETS
)

/** `done`; `retrying` (failed, another attempt scheduled); `dead` (failed its last allowed attempt). */
export type JobOutcome = "done" | "retrying" | "dead"

const runs = counterFamily<Kind & { readonly outcome: JobOutcome }>(
  "cop_job_runs_total",
  "Job runs by kind and outcome (done, retrying, dead), counted once committed."
)

// Present at 0 from the start (Effect's exporter lists a series only once updated), so a rate over them is defined.
for (const kind of KNOWN_KINDS) {
  for (const outcome of ["done", "retrying", "dead"] as const) runs.touch({ kind, outcome })
}

/** A run of a job taken `lagSeconds` after it was due, committed with `outcome`. */
export const countJobRun = (kind: string, outcome: JobOutcome, lagSeconds: number): void => {
  lags.observe({ kind }, Math.max(0, lagSeconds))
  runs.add({ kind, outcome })
}

const depths = gaugeFamily<Kind>(
  "cop_job_queue_depth",
  "Unfinished jobs (neither done nor dead) by kind, due or not, in the whole database: every replica reports the " +
    "same value, so aggregate with max()."
)
const dues = gaugeFamily<Kind>(
  "cop_job_queue_due",
  "Jobs due now and not yet run, by kind; database-wide: every replica reports the same value, so aggregate with max()."
)
const oldestDue = gaugeFamily<Kind>(
  "cop_job_queue_lag_seconds",
  "How long the oldest due job of a kind has been waiting (now minus its run_at), in seconds, 0 when none is due; " +
    "database-wide: every replica reports the same value, so aggregate with max()."
)

/** One kind's row of a sample of the queue. */
export interface JobQueueDepth {
  readonly kind: string
  readonly depth: number
  readonly due: number
  /** The oldest due job's run_at; null when none is due. */
  readonly oldestDue: Date | null
}

/** Sets the gauges of every kind from a sample (a kind without a row has none waiting). */
export const setJobQueueDepths = (rows: ReadonlyArray<JobQueueDepth>, at: Date): void => {
  for (const kind of KNOWN_KINDS) {
    const row = rows.find((candidate) => candidate.kind === kind)
    depths.set({ kind }, row?.depth ?? 0)
    dues.set({ kind }, row?.due ?? 0)
    oldestDue.set({ kind }, secondsSince(row?.oldestDue ?? null, at))
  }
}
