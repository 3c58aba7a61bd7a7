import { HttpApi, HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import type { Json, JsonObject } from "./OpenApiJson.ts"
import { PayoutBatchItemRequest } from "./PayoutBatch.ts"
import { PayoutReportRow, SwapReportRow } from "./Reports.ts"

/**
 * Schemas the document shows that no endpoint declares as such: a report's JSON line (the endpoint streams bytes) and
 * a batch's item (the endpoint takes any object there and checks each item itself, so one bad item is that item's
 * error). Compiled as the paths' are (`finish` is the document's own finishing of schemas).
 */
const aside = HttpApiGroup.make("aside").add(
  HttpApiEndpoint.get("payoutRow", "/payout-row", { success: PayoutReportRow }),
  HttpApiEndpoint.get("swapRow", "/swap-row", { success: SwapReportRow }),
  HttpApiEndpoint.get("batchItem", "/batch-item", { success: PayoutBatchItemRequest })
)

export const asideSchemas = (finish: (node: Json) => Json): JsonObject => {
  const compiled = finish(OpenApi.fromApi(HttpApi.make("aside").add(aside))) as JsonObject
  return (compiled["components"] as JsonObject)["schemas"] as JsonObject
}

/** The batch request's `items` as the document shows them: each a PayoutBatchItemRequest. */
export const withBatchItems = (schemas: JsonObject): JsonObject => {
  const request = schemas["CreatePayoutBatchRequest"] as JsonObject | undefined
  if (request === undefined) return schemas
  const properties = request["properties"] as JsonObject
  const items = properties["items"] as JsonObject
  return {
    ...schemas,
    CreatePayoutBatchRequest: {
      ...request,
      properties: { ...properties, items: { ...items, items: { $ref: "#/components/schemas/PayoutBatchItemRequest" } } }
    }
  }
}
