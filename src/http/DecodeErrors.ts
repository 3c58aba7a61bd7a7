/**
 * A request that does not decode against the contract is a 400 ErrorBody naming each field and its rule. The texts are
 * the ones the service has always answered: a schema's own message where it has one, else "is missing", "is not a known
 * field", "Expected <type>, actual <value>" or, for a union of literals, one "must be one of …, actual <value>".
 */
import { SchemaAST, SchemaIssue } from "effect"
import type { HttpServerResponse } from "effect/http"
import type { HttpApiError } from "effect/http-api"
import { errorResponse } from "./ErrorResponse.ts"

interface Described {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

/** A value as the messages show it: strings quoted, objects as JSON. */
const formatActual = (value: unknown): string => {
  if (typeof value === "string" || (typeof value === "object" && value !== null)) return JSON.stringify(value)
  return typeof value === "bigint" ? `${value}n` : String(value)
}

const standardFormatter = SchemaIssue.makeFormatterStandardSchemaV1()

/**
 * "Expected <type>": the JSON type a value must have (a named schema such as Address is still "string"), else
 * Effect's own description of the schema.
 */
const expectedOf = (ast: SchemaAST.AST): string => {
  switch (ast._tag) {
    case "String":
    case "Number":
    case "Boolean":
    case "BigInt":
    case "Null":
    case "Undefined":
      return `Expected ${ast._tag.toLowerCase()}`
    case "Literal":
      return `Expected ${formatActual(ast.literal)}`
    default:
      return standardFormatter(new SchemaIssue.InvalidType(ast)).issues[0]?.message ?? "Expected a valid value"
  }
}

const withActual = (expected: string, issue: SchemaIssue.Issue) =>
  SchemaIssue.hasInput(issue) ? `${expected}, actual ${formatActual(issue.input)}` : expected

const messageAnnotation = (annotations: { readonly [key: string]: unknown } | undefined, key = "message") => {
  const message = annotations?.[key]
  return typeof message === "string" ? message : undefined
}

/** Effect's own text for an issue no rule above describes (its "got" spelled "actual", as everywhere else here). */
const fallback = (issue: SchemaIssue.Issue): string =>
  (standardFormatter(issue).issues[0]?.message ?? "is invalid").replace(/, got /, ", actual ")

const describeIssues = (
  issue: SchemaIssue.Issue,
  path: ReadonlyArray<PropertyKey>,
  override: string | undefined
): ReadonlyArray<Described> => {
  const leaf = (message: string): ReadonlyArray<Described> => [{ path, message }]
  switch (issue._tag) {
    case "Filter":
      return describeIssues(
        issue.issue,
        path,
        override ?? messageAnnotation(issue.filter.annotations) ??
          (issue.issue._tag === "InvalidValue" ? messageAnnotation(issue.issue.annotations) : undefined)
      )
    case "Encoding":
      return describeIssues(issue.issue, path, override)
    case "Pointer":
      return describeIssues(issue.issue, [...path, ...issue.path], override)
    case "Composite":
      return issue.issues.flatMap((inner) => describeIssues(inner, path, override))
    case "AnyOf": {
      if (issue.issues.length > 0) return issue.issues.flatMap((inner) => describeIssues(inner, path, override))
      if (override !== undefined) return leaf(override)
      const own = messageAnnotation(issue.ast.annotations)
      if (own !== undefined) return leaf(own)
      // The values it could have been, in one rule (not one "Expected" line per value).
      if (issue.ast.types.every(SchemaAST.isLiteral)) {
        const allowed = issue.ast.types.map((member) => formatActual(member.literal)).join(", ")
        return leaf(withActual(`must be one of ${allowed}`, issue))
      }
      return leaf(withActual(expectedOf(issue.ast), issue))
    }
    case "MissingKey":
      return leaf(override ?? messageAnnotation(issue.annotations, "messageMissingKey") ?? "is missing")
    case "UnexpectedKey":
      // The contract's bodies reject unknown fields; the rule is the same for each.
      return leaf("is not a known field")
    case "InvalidType":
      return leaf(override ?? messageAnnotation(issue.ast.annotations) ?? withActual(expectedOf(issue.ast), issue))
    default:
      return leaf(override ?? fallback(issue))
  }
}

const describeField = ({ message, path }: Described): string =>
  path.length === 0 ? "request body must be a JSON object" : `${path.map(String).join(".")}: ${message}`

/** The 400's text: each distinct field and rule, the first five of them. */
export const describeDecodeError = (error: HttpApiError.HttpApiSchemaError): string => {
  const described = [...new Set(describeIssues(error.cause.issue, [], undefined).map(describeField))]
  const shown = described.slice(0, 5).join("; ")
  return `invalid request: ${shown}${described.length > 5 ? ` (and ${described.length - 5} more)` : ""}`
}

/**
 * Showing the offending value of a decode failure is recursive: a deeply nested JSON body overflows the stack there.
 * The input is at fault, not the service.
 */
export const isNestedTooDeeply = (error: unknown) => error instanceof RangeError && error.message.includes("call stack")

/** The body was not JSON at all (the platform parses it before decoding). */
const isUnparsableBody = (error: HttpApiError.HttpApiSchemaError) =>
  error.kind === "Payload" && error.cause.issue._tag === "InvalidValue" &&
  messageAnnotation(error.cause.issue.annotations) === "Expected a valid JSON body"

/**
 * The 400 ErrorBody for a request that does not decode (the platform fails it as a defect after the endpoint's
 * middleware, so authentication still comes first). A response that does not encode (Body, ResponseHeaders) is the
 * service's fault: none here, it stays a defect (a 500).
 */
export const answerDecodeError = (
  error: HttpApiError.HttpApiSchemaError
): HttpServerResponse.HttpServerResponse | undefined => {
  if (error.kind === "Body" || error.kind === "ResponseHeaders") return undefined
  if (isUnparsableBody(error)) return errorResponse(400, { error: "request body is not valid JSON" })
  try {
    return errorResponse(400, { error: describeDecodeError(error) })
  } catch (cause) {
    if (isNestedTooDeeply(cause)) return errorResponse(400, { error: "request body is nested too deeply" })
    throw cause
  }
}
