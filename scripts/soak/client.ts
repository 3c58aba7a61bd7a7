/**
 * The soak's partner client: spreads requests over the replicas that are up (round robin), retries on a network
 * error (on the next replica) and on 503 with Retry-After (after the time it names), and waits out a 409 for an
 * Idempotency-Key still in progress. Records every answer's latency and status per operation, every 5xx and every
 * request that got no answer.
 */
import type { Workload } from "./invariants.ts"
import type { Replica } from "./replicas.ts"

export interface Answer {
  readonly status: number
  readonly body: unknown
  readonly replica: number
}

export interface OpStats {
  readonly latencies: Array<number>
  /** By status, with the errorCode when the answer has one (`409 tx_hash_reused`). */
  readonly statuses: Map<string, number>
}

/** Give up on one logical request after this many tries (a run stops long before, unless replicas stay down). */
const MAX_TRIES = 40
const REQUEST_TIMEOUT_MS = 30_000
const IN_PROGRESS_WAIT_MS = 90_000

/** An answer body's `errorCode` (`tx_hash_reused`), when it has one. */
export const errorCodeOf = (body: unknown): string | undefined => {
  const code = (body as { errorCode?: unknown } | null | undefined)?.errorCode
  return typeof code === "string" ? code : undefined
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

export interface RequestOptions {
  readonly body?: unknown
  readonly headers?: Record<string, string>
  /** Send the first try to this replica (when it is up). */
  readonly replica?: number
  /** Send the first try to any replica but this one (when another is up). */
  readonly avoid?: number
}

export class SoakClient {
  readonly stats = new Map<string, OpStats>()
  readonly serverErrors: Array<Workload["serverErrors"][number]> = []
  readonly connectionErrors: Array<Workload["connectionErrors"][number]> = []
  private turn = 0

  constructor(private readonly replicas: ReadonlyArray<Replica>, private readonly auth: Record<string, string>) {}

  private pick(options: RequestOptions, first: boolean): Replica | undefined {
    const up = this.replicas.filter((r) => r.up)
    if (up.length === 0) return undefined
    if (first && options.replica !== undefined) {
      const wanted = up.find((r) => r.index === options.replica)
      if (wanted !== undefined) return wanted
    }
    const candidates = first && options.avoid !== undefined && up.length > 1
      ? up.filter((r) => r.index !== options.avoid)
      : up
    return candidates[this.turn++ % candidates.length]
  }

  private record(op: string, ms: number, status: number, body: unknown) {
    const code = errorCodeOf(body)
    const label = code === undefined ? String(status) : `${status} ${code}`
    let stats = this.stats.get(op)
    if (stats === undefined) {
      stats = { latencies: [], statuses: new Map() }
      this.stats.set(op, stats)
    }
    stats.latencies.push(ms)
    stats.statuses.set(label, (stats.statuses.get(label) ?? 0) + 1)
  }

  /** One logical request, tried until it gets an answer that is not a retryable 503 or an in-progress 409. */
  async request(op: string, method: string, path: string, options: RequestOptions = {}): Promise<Answer | undefined> {
    const started = Date.now()
    for (let tries = 0; tries < MAX_TRIES; tries++) {
      const replica = this.pick(options, tries === 0)
      if (replica === undefined) {
        await sleep(100)
        continue
      }
      const t0 = performance.now()
      let response: Response
      let text: string
      try {
        response = await fetch(`${replica.service.baseUrl}${path}`, {
          method,
          headers: {
            ...this.auth,
            ...(options.body === undefined ? {} : { "content-type": "application/json" }),
            ...options.headers
          },
          ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
          signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS)
        })
        text = await response.text()
      } catch (error) {
        const cause = (error as { cause?: { code?: string } }).cause?.code
        this.connectionErrors.push({
          op,
          replica: replica.index,
          at: Date.now(),
          error: cause ?? (error instanceof Error ? error.name : String(error))
        })
        await sleep(50)
        continue
      }
      const ms = performance.now() - t0
      let body: unknown = text
      try {
        body = JSON.parse(text)
      } catch {
        // not JSON: kept as text
      }
      this.record(op, ms, response.status, body)
      const retryAfter = response.headers.get("retry-after")
      if (response.status >= 500) {
        this.serverErrors.push({
          op,
          status: response.status,
          retryAfter: retryAfter !== null,
          replica: replica.index,
          at: Date.now()
        })
        if (response.status === 503 && retryAfter !== null) {
          await sleep(Math.min(5_000, Math.max(50, Number(retryAfter) * 1000)))
          continue
        }
      }
      const error = (body as { error?: unknown } | null)?.error
      if (
        response.status === 409 && typeof error === "string" && error.includes("still in progress") &&
        Date.now() - started < IN_PROGRESS_WAIT_MS
      ) {
        await sleep(500)
        tries--
        continue
      }
      return { status: response.status, body, replica: replica.index }
    }
    return undefined
  }
}
