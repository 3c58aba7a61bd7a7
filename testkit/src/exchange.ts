/**
 * One request the kit sent and what came back: the evidence a report carries (plain data, no Effect), and how an
 * error that stood in for the answer reads.
 */

export interface RecordedRequest {
  readonly method: string
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string | undefined
  readonly bodyBytes: number
}

export interface RecordedResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  /** The parsed body when it is JSON. */
  readonly json: unknown
  readonly isJson: boolean
}

export interface Exchange {
  readonly request: RecordedRequest
  readonly response: RecordedResponse | undefined
  readonly error: string | undefined
  readonly startedAt: string
  readonly durationMs: number
  readonly curl: string
}

/**
 * `message`, then `: ` and the message of each cause in turn (fetch's "fetch failed: connect …"; a typed client's
 * "Transport error (GET …): fetch failed: other side closed"), with a cause's `code` when its message lacks it.
 */
export const withCause = (message: string, error: Error): string => {
  const parts = [message]
  for (let cause = error.cause, depth = 0; cause instanceof Error && depth < 4; cause = cause.cause, depth++) {
    const code = "code" in cause && typeof cause.code === "string" && !cause.message.includes(cause.code)
      ? ` (${cause.code})`
      : ""
    parts.push(`${cause.message}${code}`)
  }
  return parts.join(": ")
}

/** An error's message with its cause's (see withCause); anything else thrown, as a string. */
export const describeError = (error: unknown): string =>
  error instanceof Error ? withCause(error.message, error) : String(error)
