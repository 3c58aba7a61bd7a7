import { Effect } from "effect"
import type { HttpClient, HttpClientResponse } from "effect/http"
import { HttpApiClient } from "effect/http-api"
import { IntegrationsApi } from "./Api.ts"

/**
 * The typed client of the API: `HttpApiClient.make(IntegrationsApi)`, whose calls may leave out `headers` and `query`
 * when every field in them is optional (`Idempotency-Key`, `X-Mock-Scenario`, a quote without an amount).
 *
 * Effect's client asks for `headers` whenever an endpoint declares any, optional or not, and no schema can change
 * that; so each call here fills in `headers: {}` and `query: {}` when left out, which is what sending none means (an
 * endpoint without a query ignores the `query`). What goes on the wire is the same. It needs an `HttpClient` only: the
 * API has no client-side middleware (tsc would say so here if one came).
 */
export const makeIntegrationsClient = (
  options?: Parameters<typeof HttpApiClient.make>[1]
): Effect.Effect<IntegrationsClient, never, HttpClient.HttpClient> =>
  HttpApiClient.make(IntegrationsApi, options).pipe(Effect.map(withOptionalParts))

/** The client `makeIntegrationsClient` gives. */
export type IntegrationsClient = Lenient<HttpApiClient.ForApi<typeof IntegrationsApi>>

type ClientMethod = (request: object) => unknown

const withDefaults = (method: ClientMethod) => (request?: object) => method({ headers: {}, query: {}, ...request })

/** Every method of the client (groups are objects of methods; the health probes are methods at the top). */
const lenient = (node: object): object =>
  Object.fromEntries(
    Object.entries(node as Record<string, ClientMethod | object>).map((
      [name, value]
    ) => [name, typeof value === "function" ? withDefaults(value as ClientMethod) : lenient(value)])
  )

// The types below say what `lenient` does; TypeScript cannot follow it through Object.entries.
const withOptionalParts = (client: HttpApiClient.ForApi<typeof IntegrationsApi>) =>
  lenient(client) as IntegrationsClient

/** The empty object: it is assignable to an object type exactly when every field of that type is optional. */
type NoFields = Record<never, never>

/** `headers` or `query` may be left out when all of its fields are optional. */
type OptionalWhenEmpty<Request, Part extends "headers" | "query"> = Request extends
  { readonly [K in Part]: infer Fields }
  ? NoFields extends Fields ? Omit<Request, Part> & { readonly [K in Part]?: Fields } : Request
  : Request

type Relaxed<Request> = OptionalWhenEmpty<OptionalWhenEmpty<Request, "headers">, "query">

/** The decoded value only (what a call without `responseMode` returns). */
type Decoded<A> = Exclude<
  A,
  HttpClientResponse.HttpClientResponse | readonly [unknown, HttpClientResponse.HttpClientResponse]
>

type DecodedRequest<Request> = Omit<Relaxed<Request>, "responseMode"> & { readonly responseMode?: "decoded-only" }

/** No argument at all when nothing in the request is required (`client.breb.quote()`). */
type Arguments<Request> = NoFields extends Request ? [request?: Request] : [request: Request]

/**
 * A method of Effect's client, plus a signature for the same call without the all-optional parts (it returns the
 * decoded value; pass them, even empty, to choose another `responseMode`).
 */
type LenientMethod<Method> = Method extends (request: infer Request) => Effect.Effect<infer A, infer E, infer R>
  ? Request extends { readonly headers: unknown } | { readonly query: unknown } ?
      & Method
      & ((...request: Arguments<DecodedRequest<Request>>) => Effect.Effect<Decoded<A>, E, R>)
  : Method
  : Method

type Lenient<Client> = {
  readonly [K in keyof Client]: Client[K] extends (...args: never) => unknown ? LenientMethod<Client[K]>
    : Lenient<Client[K]>
}
