/** A bounded load run with autocannon (its own HTTP client, in this process, not the server's). */
import autocannon from "autocannon"
import { cpuMs } from "./proc.ts"

export interface LoadRequest {
  readonly path: string
  readonly method?: "GET" | "POST"
  readonly headers?: Record<string, string>
  /** A body per request (`i` counts requests), e.g. a fresh Idempotency-Key each time; `path` overrides the path. */
  readonly body?: (
    i: number
  ) => { readonly body: string; readonly headers?: Record<string, string>; readonly path?: string }
}

/** The middle of `values` (the upper middle of an even count; 0 when empty), in any order. */
export const median = (values: ReadonlyArray<number>) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0

/** The `p` quantile (0..1) of ascending `sorted` values (0 when empty). */
export const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0

export interface LoadResult {
  readonly rps: number
  readonly p50: number
  readonly p99: number
  readonly cpuMsPerRequest: number
  /** The same, unrounded: CPU time over requests answered (for figures under 0.01 ms). */
  readonly cpuUsPerRequest: number
  readonly non2xx: number
  readonly errors: number
}

export const runLoad = async (
  baseUrl: string,
  pid: number,
  request: LoadRequest,
  /** `amount`: a fixed number of requests instead of `seconds` (one-shot work such as confirming payouts). */
  options: { readonly connections: number; readonly seconds: number; readonly amount?: number }
): Promise<LoadResult> => {
  let i = 0
  const cpuBefore = cpuMs(pid)
  const result = await autocannon({
    url: baseUrl,
    connections: options.connections,
    duration: options.seconds,
    ...(options.amount === undefined ? {} : { amount: options.amount }),
    requests: [{
      method: request.method ?? "GET",
      path: request.path,
      headers: request.headers ?? {},
      ...(request.body === undefined ? {} : {
        setupRequest: (req: autocannon.Request) => {
          const next = request.body!(i++)
          return {
            ...req,
            body: next.body,
            headers: { ...req.headers, ...next.headers },
            ...(next.path === undefined ? {} : { path: next.path })
          }
        }
      })
    }]
  })
  const cpu = cpuMs(pid) - cpuBefore
  const total = result.requests.total
  return {
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    cpuMsPerRequest: total === 0 ? 0 : Math.round((cpu / total) * 100) / 100,
    cpuUsPerRequest: total === 0 ? 0 : (cpu * 1000) / total,
    non2xx: result.non2xx,
    errors: result.errors
  }
}
