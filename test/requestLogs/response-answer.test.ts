/**
 * What a request log reads of the answer: the platform keeps a JSON answer as text and encodes it only when an
 * adapter asks for bytes (the Node server writes the text). The log reads that text and its declared length, so it
 * never makes the platform encode an answer a second time (for a page of 50 payouts, 130 KB per request); a body made
 * of bytes is decoded once.
 */
import { HttpServerResponse } from "effect/http"
import { describe, expect, it } from "vitest"
import { answerOf, MAX_SUMMARISED_RESPONSE_BYTES } from "../../src/http/RequestLogging.ts"

/** The response, with its body's bytes getter counting how often it is read. */
const watched = (response: HttpServerResponse.HttpServerResponse) => {
  const body = response.body
  if (body._tag !== "Uint8Array") throw new Error("expected a Uint8Array body")
  const prototype: unknown = Object.getPrototypeOf(body)
  let reads = 0
  Object.defineProperty(body, "body", {
    get() {
      reads++
      return Reflect.get(prototype as object, "body", body)
    }
  })
  return { response, reads: () => reads }
}

describe("a request log reads the answer as the platform holds it", () => {
  it("summarises a JSON answer from its text, never encoding it", () => {
    const answer = watched(
      HttpServerResponse.jsonUnsafe({ payoutId: "po_1", status: "awaiting_deposit", secret: "whsec_x" })
    )
    expect(answerOf(answer.response).body).toEqual({
      payoutId: "po_1",
      status: "awaiting_deposit",
      secret: "[redacted]"
    })
    expect(answer.reads()).toBe(0)
  })

  it("describes an answer over the limit by its size in bytes, never encoding it", () => {
    // "ñ" is two bytes in UTF-8: the size said is the bytes sent, not the characters.
    const items = Array.from({ length: 2_000 }, (_, index) => ({ id: `po_${index}`, accountOwnerName: "Muñoz" }))
    const response = HttpServerResponse.jsonUnsafe({ items })
    const bytes = Buffer.byteLength(JSON.stringify({ items }), "utf8")
    expect(bytes).toBeGreaterThan(MAX_SUMMARISED_RESPONSE_BYTES)
    const answer = watched(response)
    expect(answerOf(answer.response).body).toEqual({ notSummarised: `${bytes} bytes` })
    expect(answer.reads()).toBe(0)
  })

  it("decodes an answer made of bytes, once", () => {
    const answer = watched(
      HttpServerResponse.uint8Array(
        new TextEncoder().encode(JSON.stringify({ error: "bad", errorCode: "needs_kyc" })),
        {
          status: 409,
          contentType: "application/json"
        }
      )
    )
    expect(answerOf(answer.response)).toEqual({
      body: { error: "bad", errorCode: "needs_kyc" },
      error: "bad",
      errorCode: "needs_kyc"
    })
    expect(answer.reads()).toBe(1)
  })
})
