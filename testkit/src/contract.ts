/**
 * The contract as the kit reads it: every endpoint of `IntegrationsApi` (method, path, the status and
 * schema of its success, the statuses and schemas of its declared errors), reflected from the HttpApi
 * definition itself, and the check every response of a run goes through.
 */
import { Authentication, ErrorBody, EventType, IntegrationsApi } from "@cop-integrations/contracts"
import { Context, Predicate, Result, Schema, SchemaIssue, SchemaParser } from "effect"
import { HttpApi, type HttpApiEndpoint, type HttpApiGroup, HttpApiSchema } from "effect/http-api"
import type { AST, ParseOptions } from "effect/SchemaAST"

/** Every endpoint of the contract, as the type of `IntegrationsApi` declares them (its groups' endpoints). */
type ContractEndpoints = typeof IntegrationsApi extends HttpApi.HttpApi<string, infer Groups>
  ? HttpApiGroup.Endpoints<Groups>
  : never

/** The contract's endpoint names (`cancelPayout`, …): an endpoint the contract adds is one more, with no edit here. */
export type EndpointName = HttpApiEndpoint.Identifier<ContractEndpoints>
/** What the success body of endpoint `E` decodes to, as the contract declares it (void for no content). */
export type SuccessOf<E extends EndpointName> = HttpApiEndpoint.SuccessWithIdentifier<ContractEndpoints, E>

/** A schema read from the contract at run time: it decodes wire values and needs no service. */
export type WireSchema = Schema.Decoder<unknown>

export interface EndpointSpec {
  readonly name: EndpointName
  readonly method: string
  /** With `:param` placeholders, as the contract writes it. */
  readonly path: string
  readonly authenticated: boolean
  readonly successStatus: number
  /** Its success body is a stream the endpoint writes itself (a report: CSV or JSON Lines), not JSON of a schema. */
  readonly streamed: boolean
  /** The endpoint's wire codec of its success body, and its AST. */
  readonly success: WireSchema
  readonly successAst: AST
  /** Declared error statuses; the AST is the union of the error bodies allowed at that status. */
  readonly errors: ReadonlyMap<number, AST | undefined>
  readonly payload: WireSchema | undefined
  readonly urlParams: WireSchema | undefined
  readonly headers: WireSchema | undefined
  readonly pathParams: WireSchema | undefined
  /** How the deployment decodes each input: the contract sets it on the API (request bodies refuse unknown fields). */
  readonly parseOptions: InputParseOptions
}

export interface InputParseOptions {
  readonly payload: ParseOptions | undefined
  readonly urlParams: ParseOptions | undefined
  readonly headers: ParseOptions | undefined
  readonly pathParams: ParseOptions | undefined
}

/** Each input's parse options among an endpoint's annotations (its own, its group's, the API's), as the server reads them. */
const inputParseOptions = (annotations: Context.Context<never>): InputParseOptions => {
  const fallback = Context.getOrUndefined(annotations, HttpApi.ParseOptions)
  return {
    payload: Context.getOrUndefined(annotations, HttpApi.PayloadParseOptions) ?? fallback,
    urlParams: Context.getOrUndefined(annotations, HttpApi.QueryParseOptions) ?? fallback,
    headers: Context.getOrUndefined(annotations, HttpApi.HeadersParseOptions) ?? fallback,
    pathParams: Context.getOrUndefined(annotations, HttpApi.ParamsParseOptions) ?? fallback
  }
}

/** The schema of an AST the contract declares (the endpoint's wire codec): it has no service to ask for. */
const wireSchema = (ast: AST): WireSchema => Schema.make<WireSchema>(ast)

const optionalSchema = (schema: { readonly ast: AST } | undefined): WireSchema | undefined =>
  schema === undefined ? undefined : wireSchema(schema.ast)

/** One AST for the schemas declared at one status: the schema itself, or the union of them. */
const astOf = (schemas: readonly [Schema.Top, ...Array<Schema.Top>]): AST =>
  schemas.length === 1 ? schemas[0].ast : Schema.Union(schemas).ast

