/**
 * What a viewer pre-fills is sendable: every request body of the document has an example, which the contract's own
 * schema decodes (EIP-55 checksums and the rules JSON Schema cannot say included), and every `Idempotency-Key`
 * parameter has a non-empty example of its own (a key reused on another operation is 422). That each one is
 * answered 2xx in mock mode, as the docs page sends it, is test/browser/docs-page.test.ts.
 * No server: the contract alone.
 */
import {
  AdvancePayoutRequest,
  ConfirmPayoutBatchRequest,
  ConfirmPayoutRequest,
  ConfirmSwapRequest,
  CreatePayoutBatchRequest,
  CreatePayoutRequest,
  CreateWebhookEndpointRequest,
  OtpSendRequest,
  OtpVerifyRequest,
  PrepareSwapRequest,
  PreviewDestinationRequest,
  RejectUnknownFields,
  TriggerEventRequest,
  ReplayRequest,
  UpdateWebhookEndpointRequest,
  openApiDocument
} from "@cop-integrations/contracts"
import { Exit, Schema } from "effect"
import { describe, expect, it } from "vitest"

const requestSchemas: Record<string, Schema.Top> = {
  OtpSendRequest,
  OtpVerifyRequest,
  PreviewDestinationRequest,
  CreatePayoutRequest,
  CreatePayoutBatchRequest,
  ConfirmPayoutRequest,
  ConfirmPayoutBatchRequest,
  AdvancePayoutRequest,
  PrepareSwapRequest,
  ConfirmSwapRequest,
  CreateWebhookEndpointRequest,
  UpdateWebhookEndpointRequest,
  ReplayRequest,
  TriggerEventRequest
}

type JsonObject = Record<string, any>

const document = openApiDocument() as unknown as JsonObject
const operations = Object.values(document["paths"] as Record<string, Record<string, JsonObject>>)
  .flatMap((item) => Object.values(item))

describe("request examples", () => {
  it("every request body has an example its contract schema decodes", () => {
    const bodies = operations.flatMap((operation) => {
      const schema = operation["requestBody"]?.["content"]?.["application/json"]?.["schema"]
      return schema === undefined ? [] : [String(schema["$ref"]).replace("#/components/schemas/", "")]
    })
    expect(bodies.length).toBeGreaterThanOrEqual(8)
    for (const name of bodies) {
      const schema = requestSchemas[name]
      expect(schema, `${name}: a request body this test knows`).toBeDefined()
      const examples = document["components"]["schemas"][name]["examples"] as Array<unknown> | undefined
      expect(examples, `${name} has an example`).toHaveLength(1)
      const decoded = Schema.decodeUnknownExit(schema as Schema.Decoder<unknown>)(examples![0], RejectUnknownFields)
      expect(Exit.isSuccess(decoded), `${name}: ${String(decoded)}`).toBe(true)
    }
  })

  it("every Idempotency-Key parameter has a non-empty example of its own operation", () => {
    const keys = operations.flatMap((operation) =>
      (operation["parameters"] as Array<JsonObject> | undefined ?? [])
        .filter((parameter) => parameter["name"] === "idempotency-key")
        .map((parameter) => ({ operation: operation["operationId"], parameter }))
    )
    expect(keys.map(({ operation }) => operation).sort()).toEqual([
      "breb.createPayout",
      "payoutBatches.createPayoutBatch",
      "swaps.prepareSwap"
    ])
    for (const { parameter } of keys) {
      expect(parameter["example"]).toMatch(/^[A-Za-z0-9._-]+$/)
      expect(parameter["schema"]["examples"]).toEqual([parameter["example"]])
    }
    expect(new Set(keys.map(({ parameter }) => parameter["example"])).size).toBe(keys.length)
  })

  it("the examples name one customer: the one the OTP examples approve is the one paid out to and swapping", () => {
    const schemas = document["components"]["schemas"]
    const users = ["OtpSendRequest", "OtpVerifyRequest", "CreatePayoutRequest", "PrepareSwapRequest"].map((name) =>
      schemas[name]["examples"]?.[0]?.["userAddress"]
    )
    expect(new Set(users).size).toBe(1)
    expect(users[0]).toMatch(/^0x[0-9a-fA-F]{40}$/)
    expect(schemas["CreatePayoutRequest"]["examples"]?.[0]).not.toHaveProperty("quoteId") // a quote's lock expires
  })
})
