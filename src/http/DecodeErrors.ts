import { HttpApiBuilder, HttpApiError, type HttpApp } from "@effect/platform"
import { BadRequest, IntegrationsApi } from "@cop-integrations/contracts"
import { Effect } from "effect"

const describeIssue = (issue: HttpApiError.HttpApiDecodeError["issues"][number]): string => {
  if (issue.path.length === 0) return "request body must be a JSON object"
  const field = issue.path.map(String).join(".")
  // An excess property (the contract's bodies reject unknown fields); the platform's text lists every known one.
  return issue._tag === "Unexpected" ? `${field}: is not a known field` : `${field}: ${issue.message}`
}

/** Turns the platform's schema-decode failures into a 400 ErrorBody naming each field and its rule. */
const describeDecodeError = (error: HttpApiError.HttpApiDecodeError): string => {
  const described = [...new Set(error.issues.map(describeIssue))]
  const shown = described.slice(0, 5).join("; ")
  return `invalid request: ${shown}${described.length > 5 ? ` (and ${described.length - 5} more)` : ""}`
}

// The platform types the wrapped app's error channel as `never`, though decode failures travel there; whatever else
// travels there is the contract's own errors, passed on as they are.
export const DecodeErrorsLive = HttpApiBuilder.middleware(IntegrationsApi, (app) =>
  Effect.mapError(
    app as HttpApp.Default<unknown>,
    (error): BadRequest =>
      error instanceof HttpApiError.HttpApiDecodeError
        ? new BadRequest({ error: describeDecodeError(error) })
        : error as BadRequest
  ))