/** The JSON body an endpoint reads (none for GET and DELETE, whose inputs are the query and the path). */
const jsonPayload = (endpoint: HttpApiEndpoint.Top): AST | undefined => {
  const entry = endpoint.payload.get("application/json")
  return entry === undefined ? undefined : astOf(entry.schemas)
}

/** Effect marks a streamed body's schema with this id (its own `isStreamSchema` is internal). */
const isStreamSchema = (schema: unknown): boolean =>
  Predicate.hasProperty(schema, "~effect/http-api/HttpApiSchema/Stream")

const reflectEndpoints = (): ReadonlyMap<EndpointName, EndpointSpec> => {
  const specs = new Map<EndpointName, EndpointSpec>()
  HttpApi.reflect(IntegrationsApi, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, errors, mergedAnnotations, middleware, successes }) => {
      // A streamed success is not among `successes` (reflection leaves streams out); it is answered 200.
      const streamed = [...endpoint.success].some(isStreamSchema)
      const [successStatus, success] = streamed
        ? [200, [Schema.String] as const]
        : [...successes.entries()][0] ?? [204, [Schema.Void]]
      const payload = jsonPayload(endpoint)
      const successAst = astOf(success)
      // Reflection walks the endpoints of IntegrationsApi, so its identifiers are the contract's endpoint names.
      const name = endpoint.identifier as EndpointName
      specs.set(name, {
        name,
        method: endpoint.method,
        path: endpoint.path,
        authenticated: (middleware as ReadonlySet<unknown>).has(Authentication),
        successStatus,
        streamed,
        // No content: the answer has no body at all (void), not the JSON null the codec writes for void.
        success: HttpApiSchema.isNoContent(successAst) ? Schema.Void : wireSchema(successAst),
        successAst,
        errors: new Map([...errors.entries()].map(([status, schemas]) => [status, astOf(schemas)])),
        payload: payload === undefined ? undefined : wireSchema(payload),
        urlParams: optionalSchema(endpoint.query),
        headers: optionalSchema(endpoint.headers),
        pathParams: optionalSchema(endpoint.params),
        parseOptions: inputParseOptions(mergedAnnotations)
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

/** Statuses every endpoint with a body may answer before the contract's own decoding runs (R-ERR-3). */
const transportStatuses = new Set([413, 415])

/** Every issue, each naming the value it refused (the problem says what came back; the key leaves the values out). */
const exact = { onExcessProperty: "error", errors: "all", reportInput: true } as const
const lenient = { onExcessProperty: "ignore", errors: "all", reportInput: true } as const

/** One thing wrong with a value: where, how (the kind of check, named as reports have always named it) and why. */
interface FlatIssue {
  readonly path: ReadonlyArray<PropertyKey>
  /** "Type", "Refinement", "Transformation", "Missing", "Unexpected" or "Forbidden". */
  readonly kind: string
  readonly message: string
}

const standardIssues = SchemaIssue.makeFormatterStandardSchemaV1()

/**
 * The kind of every leaf of an issue, in the order the standard formatter lists the leaves (the same walk): a value
 * of the wrong type, a failed check (Refinement), a failed transformation, a missing or unexpected key.
 */
const leafKinds = (issue: SchemaIssue.Issue, around: "Refinement" | "Transformation" | undefined): Array<string> => {
  switch (issue._tag) {
    case "Filter":
      return leafKinds(issue.issue, around ?? "Refinement")
    case "Encoding":
      return leafKinds(issue.issue, around ?? "Transformation")
    case "Pointer":
      return leafKinds(issue.issue, around)
    case "Composite":
    case "AnyOf":
      if (issue._tag === "Composite" || issue.issues.length > 0) {
        return issue.issues.flatMap((inner) => leafKinds(inner, around))
      }
      return [around ?? "Type"]
    case "MissingKey":
      return ["Missing"]
    case "UnexpectedKey":
      return ["Unexpected"]
    case "Forbidden":
      return ["Forbidden"]
    case "InvalidType":
    case "InvalidValue":
    case "OneOf":
      return [around ?? "Type"]
  }
}

const issuesOf = (issue: SchemaIssue.Issue): ReadonlyArray<FlatIssue> => {
  const kinds = leafKinds(issue, undefined)
  return standardIssues(issue).issues.map((flat, index) => ({
    path: (flat.path ?? []).map((part) => (typeof part === "object" ? part.key : part)),
    kind: kinds[index] ?? "Type",
    message: flat.message
  }))
}

/** "path: message; path: message" for a schema issue. */
export const describeParseError = (issue: SchemaIssue.Issue): string =>
  issuesOf(issue)
    .slice(0, 6)
    .map((flat) => (flat.path.length === 0 ? flat.message : `${flat.path.map(String).join(".")}: ${flat.message}`))
    .join("; ")

/** Where and how a value breaks a schema, without the values: "receipt.totalPaid Type; feeLegs.0.code Type". */
const parseErrorKey = (issue: SchemaIssue.Issue): string =>
  [
    ...new Set(
      issuesOf(issue).map((flat) =>
        `${flat.path.map((part) => (typeof part === "number" ? "*" : String(part))).join(".")} ${flat.kind}`
      )
    )
  ]
    .sort()
    .join("; ")

/** Exactly the schema: a field it does not know is an error. For ErrorBody, and for resources under --strict. */
export const decodeStrict = <A>(schema: Schema.Decoder<A>, value: unknown): Result.Result<A, string> =>
  Result.mapError(SchemaParser.decodeUnknownResult(schema, exact)(value), describeParseError)

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
 * A resource as the contract reads it (README#versioning): an added field is an addition, so it is
 * returned in `unknownFields` rather than refused, unless `strict`. Anything else that breaks the schema is a problem.
 */
export const decodeResource = <A>(
  schema: Schema.Decoder<A>,
  value: unknown,
  strict: boolean
): Result.Result<Decoded<A>, DecodeProblem> => {
  const exactly = SchemaParser.decodeUnknownResult(schema, exact)(value)
  if (Result.isSuccess(exactly)) return Result.succeed({ value: exactly.success, unknownFields: [] })
  const issues = issuesOf(exactly.failure)
  const unknownFields = issues.filter((issue) => issue.kind === "Unexpected").map((issue) =>
    issue.path.map(String).join(".")
  )
  const ignoring = strict ? undefined : SchemaParser.decodeUnknownResult(schema, lenient)(value)
  if (ignoring !== undefined && Result.isSuccess(ignoring)) {
    return Result.succeed({ value: ignoring.success, unknownFields })
  }
  const onlyUnknown = unknownFields.length > 0 && issues.every((issue) => issue.kind === "Unexpected")
  return Result.fail({
    problem: onlyUnknown
      ? `fields the contract does not know (--strict): ${unknownFields.join(", ")}`
      : describeParseError(exactly.failure),
    key: parseErrorKey(exactly.failure)
  })
}

export const decodeErrorBody = (value: unknown): Result.Result<ErrorBody, string> =>
  Result.mapError(
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
  /** Types of listed events the contract does not know: a warning (not a problem) unless strict. */
  readonly unknownEventTypes: ReadonlyArray<string>
  /** A kept success body as it was decoded, without those events (withoutUnknownEvents); otherwise undefined. */
  readonly json: unknown
}

const broken = (problem: string, key: string): ResponseCheck => ({
  problem,
  key,
  unknownFields: [],
  unknownEventTypes: [],
  json: undefined
})
const kept: ResponseCheck = {
  problem: undefined,
  key: undefined,
  unknownFields: [],
  unknownEventTypes: [],
  json: undefined
}

const knownEventTypes: ReadonlySet<string> = new Set(EventType.literals)

/**
 * An event type of this contract. A later version of its line may add types (README#versioning: the one open set,
 * since a `"*"` subscription takes the types to come), so an unknown one is skipped with a warning, not a failure.
 */
export const isKnownEventType = (type: unknown): boolean => typeof type === "string" && knownEventTypes.has(type)

/**
 * A success body without the listed events whose `type` (a string) the contract does not know, and those types. Only
 * `GET events` lists events the kit did not ask for; any other body is returned as it is.
 */
export const withoutUnknownEvents = (
  spec: Pick<EndpointSpec, "name">,
  json: unknown
): { readonly json: unknown; readonly unknownEventTypes: ReadonlyArray<string> } => {
  const page = spec.name === "listEvents" && typeof json === "object" && json !== null && !Array.isArray(json)
    ? json as Readonly<Record<string, unknown>>
    : undefined
  const items = page?.["items"]
  if (page === undefined || !Array.isArray(items)) return { json, unknownEventTypes: [] }
  const typeOf = (
    item: unknown
  ): unknown => (typeof item === "object" && item !== null && "type" in item ? item.type : undefined)
  const unknown = items.filter((item) => typeof typeOf(item) === "string" && !isKnownEventType(typeOf(item)))
  if (unknown.length === 0) return { json, unknownEventTypes: [] }
  return {
    json: { ...page, items: items.filter((item) => !unknown.includes(item)) },
    unknownEventTypes: [...new Set(unknown.map((item) => String(typeOf(item))))]
  }
}

/**
 * How a response keeps the contract of `spec`: a declared status, JSON, the success schema (fields it does not know
 * are reported, and refused only when `strict`) or an ErrorBody, exact, whose errorCode the contract allows there.
 */
export const checkResponse = (spec: EndpointSpec, response: ContractResponse, strict = false): ResponseCheck => {
  // A report's body is the scenario's to read (its format is the request's choice).
  if (spec.streamed && response.status === spec.successStatus) return kept
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
    const { json, unknownEventTypes } = withoutUnknownEvents(spec, response.json)
    if (strict && unknownEventTypes.length > 0) {
      return broken(
        `the ${response.status} body lists event types the contract does not know (--strict): ${
          unknownEventTypes.join(", ")
        }`,
        `${response.status} unknown event types`
      )
    }
    return Result.match(decodeResource(spec.success, json, strict), {
      onFailure: ({ key, problem }) =>
        broken(
          `the ${response.status} body does not match the contract's success schema: ${problem}`,
          `${response.status} success schema: ${key}`
        ),
      onSuccess: ({ unknownFields }) => ({ ...kept, unknownFields, unknownEventTypes, json })
    })
  }
  const errorBody = decodeErrorBody(response.json)
  const transport = transportStatuses.has(response.status) && spec.payload !== undefined
  if (!spec.errors.has(response.status) && !transport) {
    const body = Result.isFailure(errorBody) ? `, and the body is ${errorBody.failure}` : ""
    return broken(
      `status ${response.status} is not one the contract declares for ${spec.method} ${spec.path} (${
        declaredStatuses(spec).join(", ")
      })${body}`,
      `status ${response.status} not declared`
    )
  }
  if (Result.isFailure(errorBody)) {
    return broken(`the ${response.status} body is ${errorBody.failure}`, `${response.status} not an ErrorBody`)
  }
  const errorAst = spec.errors.get(response.status)
  if (errorAst === undefined) return kept
  return Result.match(decodeStrict(wireSchema(errorAst), response.json), {
    onFailure: () =>
      broken(
        `errorCode ${
          JSON.stringify(errorBody.success.errorCode ?? null)
        } is not one the contract declares with status ${response.status} for ${spec.method} ${spec.path}`,
        `${response.status} errorCode ${errorBody.success.errorCode ?? "(none)"} not declared`
      ),
    onSuccess: () => kept
  })
}

/** Why a response breaks the contract of `spec`, or undefined when it keeps it (see checkResponse). */
export const contractProblem = (spec: EndpointSpec, response: ContractResponse, strict = false): string | undefined =>
  checkResponse(spec, response, strict).problem
