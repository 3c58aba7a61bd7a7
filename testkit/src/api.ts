/**
 * Calls to the contract's endpoints. Every answer is checked against the contract before a scenario
 * sees it (declared status, JSON, the success schema or an exact ErrorBody whose errorCode the contract allows
 * at that status); a response that breaks it fails the scenario right there. A success body with a field the
 * contract does not know, or a listed event of a type it does not know, is an addition under the versioning policy
 * (README#versioning): a warning on the scenario, a failure with --strict.
 */
import type { ErrorBody } from "@cop-integrations/contracts"
import { Effect, Result, type Schema } from "effect"
import {
  checkResponse,
  decodeErrorBody,
  declaredStatuses,
  decodeResource,
  endpoint,
  type EndpointName,
  type EndpointSpec,
  pathOf,
  type SuccessOf
} from "./contract.ts"
import { failure, type ScenarioFailure, show } from "./failure.ts"
import type { Answered, Auth, Http } from "./http.ts"
import { additionNote } from "./versioning.ts"

export interface CallInput {
  readonly path?: Readonly<Record<string, string>>
  readonly query?: Readonly<Record<string, string>>
  readonly headers?: Readonly<Record<string, string>>
  readonly json?: unknown
  readonly body?: string | Uint8Array
  readonly auth?: Auth
  readonly retryOn429?: boolean
}

export type Reply<A> =
  | { readonly _tag: "Success"; readonly status: number; readonly value: A; readonly exchange: Answered }
  | { readonly _tag: "Rejected"; readonly status: number; readonly error: ErrorBody; readonly exchange: Answered }

export type Call = <E extends EndpointName>(
  name: E,
  input?: CallInput
) => Effect.Effect<Reply<SuccessOf<E>>, ScenarioFailure>

/** How answers are held to the contract: --strict, and where warnings (unknown fields) go. */
export interface CallPolicy {
  readonly strict: boolean
  readonly warn: (message: string, exchange: Answered) => void
  /** Each answer the contract declares: for the run's coverage index. */
  readonly observe?: ((spec: EndpointSpec, status: number, errorCode: string | undefined) => void) | undefined
}

/** The warning for a resource with fields the contract does not know (README#versioning: an addition). */
export const unknownFieldsWarning = (what: string, fields: ReadonlyArray<string>): string =>
  `${what} answered fields the contract does not know: ${fields.join(", ")} (${additionNote})`

/** The warning for events of types the contract does not know (README#versioning: an addition), skipped by the kit. */
export const unknownEventTypesWarning = (what: string, types: ReadonlyArray<string>): string =>
  `${what} carried event types the contract does not know, skipped: ${types.join(", ")} (${additionNote})`

export const makeCall = (http: Http, policy: CallPolicy): Call => (name, input = {}) =>
  Effect.gen(function*() {
    const spec = endpoint(name)
    const exchange = yield* http.send({
      method: spec.method,
      path: pathOf(spec, input.path),
      query: input.query,
      headers: input.headers,
      json: input.json,
      body: input.body,
      auth: input.auth ?? (spec.authenticated ? "primary" : "none"),
      retryOn429: input.retryOn429
    })
    const { response } = exchange
    const checked = checkResponse(spec, response, policy.strict)
    if (checked.problem !== undefined) {
      return yield* Effect.fail(failure(`${spec.method} ${spec.path} answered outside the contract`, {
        expected: `a status the contract declares (${
          declaredStatuses(spec).join(", ")
        }) with its JSON body, as the schema says${policy.strict ? " (--strict: no field it does not know)" : ""}`,
        actual: `${response.status}: ${checked.problem}; body ${response.body}`,
        exchange,
        rootCause: `${spec.method} ${spec.path} answered outside the contract: ${checked.key ?? checked.problem}`
      }))
    }
    if (checked.unknownFields.length > 0) {
      policy.warn(unknownFieldsWarning(`${spec.method} ${spec.path}`, checked.unknownFields), exchange)
    }
    if (checked.unknownEventTypes.length > 0) {
      policy.warn(unknownEventTypesWarning(`${spec.method} ${spec.path}`, checked.unknownEventTypes), exchange)
    }
    if (response.status === spec.successStatus) {
      policy.observe?.(spec, response.status, undefined)
      // The endpoint's wire codec of its success schema, reflected from the same endpoint whose declared type SuccessOf
      // reads: TypeScript cannot follow a generic name from the type of IntegrationsApi to its reflection at run time.
      const schema = spec.success as Schema.Decoder<SuccessOf<typeof name>>
      const value = Result.getOrThrowWith(
        decodeResource(schema, checked.json, policy.strict),
        ({ problem }) => new Error(problem)
      ).value
      return { _tag: "Success", status: response.status, value, exchange } as const
    }
    const error = Result.getOrThrowWith(decodeErrorBody(response.json), (problem) => new Error(problem))
    policy.observe?.(spec, response.status, error.errorCode)
    return { _tag: "Rejected", status: response.status, error, exchange } as const
  })

/** A reply as a failure shows it: its status and the start of its body. */
export const describeReply = <A>(reply: Reply<A>): string =>
  `${reply.status} ${reply.exchange.response.body}`.slice(0, 800)

/** The success value, or a failure saying what came back instead. */
export const ok = <A>(reply: Reply<A>, what = "a success"): Effect.Effect<A, ScenarioFailure> =>
  reply._tag === "Success"
    ? Effect.succeed(reply.value)
    : Effect.fail(failure(`expected ${what}, the request was rejected`, {
      expected: `${reply.exchange.request.method} to succeed`,
      actual: describeReply(reply),
      exchange: reply.exchange
    }))

/** `"none"`: the body must carry no errorCode; undefined: any documented one. */
export type ExpectedCode = ErrorBody["errorCode"] | "none"

/** The ErrorBody of a rejection with exactly this status and errorCode. */
export const rejected = <A>(
  reply: Reply<A>,
  status: number,
  errorCode: ExpectedCode,
  rule: string
): Effect.Effect<ErrorBody, ScenarioFailure> => {
  const expected = `${status} ErrorBody${
    errorCode === "none" ? " without errorCode" : errorCode === undefined ? "" : ` with errorCode ${errorCode}`
  }`
  if (reply._tag === "Success" || reply.status !== status) {
    return Effect.fail(failure(rule, { expected, actual: describeReply(reply), exchange: reply.exchange }))
  }
  const code = reply.error.errorCode
  const codeMatches = errorCode === undefined || (errorCode === "none" ? code === undefined : code === errorCode)
  return codeMatches
    ? Effect.succeed(reply.error)
    : Effect.fail(
      failure(rule, { expected, actual: `errorCode ${show(code)}: ${describeReply(reply)}`, exchange: reply.exchange })
    )
}
