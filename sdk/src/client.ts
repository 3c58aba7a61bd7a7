/** The client: one object per group of the API, each method one operation of the contract. */
import type { OperationId } from "./generated/operations.ts"
import { type Page, PagedList } from "./pages.ts"
import { type CallOptions, type ClientOptions, type Request, Transport } from "./transport.ts"
import type { Answer, Query, RequestBody, Schemas } from "./types.ts"
import { type VerifyOptions, verifyWebhook, type WebhookEvent, type WebhookHeaders } from "./webhooks.ts"

type ListOperation = {
  [O in OperationId]: Answer<O> extends Page<unknown> ? O : never
}[OperationId]
type ItemOf<O extends ListOperation> = Answer<O> extends Page<infer Item> ? Item : never

/** Calls one operation and answers its 2xx JSON. */
const call = <O extends OperationId>(t: Transport, operationId: O, request: Request, options?: CallOptions) =>
  t.json<Answer<O>>(operationId, request, options)

/** A list operation read as a `PagedList`: `for await` over its items, following `nextCursor`. */
const paged = <O extends ListOperation>(
  t: Transport,
  operationId: O,
  query: Query<O> & { readonly cursor?: string },
  options?: CallOptions
) =>
  new PagedList<ItemOf<O>, Answer<O> & Page<ItemOf<O>>>(
    (cursor) => call(t, operationId, { query: { ...query, cursor } }, options) as Promise<Answer<O> & Page<ItemOf<O>>>,
    query.cursor
  )

class Quotes {
  constructor(private readonly t: Transport) {}
  /** `GET breb/quote`: the rate with every fee included, and what `destinationCop` costs. */
  get(query: Query<"breb.quote"> = {}, options?: CallOptions) {
    return call(this.t, "breb.quote", { query }, options)
  }
}

class Kyc {
  constructor(private readonly t: Transport) {}
  sendOtp(body: RequestBody<"breb.sendOtp">, options?: CallOptions) {
    return call(this.t, "breb.sendOtp", { body }, options)
  }
  verifyOtp(body: RequestBody<"breb.verifyOtp">, options?: CallOptions) {
    return call(this.t, "breb.verifyOtp", { body }, options)
  }
  getCustomer(userAddress: string, options?: CallOptions) {
    return call(this.t, "breb.getKycCustomer", { path: { userAddress } }, options)
  }
}

class Destinations {
  constructor(private readonly t: Transport) {}
  /** Verifies a Bre-B destination before any money moves; its `previewId` is then reused by the payout. */
  preview(body: RequestBody<"breb.previewDestination">, options?: CallOptions) {
    return call(this.t, "breb.previewDestination", { body }, options)
  }
}

class Payouts {
  constructor(private readonly t: Transport) {}
  /** Prepares a payout; one `Idempotency-Key` per call (`options.idempotencyKey`, else a new one) on every retry. */
  create(body: RequestBody<"breb.createPayout">, options?: CallOptions) {
    return call(this.t, "breb.createPayout", { body }, options)
  }
  get(payoutId: string, options?: CallOptions) {
    return call(this.t, "breb.getPayout", { path: { payoutId } }, options)
  }
  list(query: Query<"breb.listPayouts"> = {}, options?: CallOptions) {
    return paged(this.t, "breb.listPayouts", query, options)
  }
  confirm(payoutId: string, body: RequestBody<"breb.confirmPayout">, options?: CallOptions) {
    return call(this.t, "breb.confirmPayout", { path: { payoutId }, body }, options)
  }
  cancel(payoutId: string, options?: CallOptions) {
    return call(this.t, "breb.cancelPayout", { path: { payoutId } }, options)
  }
}

class PayoutBatches {
  constructor(private readonly t: Transport) {}
  create(body: RequestBody<"payoutBatches.createPayoutBatch">, options?: CallOptions) {
    return call(this.t, "payoutBatches.createPayoutBatch", { body }, options)
  }
  get(batchId: string, options?: CallOptions) {
    return call(this.t, "payoutBatches.getPayoutBatch", { path: { batchId } }, options)
  }
  list(query: Query<"payoutBatches.listPayoutBatches"> = {}, options?: CallOptions) {
    return paged(this.t, "payoutBatches.listPayoutBatches", query, options)
  }
  confirm(batchId: string, body: RequestBody<"payoutBatches.confirmPayoutBatch">, options?: CallOptions) {
    return call(this.t, "payoutBatches.confirmPayoutBatch", { path: { batchId }, body }, options)
  }
}

