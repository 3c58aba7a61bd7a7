/** One request the kit sent and what came back: the evidence a report carries (plain data, no Effect). */

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
