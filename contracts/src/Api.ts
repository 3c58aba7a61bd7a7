import { HttpApi, OpenApi } from "@effect/platform"
import { BrebGroup } from "./Breb.ts"
import { EventsGroup, TestHelpersGroup } from "./Events.ts"
import { BadRequestError } from "./Errors.ts"
import { HealthGroup } from "./Health.ts"
import { SwapsGroup } from "./Swaps.ts"
import { finishOpenApiDocument } from "./OpenApiDocument.ts"
import { WebhooksGroup } from "./Webhooks.ts"

export const INTERFACE_VERSION = "0.1.0"

export class IntegrationsApi extends HttpApi.make("IntegrationsApi")
  .add(BrebGroup)
  .add(SwapsGroup)
  .add(EventsGroup)
  .add(TestHelpersGroup)
  .add(WebhooksGroup)
  .add(HealthGroup)
  .addError(BadRequestError)
  .annotate(OpenApi.Title, "Integrations API")
  .annotate(OpenApi.Version, INTERFACE_VERSION)
  .annotate(OpenApi.Transform, finishOpenApiDocument)
  .annotate(
    OpenApi.Description,
    "Non-custodial USD→COP payouts over Bre-B and swaps of the COP stablecoin. The service prepares transactions; end users sign them in their own wallets. Every non-2xx body is ErrorBody `{ error, errorCode? }`."
  )
{}

export const openApiDocument = (): OpenApi.OpenAPISpec => OpenApi.fromApi(IntegrationsApi)
