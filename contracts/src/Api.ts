import { HttpApi, OpenApi } from "effect/http-api"
import { ApiKeysGroup } from "./ApiKeys.ts"
import { AuditLogGroup } from "./AuditLog.ts"
import { BrebGroup } from "./Breb.ts"
import { DashboardGroup } from "./Dashboard.ts"
import { EventsGroup } from "./Events.ts"
import { TestHelpersGroup } from "./TestHelpers.ts"
import { HealthGroup } from "./Health.ts"
import { finishOpenApiDocument } from "./OpenApiDocument.ts"
import { RejectUnknownFields } from "./Primitives.ts"
import { PayoutBatchesGroup } from "./PayoutBatch.ts"
import { ReportsGroup } from "./Reports.ts"
import { RequestLogsGroup } from "./RequestLogs.ts"
import { SwapsGroup } from "./Swaps.ts"
import { WebhooksGroup } from "./Webhooks.ts"
import { WebhookSigningKeyGroup } from "./WebhookSigningKey.ts"

export const INTERFACE_VERSION = "0.1.0"

export class IntegrationsApi extends HttpApi.make("IntegrationsApi")
  .add(
    BrebGroup,
    PayoutBatchesGroup,
    SwapsGroup,
    EventsGroup,
    ApiKeysGroup,
    DashboardGroup,
    RequestLogsGroup,
    AuditLogGroup,
    TestHelpersGroup,
    WebhooksGroup,
    WebhookSigningKeyGroup,
    ReportsGroup,
    HealthGroup
  )
  // Issues name the rejected value (the 400 texts quote it); request bodies refuse unknown fields.
  .annotate(HttpApi.ParseOptions, { reportInput: true })
  .annotate(HttpApi.PayloadParseOptions, { ...RejectUnknownFields, reportInput: true })
  .annotate(OpenApi.Title, "Integrations API")
  .annotate(OpenApi.Version, INTERFACE_VERSION)
  .annotate(OpenApi.Transform, finishOpenApiDocument)
  .annotate(
    OpenApi.Description,
    "Non-custodial USD→COP payouts over Bre-B and swaps of the COP stablecoin. The service prepares transactions; end users sign them in their own wallets. Every non-2xx body is ErrorBody `{ error, errorCode? }`."
  )
{}

export const openApiDocument = (): OpenApi.OpenAPISpec => OpenApi.fromApi(IntegrationsApi)
