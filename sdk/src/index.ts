/**
 * @cop-integrations/sdk: a TypeScript client of the Integrations API (USD→COP Bre-B payouts, COPm swaps) with no
 * runtime dependency. Runs wherever `fetch` and Web Crypto are: Node 18+, Deno, Bun, browsers.
 */
export { IntegrationsClient } from "./client.ts"
export type { CallOptions, ClientOptions, RetryNotice } from "./transport.ts"
export {
  type ErrorBody,
  IntegrationsApiError,
  IntegrationsConnectionError,
  WebhookVerificationError
} from "./errors.ts"
export { type Page, PagedList } from "./pages.ts"
export { verifyWebhook, type VerifyOptions, type WebhookEvent, type WebhookHeaders } from "./webhooks.ts"
export type { Answer, Query, RequestBody, Schemas } from "./types.ts"
export type { components, operations, paths, webhooks } from "./generated/openapi.ts"
export { type OperationId, operationTable } from "./generated/operations.ts"
