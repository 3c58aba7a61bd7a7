/**
 * What a value that does not decode against a schema breaks, as text: each field and its rule. The texts are the ones
 * the service has always answered: a schema's own message where it has one, else "is missing", "is not a known
 * field", "Expected <type>, actual <value>" or, for a union of literals, one "must be one of …, actual <value>".
 */
import { SchemaAST, SchemaIssue } from "effect"

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

/**
 * Each distinct field and rule of `issue` (the first five), its fields named from `at` (`items.3.breBKey`); `whole`
 * names a value that is not an object at all.
 */
export const describeIssue = (
  issue: SchemaIssue.Issue,
  options: { readonly at?: ReadonlyArray<PropertyKey>; readonly whole: string }
): string => {
  const describeField = ({ message, path }: Described): string =>
    path.length === 0 ? options.whole : `${path.map(String).join(".")}: ${message}`
  const described = [...new Set(describeIssues(issue, options.at ?? [], undefined).map(describeField))]
  return `${described.slice(0, 5).join("; ")}${described.length > 5 ? ` (and ${described.length - 5} more)` : ""}`
}
