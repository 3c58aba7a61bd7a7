import type { ErrorBody } from "@cop-integrations/contracts"
import { type HttpServerRequest, HttpServerResponse } from "effect/http"

/** An ErrorBody answer written by the middleware itself (not by the API's own error encoding). */
export const errorResponse = (status: number, body: ErrorBody, headers: Record<string, string> = {}) =>
  HttpServerResponse.jsonUnsafe(body, { status, headers })

/** The request's path, without the query. */
export const pathOf = (request: HttpServerRequest.HttpServerRequest) =>
  new URL(request.url, "http://localhost").pathname
