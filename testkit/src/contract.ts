/**
 * The contract as the kit reads it: every endpoint of `IntegrationsApi` (method, path, the status and
 * schema of its success, the statuses and schemas of its declared errors), reflected from the HttpApi
 * definition itself, and the check every response of a run goes through.
 */
import { HttpApi } from "@effect/platform"
import {
  Authentication,
  ErrorBody,
  EventList,
  EventWithAttempts,
  KycCustomer,
  Health,
  IntegrationsApi,
  OtpSendResponse,
  OtpVerifyResponse,
  Payout,
  PayoutList,
  PingEvent,
  Quote,
  Readiness,
  Redelivery,
  SwapIntent,
  SwapList,
  WebhookAck,
  WebhookEndpoint,
  WebhookEndpointList,
  WebhookEndpointWithSecret
} from "@cop-integrations/contracts"
import { Either, Option, ParseResult, Schema } from "effect"
import type { AST } from "effect/SchemaAST"

/** The success body of each endpoint, by the contract's endpoint name. */
export const successSchemas = {
  quote: Quote,
  sendOtp: OtpSendResponse,
  verifyOtp: OtpVerifyResponse,
  createPayout: Payout,
  getPayout: Payout,
  confirmPayout: Payout,
  listPayouts: PayoutList,
  prepareSwap: SwapIntent,
  getSwap: SwapIntent,
  confirmSwap: SwapIntent,
  listSwaps: SwapList,
  createWebhookEndpoint: WebhookEndpointWithSecret,
  listWebhookEndpoints: WebhookEndpointList,
  getWebhookEndpoint: WebhookEndpoint,
  deleteWebhookEndpoint: Schema.Void,
  rotateWebhookSecret: WebhookEndpointWithSecret,
  pingWebhookEndpoint: PingEvent,
  listEvents: EventList,
  getEvent: EventWithAttempts,
  redeliverEvent: Redelivery,
  advancePayout: Payout,
  rejectKyc: KycCustomer,
  provider: WebhookAck,
  healthz: Health,
  readyz: Readiness
} as const

export type EndpointName = keyof typeof successSchemas
export type SuccessOf<E extends EndpointName> = Schema.Schema.Type<(typeof successSchemas)[E]>

export interface EndpointSpec {
  readonly name: EndpointName
  readonly method: string
  /** With `:param` placeholders, as the contract writes it. */
  readonly path: string
  readonly authenticated: boolean
  readonly successStatus: number
  readonly successAst: AST
  /** Declared error statuses; the AST is the union of the error bodies allowed at that status. */
  readonly errors: ReadonlyMap<number, AST | undefined>
  readonly payload: Schema.Schema<unknown> | undefined
  readonly urlParams: Schema.Schema<unknown> | undefined
  readonly headers: Schema.Schema<unknown> | undefined
  readonly pathParams: Schema.Schema<unknown> | undefined
}

const isEndpointName = (name: string): name is EndpointName => Object.hasOwn(successSchemas, name)

const optionalSchema = (schema: Option.Option<{ readonly ast: AST }>): Schema.Schema<unknown> | undefined =>
  Option.match(schema, { onNone: () => undefined, onSome: (s) => Schema.make<unknown>(s.ast) })

const reflectEndpoints = (): ReadonlyMap<EndpointName, EndpointSpec> => {
  const specs = new Map<EndpointName, EndpointSpec>()
  HttpApi.reflect(IntegrationsApi, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, errors, middleware, successes }) => {
      if (!isEndpointName(endpoint.name)) throw new Error(`the kit does not know endpoint ${endpoint.name}`)
      const [successStatus, success] = [...successes.entries()][0] ?? [200, undefined]
      specs.set(endpoint.name, {
        name: endpoint.name,
        method: endpoint.method,
        path: endpoint.path,
        authenticated: (middleware as ReadonlySet<unknown>).has(Authentication),
        successStatus,
        // No success schema: a 204 answers no body (void); anything else is not checked further.
        successAst: Option.getOrElse(success?.ast ?? Option.none(), () => (successStatus === 204 ? Schema.Void.ast : Schema.Unknown.ast)),
        errors: new Map([...errors.entries()].map(([status, error]) => [status, Option.getOrUndefined(error.ast)])),
        payload: optionalSchema(endpoint.payloadSchema),
        urlParams: optionalSchema(endpoint.urlParamsSchema),
        headers: optionalSchema(endpoint.headersSchema),
        pathParams: optionalSchema(endpoint.pathSchema)
      })
    }
  })
  return specs
}

