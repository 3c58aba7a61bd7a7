import { IntegrationsApi } from "@cop-integrations/contracts"
import { Effect } from "effect"
import { FetchHttpClient, HttpClient, HttpClientRequest } from "effect/http"
import { HttpApiClient } from "effect/http-api"

/** The client derived from the contract (`HttpApiClient.make(IntegrationsApi)`), as partners would use it. */
export const makeTypedClient = (
  options: { readonly baseUrl: string; readonly apiKey: string; readonly fetch: typeof fetch }
) =>
  HttpApiClient.make(IntegrationsApi, {
    baseUrl: options.baseUrl,
    transformClient: HttpClient.mapRequest(HttpClientRequest.bearerToken(options.apiKey))
  }).pipe(Effect.provide(FetchHttpClient.layer), Effect.provideService(FetchHttpClient.Fetch, options.fetch))

export type TypedClient = Effect.Success<ReturnType<typeof makeTypedClient>>
