/** What the client throws. Every API answer outside 2xx is an `IntegrationsApiError`; no answer at all is an
 *  `IntegrationsConnectionError`. */

/** The contract's ErrorBody: `error` is a message for people, `errorCode` (on domain errors) is for code. */
export interface ErrorBody {
  readonly error: string
  readonly errorCode?: string
}

export class IntegrationsApiError extends Error {
  override readonly name = "IntegrationsApiError"
  /** The HTTP status (400, 401, 403, 404, 409, 422, 429, 503, ...). */
  readonly status: number
  /** The stable code of a domain error (`needs_kyc`, `tx_hash_reused`, `mercado_cerrado`, ...), when it has one. */
  readonly errorCode: string | undefined
  /** The answer's body: the ErrorBody, or its text when it was not JSON. */
  readonly body: ErrorBody | string
  /** `X-Request-Id`: quote it to support; the dashboard's request log finds it. */
  readonly requestId: string | undefined
  /** `Retry-After` in seconds, when the answer set one. */
  readonly retryAfterSeconds: number | undefined
  readonly operationId: string

  constructor(fields: {
    readonly operationId: string
    readonly status: number
    readonly body: ErrorBody | string
    readonly requestId: string | undefined
    readonly retryAfterSeconds: number | undefined
  }) {
    const message = typeof fields.body === "string" ? fields.body : fields.body.error
    super(`${fields.operationId}: ${fields.status}${message === "" ? "" : ` ${message}`}`)
    this.operationId = fields.operationId
    this.status = fields.status
    this.body = fields.body
    this.errorCode = typeof fields.body === "string" ? undefined : fields.body.errorCode
    this.requestId = fields.requestId
    this.retryAfterSeconds = fields.retryAfterSeconds
  }
}

/** The request got no answer: refused, reset, timed out. */
export class IntegrationsConnectionError extends Error {
  override readonly name = "IntegrationsConnectionError"
  readonly operationId: string
  constructor(operationId: string, cause: unknown) {
    super(`${operationId}: no answer (${cause instanceof Error ? cause.message : "unknown failure"})`, { cause })
    this.operationId = operationId
  }
}

/** A webhook delivery that is not the service's: a bad or missing signature, or a timestamp too far from now. */
export class WebhookVerificationError extends Error {
  override readonly name = "WebhookVerificationError"
}
