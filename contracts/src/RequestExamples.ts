/**
 * The request examples of the OpenAPI document: one body per request schema and one Idempotency-Key per operation
 * that takes one. Apart from the response examples (Examples.ts), which the schemas themselves import.
 */
import type {
  AdvancePayoutRequest,
  CreateWebhookEndpointRequest,
  TriggerEventRequest,
  ReplayRequest,
  UpdateWebhookEndpointRequest
} from "./Event.ts"
import { EXAMPLE_TX_HASHES, EXAMPLE_USER } from "./Examples.ts"
import type { OtpSendRequest, OtpVerifyRequest } from "./Kyc.ts"
import type { ConfirmPayoutRequest, CreatePayoutRequest } from "./Payout.ts"
import type { ConfirmPayoutBatchRequest, CreatePayoutBatchRequest } from "./PayoutBatch.ts"
import type { PreviewDestinationRequest } from "./Destination.ts"
import type { ConfirmSwapRequest, PrepareSwapRequest } from "./Swap.ts"

/**
 * One example per request body, by component name: in mock mode, sent in this order (OTP send, verify, payout,
 * batch, confirm, advance, swap prepare, confirm, webhook endpoint and its update), each is answered 2xx, so the docs page's "Test Request"
 * works as pre-filled, for every integration and every time (the confirms' hashes: EXAMPLE_TX_HASHES). The OTP code is mock mode's (MOCK_OTP_DEBUG_CODE, default 123456); no `quoteId` (a quote's
 * lock expires). The document's finishing step (OpenApiDocument.ts) puts each on its schema; a test decodes each
 * with the contract's schema.
 */
export const REQUEST_BODY_EXAMPLES = {
  OtpSendRequest: { email: "maria@example.com", userAddress: EXAMPLE_USER },
  OtpVerifyRequest: { userAddress: EXAMPLE_USER, code: "123456" },
  CreatePayoutRequest: {
    userAddress: EXAMPLE_USER,
    destinationCop: "250000",
    breBKey: "@maria2024",
    accountOwnerName: "Maria Gomez",
    fromToken: "USDC"
  },
  CreatePayoutBatchRequest: {
    userAddress: EXAMPLE_USER,
    items: [
      { destinationCop: "250000", breBKey: "@maria2024", accountOwnerName: "Maria Gomez", reference: "inv-0001" },
      { destinationCop: "120000", breBKey: "@camila2024", accountOwnerName: "Camila Rojas", reference: "inv-0002" }
    ]
  },
  PreviewDestinationRequest: { breBKey: "@maria2024", accountOwnerName: "Maria Gomez" },
  ConfirmPayoutRequest: { txHash: EXAMPLE_TX_HASHES.payout },
  ConfirmPayoutBatchRequest: { txHash: EXAMPLE_TX_HASHES.batch },
  AdvancePayoutRequest: { to: "completed" },
  PrepareSwapRequest: {
    userAddress: EXAMPLE_USER,
    fromToken: "USDC",
    toToken: "COPm",
    amountIn: "10",
    slippageBps: 50
  },
  ConfirmSwapRequest: { txHash: EXAMPLE_TX_HASHES.swap },
  CreateWebhookEndpointRequest: { url: "http://127.0.0.1:4000/hooks", events: ["*"] },
  UpdateWebhookEndpointRequest: { status: "disabled" },
  ReplayRequest: { from: "2026-11-28T00:00:00.000Z", to: "2026-11-28T06:00:00.000Z" },
  TriggerEventRequest: { type: "payout.refunded" }
} as const satisfies {
  readonly OtpSendRequest: typeof OtpSendRequest.Encoded
  readonly OtpVerifyRequest: typeof OtpVerifyRequest.Encoded
  readonly CreatePayoutRequest: typeof CreatePayoutRequest.Encoded
  readonly CreatePayoutBatchRequest: typeof CreatePayoutBatchRequest.Encoded
  readonly PreviewDestinationRequest: typeof PreviewDestinationRequest.Encoded
  readonly ConfirmPayoutRequest: typeof ConfirmPayoutRequest.Encoded
  readonly ConfirmPayoutBatchRequest: typeof ConfirmPayoutBatchRequest.Encoded
  readonly AdvancePayoutRequest: typeof AdvancePayoutRequest.Encoded
  readonly PrepareSwapRequest: typeof PrepareSwapRequest.Encoded
  readonly ConfirmSwapRequest: typeof ConfirmSwapRequest.Encoded
  readonly CreateWebhookEndpointRequest: typeof CreateWebhookEndpointRequest.Encoded
  readonly UpdateWebhookEndpointRequest: typeof UpdateWebhookEndpointRequest.Encoded
  readonly ReplayRequest: typeof ReplayRequest.Encoded
  readonly TriggerEventRequest: typeof TriggerEventRequest.Encoded
}

/**
 * `Idempotency-Key` examples, by operationId: one per operation, since a key reused on another operation is 422
 * (keys are per integration); reused on the same operation with the same body, it replays the first answer.
 */
export const IDEMPOTENCY_KEY_EXAMPLES: Record<string, string> = {
  "breb.createPayout": "payout-2026-11-0001",
  "payoutBatches.createPayoutBatch": "batch-2026-11-0001",
  "swaps.prepareSwap": "swap-2026-11-0001"
}
