/**
 * The summaries a request log keeps: values by an allow-list of fields, masks, bounds, and error messages without the
 * values they quote.
 */
import { describe, expect, it } from "vitest"
import { generateApiKey } from "../../src/auth/ApiKey.ts"
import {
  looksSecret,
  REDACTED,
  scrubMessage,
  scrubPath,
  summarise,
  summariseHeaders,
  summariseJsonText,
  summariseQuery
} from "../../src/requestLogs/Summary.ts"

const KEY = generateApiKey("test")
const ADDRESS = "0x69c6952d1E56b22eF57F1c7c4efc4E4040261AEF"

describe("summarise", () => {
  it("keeps the allow-listed fields' values and redacts every other", () => {
    expect(summarise({
      payoutId: "po_3kTMd9Qv7xWc2LpZ8hR1sA",
      status: "completed",
      userAddress: ADDRESS,
      destinationCop: "250000",
      retryable: true,
      code: "123456",
      debugCode: "123456",
      secret: "s3cret",
      password: 42,
      nothing: null,
      failure: { code: "deposit_after_cancel", category: "deposit" },
      refund: { token: "USDC" },
      credentials: { token: "t0ken", value: "v" }
    })).toEqual({
      payoutId: "po_3kTMd9Qv7xWc2LpZ8hR1sA",
      status: "completed",
      userAddress: ADDRESS,
      destinationCop: "250000",
      retryable: true,
      code: REDACTED,
      debugCode: REDACTED,
      secret: REDACTED,
      password: REDACTED,
      nothing: null,
      failure: { code: "deposit_after_cancel", category: "deposit" },
      refund: { token: "USDC" },
      credentials: { token: REDACTED, value: REDACTED }
    })
  })

  it("refuses a kept value shaped like a secret, and a field named like one", () => {
    const body = generateApiKey("live").slice("cop_live_pk_".length)
    expect(summarise({
      accountOwnerName: `Ana ${KEY}`,
      note: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
      title: `Bearer abc`,
      id: body,
      [KEY]: "x"
    })).toEqual({
      accountOwnerName: REDACTED,
      note: REDACTED,
      title: REDACTED,
      id: REDACTED,
      "[redacted field 4]": REDACTED
    })
  })

  it("masks a Bre-B key, an e-mail and a URL", () => {
    expect(summarise({
      breBKey: "@maria2024",
      email: "maria.perez@example.com",
      url: "https://user:pw@hooks.example.com/services/T0/B0/XYZ?token=abc",
      kycUrl: "https://kyc.example.com/"
    })).toEqual({
      breBKey: "******2024",
      email: "m***@example.com",
      url: "https://hooks.example.com/…",
      kycUrl: "https://kyc.example.com"
    })
    expect(summarise({ url: "not a url", email: "nobody" })).toEqual({ url: REDACTED, email: REDACTED })
  })

  it("is bounded: strings, items, fields, depth and values in all", () => {
    expect(summarise({ note: "x".repeat(100) })).toEqual({ note: `${"x".repeat(64)}…` })
    expect(summarise({ events: ["a", "b", "c", "d", "e", "f", "g"] })).toEqual({ events: ["a", "b", "c", "… 4 more"] })
    const wide = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`f${i}`, i]))
    const shown = summarise(wide) as Record<string, unknown>
    expect(Object.keys(shown)).toHaveLength(21)
    expect(shown["…"]).toBe("10 more fields")
    expect(summarise({ a: { b: { c: { d: { e: 1 } } } } })).toEqual({ a: { b: { c: "{1 fields}" } } })
    const many = { items: Array.from({ length: 5 }, () => wide) }
    expect(JSON.stringify(summarise(many)).length).toBeLessThan(2048)
    const deep = JSON.parse(`${"[".repeat(5000)}${"]".repeat(5000)}`)
    expect(summarise(deep)).toEqual([[["[1 items]"]]])
  })

  it("keeps only what PostgreSQL can store: no NUL, no lone surrogate (a cut never splits a pair)", () => {
    expect(summarise({ note: "a\u0000b", title: "x\ud800y", ["k\u0000"]: null })).toEqual({
      note: "a\uFFFDb",
      title: "x\uFFFDy",
      "k\uFFFD": null
    })
    expect(summarise({ note: `${"x".repeat(63)}😀` })).toEqual({ note: `${"x".repeat(63)}\uFFFD…` })
    expect(summariseQuery("limit=%00")).toEqual({ limit: "\uFFFD" })
    expect(scrubMessage("no payout a\u0000")).toBe("no payout a\uFFFD")
  })

  it("redacts fields named like Object's own members, never dropping them or taking a rule from them", () => {
    const sent = JSON.parse(`{"constructor": "c0de", "toString": 1, "__proto__": {"secret": "s"}, "status": "ok"}`)
    // Compared as stored (JSON): a value left undefined, or a field set as the object's prototype, would vanish there.
    expect(JSON.parse(JSON.stringify(summarise(sent)))).toEqual({
      constructor: REDACTED,
      toString: REDACTED,
      ["__proto__"]: { secret: REDACTED },
      status: "ok"
    })
    expect(JSON.parse(JSON.stringify(summariseQuery("constructor=c0de&hasOwnProperty=x")))).toEqual({
      constructor: REDACTED,
      hasOwnProperty: REDACTED
    })
  })

  it("describes a body that is not JSON without keeping it", () => {
    expect(summariseJsonText("")).toBeNull()
    expect(summariseJsonText(`not json ${KEY}`)).toEqual({ notJson: `${`not json ${KEY}`.length} characters` })
  })
})

