/** A request that does not decode against the contract is a 400 ErrorBody naming each field and its rule (IssueText). */
import type { HttpServerResponse } from "effect/http"
import type { HttpApiError } from "effect/http-api"
import { describeIssue } from "../base/IssueText.ts"
import { errorResponse } from "./ErrorResponse.ts"

/** The 400's text: each distinct field and rule, the first five of them. */
export const describeDecodeError = (error: HttpApiError.HttpApiSchemaError): string =>
  `invalid request: ${describeIssue(error.cause.issue, { whole: "request body must be a JSON object" })}`
/**
 * Showing the offending value of a decode failure is recursive: a deeply nested JSON body overflows the stack there.
 * The input is at fault, not the service.
 */
export const isNestedTooDeeply = (error: unknown) => error instanceof RangeError && error.message.includes("call stack")

/** The body was not JSON at all (the platform parses it before decoding). */
const isUnparsableBody = (error: HttpApiError.HttpApiSchemaError) =>
  error.kind === "Payload" && error.cause.issue._tag === "InvalidValue" &&
  error.cause.issue.annotations?.["message"] === "Expected a valid JSON body"

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
