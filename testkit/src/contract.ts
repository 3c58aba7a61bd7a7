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
        successAst: Option.getOrElse(
          success?.ast ?? Option.none(),
          () => (successStatus === 204 ? Schema.Void.ast : Schema.Unknown.ast)
        ),
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

const exact = { onExcessProperty: "error", errors: "all" } as const
const lenient = { onExcessProperty: "ignore", errors: "all" } as const

const issuesOf = (error: ParseResult.ParseError) => ParseResult.ArrayFormatter.formatErrorSync(error)

/** "path: message; path: message" for a parse error. */
export const describeParseError = (error: ParseResult.ParseError): string =>
  issuesOf(error)
    .slice(0, 6)
    .map((issue) => (issue.path.length === 0 ? issue.message : `${issue.path.join(".")}: ${issue.message}`))
    .join("; ")

/** Where and how a value breaks a schema, without the values: "receipt.totalPaid Type; feeLegs.0.code Type". */
const parseErrorKey = (error: ParseResult.ParseError): string =>
  [
    ...new Set(
      issuesOf(error).map((issue) =>
        `${issue.path.map((part) => (typeof part === "number" ? "*" : String(part))).join(".")} ${issue._tag}`
      )
    )
  ]
    .sort()
    .join("; ")

/** Exactly the schema: a field it does not know is an error. For ErrorBody, and for resources under --strict. */
export const decodeStrict = <A, I>(schema: Schema.Schema<A, I>, value: unknown): Either.Either<A, string> =>
  Either.mapLeft(Schema.decodeUnknownEither(schema, exact)(value), describeParseError)

export interface Decoded<A> {
  readonly value: A
  /** Paths of the fields the schema does not know ("riskScore", "receipt.note"); empty when there are none. */
  readonly unknownFields: ReadonlyArray<string>
}

export interface DecodeProblem {
  readonly problem: string
  /** The problem without the values (see parseErrorKey). */
  readonly key: string
}

/**
 * A resource as the contract reads it (DESIGN §4 Compatibility): an added field is a compatible change, so it is
 * returned in `unknownFields` rather than refused, unless `strict`. Anything else that breaks the schema is a problem.
 */
export const decodeResource = <A, I>(
  schema: Schema.Schema<A, I>,
  value: unknown,
  strict: boolean
): Either.Either<Decoded<A>, DecodeProblem> => {
  const exactly = Schema.decodeUnknownEither(schema, exact)(value)
  if (Either.isRight(exactly)) return Either.right({ value: exactly.right, unknownFields: [] })
  const unknownFields = issuesOf(exactly.left).filter((issue) => issue._tag === "Unexpected").map((issue) =>
    issue.path.join(".")
  )
  const ignoring = strict ? undefined : Schema.decodeUnknownEither(schema, lenient)(value)
  if (ignoring !== undefined && Either.isRight(ignoring)) return Either.right({ value: ignoring.right, unknownFields })
  const onlyUnknown = unknownFields.length > 0 && issuesOf(exactly.left).every((issue) => issue._tag === "Unexpected")
  return Either.left({
    problem: onlyUnknown
      ? `fields the contract does not know (--strict): ${unknownFields.join(", ")}`
      : describeParseError(exactly.left),
    key: parseErrorKey(exactly.left)
  })
}

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

export interface ResponseCheck {
  /** Why the response breaks the contract, or undefined when it keeps it. */
  readonly problem: string | undefined
  /** The problem without its values, for grouping failures by root cause ("201 success schema: receipt.totalPaid Type"). */
  readonly key: string | undefined
  /** Fields of a success body the contract does not know: a warning (not a problem) unless strict. */
  readonly unknownFields: ReadonlyArray<string>
}

const broken = (problem: string, key: string): ResponseCheck => ({ problem, key, unknownFields: [] })
const kept: ResponseCheck = { problem: undefined, key: undefined, unknownFields: [] }

/**
 * How a response keeps the contract of `spec`: a declared status, JSON, the success schema (fields it does not know
 * are reported, and refused only when `strict`) or an ErrorBody, exact, whose errorCode the contract allows there.
 */
export const checkResponse = (spec: EndpointSpec, response: ContractResponse, strict = false): ResponseCheck => {
  if (response.status === 204 && spec.successStatus === 204) {
    return response.json === undefined ? kept : broken("a 204 answer carries a body", "204 with a body")
  }
  if (!response.isJson) {
    return broken(
      `the body is not JSON (Content-Type application/json); every answer of ${spec.name} is JSON`,
      `${response.status} not JSON`
    )
  }
  if (response.status === spec.successStatus) {
    return Either.match(decodeResource(Schema.make(spec.successAst), response.json, strict), {
      onLeft: ({ key, problem }) =>
        broken(
          `the ${response.status} body does not match the contract's success schema: ${problem}`,
          `${response.status} success schema: ${key}`
        ),
      onRight: ({ unknownFields }) => ({ ...kept, unknownFields })
    })
  }
  const errorBody = decodeErrorBody(response.json)
  const transport = transportStatuses.has(response.status) && spec.payload !== undefined
  if (!spec.errors.has(response.status) && !transport) {
    const body = Either.isLeft(errorBody) ? `, and the body is ${errorBody.left}` : ""
    return broken(
      `status ${response.status} is not one the contract declares for ${spec.method} ${spec.path} (${
        declaredStatuses(spec).join(", ")
      })${body}`,
      `status ${response.status} not declared`
    )
  }
  if (Either.isLeft(errorBody)) {
    return broken(`the ${response.status} body is ${errorBody.left}`, `${response.status} not an ErrorBody`)
  }
  const errorAst = spec.errors.get(response.status)
  if (errorAst === undefined) return kept
  return Either.match(decodeStrict(Schema.make(errorAst), response.json), {
    onLeft: () =>
      broken(
        `errorCode ${
          JSON.stringify(errorBody.right.errorCode ?? null)
        } is not one the contract declares with status ${response.status} for ${spec.method} ${spec.path}`,
        `${response.status} errorCode ${errorBody.right.errorCode ?? "(none)"} not declared`
      ),
    onRight: () => kept
  })
}

/** Why a response breaks the contract of `spec`, or undefined when it keeps it (see checkResponse). */
export const contractProblem = (spec: EndpointSpec, response: ContractResponse, strict = false): string | undefined =>
  checkResponse(spec, response, strict).problem
