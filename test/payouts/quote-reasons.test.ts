import { describe, expect, it } from "vitest"
import { quoteReasons } from "../../src/payouts/quoteReasons.ts"

describe("quoteReasons", () => {
  it("quotes up to three reasons in full", () => {
    expect(quoteReasons(["a", "b", "c"])).toBe("a; b; c")
  })
  it("quotes the first three and counts the rest", () => {
    expect(quoteReasons(["a", "b", "c", "d", "e"])).toBe("a; b; c; and 2 more")
  })
})