describe("the query string and headers", () => {
  it("keeps the contract's parameters only, and no secret", () => {
    expect(summariseQuery(`limit=5&cursor=${KEY}&api_key=${KEY}&token=abc&destinationCop=250000`)).toEqual({
      limit: "5",
      cursor: REDACTED,
      api_key: REDACTED,
      token: REDACTED,
      destinationCop: "250000"
    })
  })

  it("keeps four headers, never Authorization or a cookie", () => {
    expect(summariseHeaders({
      authorization: `Bearer ${KEY}`,
      cookie: "sid=abc",
      "x-api-key": "abc",
      "content-type": "application/json",
      "idempotency-key": KEY,
      "user-agent": "curl/8"
    })).toEqual({ "content-type": "application/json", "idempotency-key": REDACTED, "user-agent": "curl/8" })
  })
})

describe("scrubMessage", () => {
  it("cuts the values a decode error quotes, whatever they hold", () => {
    expect(scrubMessage(`invalid request: code: Expected string, actual 123456`, 500))
      .toBe("invalid request: code: Expected string, actual [redacted]")
    expect(scrubMessage(`invalid request: a: Expected string, actual "x; b: 123456"; c: is missing`, 500))
      .toBe("invalid request: a: Expected string, actual [redacted]; c: is missing")
    expect(scrubMessage(`invalid request: a: Expected string, actual {"k":"}; 99","n":[1,"]"]}; c: is missing`, 500))
      .toBe("invalid request: a: Expected string, actual [redacted]; c: is missing")
    expect(scrubMessage(`invalid request: a: Expected string, actual "unterminated 123456`, 500))
      .toBe("invalid request: a: Expected string, actual [redacted]")
  })

  it("takes out a secret quoted anywhere else, and is bounded", () => {
    expect(scrubMessage(`no payout ${KEY}`, 500)).toBe(`no payout ${REDACTED}`)
    expect(scrubMessage("x".repeat(600), 500)).toHaveLength(501)
  })
})

describe("scrubPath and looksSecret", () => {
  it("replaces a path segment that looks like a secret, percent-encoded or not", () => {
    expect(scrubPath(`/api/integrations/breb/payouts/${KEY}`)).toBe(`/api/integrations/breb/payouts/${REDACTED}`)
    expect(scrubPath(`/api/x/${KEY.replaceAll("_", "%5F")}/cancel`)).toBe(`/api/x/${REDACTED}/cancel`)
    expect(scrubPath("/api/integrations/breb/payouts/po_3kTMd9Qv7xWc2LpZ8hR1sA")).toBe(
      "/api/integrations/breb/payouts/po_3kTMd9Qv7xWc2LpZ8hR1sA"
    )
    expect(scrubPath("/a/%E0%A4%A")).toBe("/a/%E0%A4%A")
  })

  it("knows keys, webhook secrets, bearer tokens and bare key bodies, not addresses, hashes or ids", () => {
    expect(looksSecret(KEY)).toBe(true)
    expect(looksSecret(KEY.toUpperCase())).toBe(true)
    expect(looksSecret(`whsec_${"A1b".repeat(10)}`)).toBe(true)
    expect(looksSecret("bearer abc")).toBe(true)
    expect(looksSecret(KEY.slice(12))).toBe(true)
    expect(looksSecret(ADDRESS)).toBe(false)
    expect(looksSecret(`0x${"ab12".repeat(16)}`)).toBe(false)
    expect(looksSecret("po_3kTMd9Qv7xWc2LpZ8hR1sA")).toBe(false)
    expect(looksSecret("0f8fad5b-d9cb-469f-a165-70867728950e")).toBe(false)
  })
})
