import { describe, expect, it } from "vitest"
import { base62, newId, randomBase62 } from "../../src/base/ids.ts"

describe("random ids", () => {
  it("are as wide as base62 makes that many bytes, in the base62 alphabet", () => {
    for (const bytes of [4, 12, 16, 32]) {
      const width = base62(new Uint8Array(bytes).fill(255)).length
      for (let i = 0; i < 50; i++) expect(randomBase62(bytes)).toMatch(new RegExp(`^[0-9A-Za-z]{${width}}$`))
    }
    expect(newId("po")).toMatch(/^po_[0-9A-Za-z]{22}$/)
  })

  it("never repeat across more than one refill of the random pool", () => {
    const ids = Array.from({ length: 5_000 }, () => randomBase62(12))
    expect(new Set(ids).size).toBe(ids.length)
  })

  it("use every character about equally often (no modulo bias: a chi-square check over 62 characters)", () => {
    const counts = new Map<string, number>()
    const draws = 3_000
    for (let i = 0; i < draws; i++) for (const c of randomBase62(16)) counts.set(c, (counts.get(c) ?? 0) + 1)
    const total = [...counts.values()].reduce((a, b) => a + b, 0)
    const expected = total / 62
    const chiSquare = [...counts.values()].reduce((sum, n) => sum + (n - expected) ** 2 / expected, 0)
    expect(counts.size).toBe(62)
    // 61 degrees of freedom: the 99.99th percentile is ~113. `byte % 62` over all 256 bytes lands well above it.
    expect(chiSquare).toBeLessThan(113)
  })
})
