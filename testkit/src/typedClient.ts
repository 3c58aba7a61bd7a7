import { FetchHttpClient, HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { IntegrationsApi } from "@cop-integrations/contracts"
import { Effect } from "effect"

/** The client derived from the contract (`HttpApiClient.make(IntegrationsApi)`), as partners would use it. */
export const makeTypedClient = (
  options: { readonly baseUrl: string; readonly apiKey: string; readonly fetch: typeof fetch }
) =>
  HttpApiClient.make(IntegrationsApi, {
    baseUrl: options.baseUrl,
    transformClient: HttpClient.mapRequest(HttpClientRequest.bearerToken(options.apiKey))
  }).pipe(Effect.provide(FetchHttpClient.layer), Effect.provideService(FetchHttpClient.Fetch, options.fetch))

export type TypedClient = Effect.Effect.Success<ReturnType<typeof makeTypedClient>>
