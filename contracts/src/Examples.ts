/**
 * Realistic examples for the OpenAPI document, taken from a mock-mode run (quote and payout of 250,000 COP at a
 * 3,960 COP sell rate). A test validates each against its schema in the document.
 */
import { PayoutId, PreviewId, QuoteId } from "./Ids.ts"

const FEES_EXAMPLE = [
  {
    "code": "bridge_fx",
    "amountUsd": "0.631313",
    "to": null,
    "status": "quoted"
  },
  {
    "code": "bridge",
    "amountUsd": "0.317243",
    "to": null,
    "status": "quoted"
  },
  {
    "code": "copby",
    "amountUsd": "0.634486",
    "to": "0x1111111111111111111111111111111111111111",
    "status": "quoted"
  }
] as const

export const QUOTE_EXAMPLE = {
  "quoteId": QuoteId.make("qt_PhCyxlVD8r7tDDBFVCGnxG"),
  "fromToken": "USDC",
  "display": "1 USD = 3901.18 COP",
  "effectiveUsdCop": "3901.188086",
  "sellRateUsdCop": "3960",
  "cached": false,
  "expiresAt": "2026-11-25T04:23:10.885Z",
  "destinationCop": "250000.00",
  "sourceAmount": "64.083042",
  "fees": FEES_EXAMPLE
} as const

export const PAYOUT_EXAMPLE = {
  "payoutId": PayoutId.make("po_qlDo3eDSEZmjrPTiMA35PV"),
  "status": "awaiting_deposit",
  "fromToken": "USDC",
  "sourceAmount": "64.083042",
  "destinationCop": "250000.00",
  "userAddress": "0x52908400098527886E0F7030069857D2E4169EE7",
  "fees": FEES_EXAMPLE,
  "quote": {
    "display": "1 USD = 3901.18 COP",
    "effectiveUsdCop": "3901.188086"
  },
  "receipt": {
    "title": "Bre-B payout receipt",
    "status": "awaiting_deposit",
    "completedAt": null,
    "transactionType": "withdrawal",
    "payoutId": PayoutId.make("po_qlDo3eDSEZmjrPTiMA35PV"),
    "breBKey": "******2024",
    "breBKeyLast4": "2024",
    "beneficiaryName": "Maria Gomez",
    "totalPaid": {
      "amount": "64.083042",
      "currency": "USD"
    },
    "exchangeRate": {
      "display": "1 USD = 3901.18 COP",
      "effectiveUsdCop": "3901.188086",
      "sellRateUsdCop": "3960"
    },
    "commission": {
      "mode": "included_in_rate",
      "displayAmount": "1.58",
      "displayCurrency": "USD",
      "note": "All fees are included in the exchange rate; nothing is charged on top."
    },
    "totalReceived": {
      "amount": "250000.00",
      "currency": "COP"
    },
    "feesItemized": FEES_EXAMPLE
  },
  "deposit": {
    "chain": "celo",
    "currency": "usdc",
    "address": "0x2EC2803cEEcB668C4d3dEeEa2889BFEabF89C066",
    "amount": "63.448556"
  },
  "transaction": {
    "approvalTarget": null,
    "to": "0xcebA9300f2b948710d2653dD7B07f33A8B32118C",
    "data":
      "0xa9059cbb0000000000000000000000002ec2803ceecb668c4d3deeea2889bfeabf89c0660000000000000000000000000000000000000000000000000000000003c825ec",
    "value": "0"
  },
  "feeTransaction": {
    "approvalTarget": null,
    "to": "0xcebA9300f2b948710d2653dD7B07f33A8B32118C",
    "data":
      "0xa9059cbb0000000000000000000000001111111111111111111111111111111111111111000000000000000000000000000000000000000000000000000000000009ae76",
    "value": "0"
  },
  "calls": {
    "version": "2.0.0",
    "chainId": "0xa4ec",
    "from": "0x52908400098527886E0F7030069857D2E4169EE7",
    "atomicRequired": true,
    "calls": [
      {
        "to": "0xcebA9300f2b948710d2653dD7B07f33A8B32118C",
        "data":
          "0xa9059cbb0000000000000000000000002ec2803ceecb668c4d3deeea2889bfeabf89c0660000000000000000000000000000000000000000000000000000000003c825ec",
        "value": "0x0"
      },
      {
        "to": "0xcebA9300f2b948710d2653dD7B07f33A8B32118C",
        "data":
          "0xa9059cbb0000000000000000000000001111111111111111111111111111111111111111000000000000000000000000000000000000000000000000000000000009ae76",
        "value": "0x0"
      }
    ]
  },
  "destinationPreview": {
    "accountOwnerName": "Maria Gomez",
    "bankName": "Banco de Pruebas",
    "documentLast4": null
  },
  "txHash": null,
  "feeTxHash": null,
  "createdAt": "2026-11-25T04:21:10.903Z",
  "updatedAt": "2026-11-25T04:21:10.903Z",
  "expiresAt": "2026-11-25T04:51:10.903Z",
  "failure": null,
  "refund": null,
  "timeline": [{ "status": "created", "at": "2026-11-25T04:21:10.903Z", "source": "api" }]
} as const

/** The wallet every request example names: the customer whose KYC the OTP examples approve, then paid out to. */
export const EXAMPLE_USER = "0x52908400098527886E0F7030069857D2E4169EE7"

export const DESTINATION_PREVIEW_EXAMPLE = {
  "previewId": PreviewId.make("pv_4mZq8TnR2vXc7LpW1hK9sA"),
  "match": true,
  "destinationPreview": {
    "accountOwnerName": "Maria Gomez",
    "bankName": "Banco de Pruebas",
    "documentLast4": null
  },
  "expiresAt": "2026-11-22T03:34:32.123Z"
} as const

/** The example user's KYC once verified (mock mode approves on the right code). */
export const KYC_CUSTOMER_EXAMPLE = {
  "userAddress": EXAMPLE_USER,
  "kycStatus": "approved",
  "kycUrl": null,
  "email": "m***@example.com",
  "createdAt": "2026-11-22T03:19:32.123Z",
  "updatedAt": "2026-11-22T03:20:05.481Z"
} as const

/**
 * The request examples' transaction hashes. Mock mode has no chain: there each stands for a transaction the mock chain
 * mines for the payout or swap being confirmed, recorded under a hash of its own (derived from the example and that
 * payout or swap), so the examples confirm anything, for every integration, and a hash still confirms one thing.
 */
export const EXAMPLE_TX_HASHES = {
  payout: "0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060",
  swap: "0x9e4f2a3d1c7b8e6f5a4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a29",
  batch: "0x817beb9fcc4200c69ae51487eae613e299c06d09823adcba7b804d42e100c660"
} as const