class Swaps {
  constructor(private readonly t: Transport) {}
  prepare(body: RequestBody<"swaps.prepareSwap">, options?: CallOptions) {
    return call(this.t, "swaps.prepareSwap", { body }, options)
  }
  get(intentId: string, options?: CallOptions) {
    return call(this.t, "swaps.getSwap", { path: { intentId } }, options)
  }
  list(query: Query<"swaps.listSwaps"> = {}, options?: CallOptions) {
    return paged(this.t, "swaps.listSwaps", query, options)
  }
  confirm(intentId: string, body: RequestBody<"swaps.confirmSwap">, options?: CallOptions) {
    return call(this.t, "swaps.confirmSwap", { path: { intentId }, body }, options)
  }
}

class WebhookEndpoints {
  constructor(private readonly t: Transport) {}
  /** Registers a receiver; the answer's `secret` (`whsec_…`) is shown only here and on rotation. */
  create(body: RequestBody<"events.createWebhookEndpoint">, options?: CallOptions) {
    return call(this.t, "events.createWebhookEndpoint", { body }, options)
  }
  list(options?: CallOptions) {
    return call(this.t, "events.listWebhookEndpoints", {}, options)
  }
  get(endpointId: string, options?: CallOptions) {
    return call(this.t, "events.getWebhookEndpoint", { path: { endpointId } }, options)
  }
  update(endpointId: string, body: RequestBody<"events.updateWebhookEndpoint">, options?: CallOptions) {
    return call(this.t, "events.updateWebhookEndpoint", { path: { endpointId }, body }, options)
  }
  delete(endpointId: string, options?: CallOptions): Promise<void> {
    return this.t.json("events.deleteWebhookEndpoint", { path: { endpointId } }, options)
  }
  rotateSecret(endpointId: string, options?: CallOptions) {
    return call(this.t, "events.rotateWebhookSecret", { path: { endpointId } }, options)
  }
  ping(endpointId: string, options?: CallOptions) {
    return call(this.t, "events.pingWebhookEndpoint", { path: { endpointId } }, options)
  }
  /** Sends the events of a time range to the endpoint again (a job: `getReplay` shows its progress). */
  replay(endpointId: string, body: RequestBody<"events.replayWebhookEvents">, options?: CallOptions) {
    return call(this.t, "events.replayWebhookEvents", { path: { endpointId }, body }, options)
  }
  getReplay(endpointId: string, replayId: string, options?: CallOptions) {
    return call(this.t, "events.getWebhookReplay", { path: { endpointId, replayId } }, options)
  }
}

class Events {
  constructor(private readonly t: Transport) {}
  /** The integration's events in the order they were recorded (follow it with the last page's cursor). */
  list(query: Query<"events.listEvents"> = {}, options?: CallOptions) {
    return paged(this.t, "events.listEvents", query, options)
  }
  get(eventId: string, options?: CallOptions) {
    return call(this.t, "events.getEvent", { path: { eventId } }, options)
  }
  redeliver(eventId: string, options?: CallOptions) {
    return call(this.t, "events.redeliverEvent", { path: { eventId } }, options)
  }
}

class Webhooks {
  constructor(private readonly t: Transport) {}
  /** See `verifyWebhook`: the event, once its `v1` (`whsec_…`) or `v1a` (`whpk_…`) signature is checked. */
  verify(
    rawBody: string | Uint8Array,
    headers: WebhookHeaders,
    key: string | ReadonlyArray<string>,
    options?: VerifyOptions
  ): Promise<WebhookEvent> {
    return verifyWebhook(rawBody, headers, key, options)
  }
  /** The deployment's `v1a` public key (`whpk_…`), to verify endpoints signed with ed25519. */
  signingKey(options?: CallOptions) {
    return call(this.t, "webhookSigningKey.getWebhookSigningKey", {}, options)
  }
}

class Reports {
  constructor(private readonly t: Transport) {}
  /** Every payout created in `[from, to)`, a row at a time as the service streams them (JSON Lines). */
  payoutRows(query: { readonly from: string; readonly to: string }, options?: CallOptions) {
    return this.rows<Schemas["PayoutReportRow"]>("reports.payoutReport", query, options)
  }
  /** The same report as CSV text. */
  payoutsCsv(query: { readonly from: string; readonly to: string }, options?: CallOptions) {
    return this.csv("reports.payoutReport", query, options)
  }
  swapRows(query: { readonly from: string; readonly to: string }, options?: CallOptions) {
    return this.rows<Schemas["SwapReportRow"]>("reports.swapReport", query, options)
  }
  swapsCsv(query: { readonly from: string; readonly to: string }, options?: CallOptions) {
    return this.csv("reports.swapReport", query, options)
  }
  /** One day's sums per status and token. */
  statement(query: Query<"reports.statement">, options?: CallOptions) {
    return call(this.t, "reports.statement", { query }, options)
  }

  private async *rows<Row>(operationId: OperationId, query: object, options?: CallOptions) {
    const request = { query: { ...query, format: "jsonl" }, accept: "application/jsonl" }
    const response = await this.t.send(operationId, request, options)
    for await (const line of lines(response)) yield JSON.parse(line) as Row
  }