export const endpoints: ReadonlyMap<EndpointName, EndpointSpec> = reflectEndpoints()

export const endpoint = (name: EndpointName): EndpointSpec => {
  const spec = endpoints.get(name)
  if (spec === undefined) throw new Error(`no endpoint ${name} in the contract`)
  return spec
}

/** The concrete path of an endpoint with its path parameters filled in. */
export const pathOf = (spec: EndpointSpec, params: Readonly<Record<string, string>> = {}): string =>
  spec.path.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) => encodeURIComponent(params[name] ?? ""))

/** Statuses every endpoint with a body may answer before the contract's own decoding runs (DESIGN §3 Limits). */
const transportStatuses = new Set([413, 415])

const strict = { onExcessProperty: "error", errors: "all" } as const

/** "path: message; path: message" for a parse error. */
export const describeParseError = (error: ParseResult.ParseError): string =>
  ParseResult.ArrayFormatter.formatErrorSync(error)
    .slice(0, 6)
    .map((issue) => (issue.path.length === 0 ? issue.message : `${issue.path.join(".")}: ${issue.message}`))
    .join("; ")

export const decodeStrict = <A, I>(schema: Schema.Schema<A, I>, value: unknown): Either.Either<A, string> =>
  Either.mapLeft(Schema.decodeUnknownEither(schema, strict)(value), describeParseError)

export const decodeErrorBody = (value: unknown): Either.Either<ErrorBody, string> =>
  Either.mapLeft(
    decodeStrict(ErrorBody, value),
    (problem) => `not an ErrorBody {error, errorCode?} with a documented errorCode: ${problem}`
  )

export interface ContractResponse {
  readonly status: number
  readonly isJson: boolean
  readonly json: unknown
}

/** Statuses the contract declares for an endpoint (success first). */
export const declaredStatuses = (spec: EndpointSpec): ReadonlyArray<number> => [
  spec.successStatus,
  ...[...spec.errors.keys()].sort((a, b) => a - b)
]

/** Why a response breaks the contract of `spec`, or undefined when it keeps it. */
export const contractProblem = (spec: EndpointSpec, response: ContractResponse): string | undefined => {
  if (response.status === 204 && spec.successStatus === 204) {
    return response.json === undefined ? undefined : "a 204 answer carries a body"
  }
  if (!response.isJson) return `the body is not JSON (Content-Type application/json); every answer of ${spec.name} is JSON`
  if (response.status === spec.successStatus) {
    return Either.match(decodeStrict(Schema.make(spec.successAst), response.json), {
      onLeft: (problem) => `the ${response.status} body does not match the contract's success schema: ${problem}`,
      onRight: () => undefined
    })
  }
  const errorBody = decodeErrorBody(response.json)
  const transport = transportStatuses.has(response.status) && spec.payload !== undefined
  if (!spec.errors.has(response.status) && !transport) {
    const body = Either.isLeft(errorBody) ? `, and the body is ${errorBody.left}` : ""
    return `status ${response.status} is not one the contract declares for ${spec.method} ${spec.path} (${declaredStatuses(spec).join(", ")})${body}`
  }
  if (Either.isLeft(errorBody)) return `the ${response.status} body is ${errorBody.left}`
  const errorAst = spec.errors.get(response.status)
  if (errorAst === undefined) return undefined
  return Either.match(decodeStrict(Schema.make(errorAst), response.json), {
    onLeft: () =>
      `errorCode ${JSON.stringify(errorBody.right.errorCode ?? null)} is not one the contract declares with status ${response.status} for ${spec.method} ${spec.path}`,
    onRight: () => undefined
  })
}
