import { Schema } from "effect"

/*
 * Resource ids: plain strings on the wire (the document shows them as `string`), distinct types in code, so a payout's
 * id cannot be passed where a swap's or an integration's is meant. A brand adds no check and nothing to the document.
 */

/** `po_…` */
export const PayoutId = Schema.String.pipe(Schema.brand("PayoutId"))
export type PayoutId = typeof PayoutId.Type

/** `sw_…`, the swap intent's id */
export const SwapId = Schema.String.pipe(Schema.brand("SwapId"))
export type SwapId = typeof SwapId.Type

/** `int_…`, the partner behind an API key */
export const IntegrationId = Schema.String.pipe(Schema.brand("IntegrationId"))
export type IntegrationId = typeof IntegrationId.Type

/** `evt_…`, an outbound event (also its `webhook-id`) */
export const EventId = Schema.String.pipe(Schema.brand("EventId"))
export type EventId = typeof EventId.Type

/** `we_…`, a partner's webhook endpoint */
export const EndpointId = Schema.String.pipe(Schema.brand("EndpointId"))
export type EndpointId = typeof EndpointId.Type

/** `qt_…` */
export const QuoteId = Schema.String.pipe(Schema.brand("QuoteId"))
export type QuoteId = typeof QuoteId.Type

export const PreviewId = Schema.String.pipe(Schema.brand("PreviewId"))
export type PreviewId = typeof PreviewId.Type

/** `key_…`, an API key's id */
export const KeyId = Schema.String.pipe(Schema.brand("KeyId"))
export type KeyId = typeof KeyId.Type

/** A user's wallet address: `Address` checks it where a request names it; what was stored is not checked again. */
export const UserAddress = Schema.String.pipe(Schema.brand("UserAddress"))
export type UserAddress = typeof UserAddress.Type