  private async csv(operationId: OperationId, query: object, options?: CallOptions): Promise<string> {
    const response = await this.t.send(operationId, { query: { ...query, format: "csv" }, accept: "text/csv" }, options)
    return response.text()
  }
}

class Logs {
  constructor(private readonly t: Transport) {}
  /** Every authenticated request of the integration, newest first (secrets left out, Bre-B keys masked). */
  requests(query: Query<"requestLogs.listRequestLogs"> = {}, options?: CallOptions) {
    return paged(this.t, "requestLogs.listRequestLogs", query, options)
  }
  request(requestId: string, options?: CallOptions) {
    return call(this.t, "requestLogs.getRequestLog", { path: { requestId } }, options)
  }
  /** Security-relevant changes (keys, endpoints, dashboard sign-ins), newest first. */
  audit(query: Query<"auditLog.listAuditLog"> = {}, options?: CallOptions) {
    return paged(this.t, "auditLog.listAuditLog", query, options)
  }
}

class Account {
  constructor(private readonly t: Transport) {}
  /** The integration's keys: their last 4 characters, scopes, allowlists and last use; never a key. */
  apiKeys(options?: CallOptions) {
    return call(this.t, "apiKeys.listApiKeys", {}, options)
  }
  /** A one-use sign-in link to the dashboard, valid for 5 minutes. */
  dashboardSignInLink(options?: CallOptions) {
    return call(this.t, "dashboard.createDashboardSignInLink", {}, options)
  }
  health(options?: CallOptions) {
    return call(this.t, "healthz", {}, options)
  }
  readiness(options?: CallOptions) {
    return call(this.t, "readyz", {}, options)
  }
}

/** The sandbox (mock mode only; a live deployment answers 404): moves your own resources through the same state
 *  machine and events as production. */
class TestHelpers {
  constructor(private readonly t: Transport) {}
  advancePayout(payoutId: string, body: RequestBody<"testHelpers.advancePayout">, options?: CallOptions) {
    return call(this.t, "testHelpers.advancePayout", { path: { payoutId }, body }, options)
  }
  expirePayout(payoutId: string, options?: CallOptions) {
    return call(this.t, "testHelpers.expirePayout", { path: { payoutId } }, options)
  }
  delayPayout(payoutId: string, options?: CallOptions) {
    return call(this.t, "testHelpers.delayPayout", { path: { payoutId } }, options)
  }
  expireSwap(intentId: string, options?: CallOptions) {
    return call(this.t, "testHelpers.expireSwap", { path: { intentId } }, options)
  }
  rejectKyc(userAddress: string, options?: CallOptions) {
    return call(this.t, "testHelpers.rejectKyc", { path: { userAddress } }, options)
  }
  /** Makes an event of `type` happen in this integration, as `stripe trigger` does. */
  triggerEvent(body: RequestBody<"testHelpers.triggerEvent">, options?: CallOptions) {
    return call(this.t, "testHelpers.triggerEvent", { body }, options)
  }
}

export class IntegrationsClient {
  readonly quotes: Quotes
  readonly kyc: Kyc
  readonly destinations: Destinations
  readonly payouts: Payouts
  readonly payoutBatches: PayoutBatches
  readonly swaps: Swaps
  readonly webhookEndpoints: WebhookEndpoints
  readonly events: Events
  readonly webhooks: Webhooks
  readonly reports: Reports
  readonly logs: Logs
  readonly account: Account
  readonly testHelpers: TestHelpers

  constructor(options: ClientOptions) {
    const transport = new Transport(options)
    this.quotes = new Quotes(transport)
    this.kyc = new Kyc(transport)
    this.destinations = new Destinations(transport)
    this.payouts = new Payouts(transport)
    this.payoutBatches = new PayoutBatches(transport)
    this.swaps = new Swaps(transport)
    this.webhookEndpoints = new WebhookEndpoints(transport)
    this.events = new Events(transport)
    this.webhooks = new Webhooks(transport)
    this.reports = new Reports(transport)
    this.logs = new Logs(transport)
    this.account = new Account(transport)
    this.testHelpers = new TestHelpers(transport)
  }
}

/** The lines of a streamed body, read as they arrive. */
async function* lines(response: Response): AsyncGenerator<string, void, undefined> {
  if (response.body === null) return
  const reader = response.body.getReader()
  const decoder = new TextDecoder()
  let buffered = ""
  for (;;) {
    const { done, value } = await reader.read()
    buffered += done ? decoder.decode() : decoder.decode(value, { stream: true })
    const complete = buffered.split("\n")
    buffered = done ? "" : complete.pop() ?? ""
    for (const line of complete) if (line.trim() !== "") yield line
    if (done) return
  }
}
