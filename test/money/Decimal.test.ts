import { BigDecimal, Option } from "effect"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  divideRounded,
  formatFixed,
  fromBaseUnits,
  parsePlainDecimal,
  roundDown,
  roundHalfUp,
  roundUp,
  toBaseUnits
} from "../../src/money/index.ts"
import { expectDecimal, pow10 } from "./exact.ts"

const dec = BigDecimal.fromStringUnsafe

describe("parsePlainDecimal", () => {
  it.each([
    ["0", 2, "0"],
    ["7", 0, "7"],
    ["250000", 2, "250000"],
    ["0.5", 2, "0.5"],
    ["10.25", 2, "10.25"],
    ["0.00", 2, "0"],
    ["3950.123456", 6, "3950.123456"],
    ["11551999.99", 2, "11551999.99"]
  ])("accepts %j with max %i decimals", (input, maxDecimals, expected) => {
    const parsed = parsePlainDecimal(input, maxDecimals)
    expect(Option.isSome(parsed)).toBe(true)
    if (Option.isSome(parsed)) expectDecimal(parsed.value, expected)
  })

  it("keeps the written scale so formatting is lossless", () => {
    const parsed = Option.getOrThrow(parsePlainDecimal("1.50", 2))
    expect(parsed.value).toBe(150n)
    expect(parsed.scale).toBe(2)
  })

  it.each([
    ["1e3", 2],
    ["1E3", 2],
    ["-1", 2],
    ["+1", 2],
    [" 1", 2],
    ["1 ", 2],
    ["01", 2],
    ["00.5", 2],
    ["1.234", 2],
    ["1.5", 0],
    ["", 2],
    ["1.", 2],
    [".5", 2],
    ["1,000", 2],
    ["1_000", 2],
    ["0x10", 2],
    ["Infinity", 2],
    ["NaN", 2],
    ["١٢", 2] // Arabic-Indic digits
  ])("rejects %j with max %i decimals", (input, maxDecimals) => {
    expect(Option.isNone(parsePlainDecimal(input, maxDecimals))).toBe(true)
  })

  it("round-trips every plain decimal through formatFixed", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 30n }), fc.integer({ min: 0, max: 18 }), (units, scale) => {
        const text = formatFixed(fromBaseUnits(units, scale), scale)
        const parsed = Option.getOrThrow(parsePlainDecimal(text, scale))
        expect(toBaseUnits(parsed, scale)).toBe(units)
      })
    )
  })
})

describe("rounding", () => {
  // [value, scale, up (ceil), down (floor), halfUp (ties toward +∞)]
  it.each([
    ["1.231", 2, "1.24", "1.23", "1.23"],
    ["1.235", 2, "1.24", "1.23", "1.24"],
    ["1.2349999", 2, "1.24", "1.23", "1.23"],
    ["1.23", 2, "1.23", "1.23", "1.23"],
    ["1.2", 6, "1.2", "1.2", "1.2"],
    ["0.0000001", 6, "0.000001", "0", "0"],
    ["0.0000005", 6, "0.000001", "0", "0.000001"],
    ["2.5", 0, "3", "2", "3"],
    ["-1.231", 2, "-1.23", "-1.24", "-1.23"],
    ["-1.235", 2, "-1.23", "-1.24", "-1.23"],
    ["-1.236", 2, "-1.23", "-1.24", "-1.24"],
    ["-2.5", 0, "-2", "-3", "-2"],
    ["-0.0000001", 6, "0", "-0.000001", "0"]
  ])("%s at scale %i", (value, scale, up, down, halfUp) => {
    expectDecimal(roundUp(dec(value), scale), up)
    expectDecimal(roundDown(dec(value), scale), down)
    expectDecimal(roundHalfUp(dec(value), scale), halfUp)
  })

  it("handles values stored with a negative scale", () => {
    const twelveThousand = BigDecimal.make(12n, -3)
    expectDecimal(roundUp(twelveThousand, 2), "12000")
    expect(formatFixed(roundUp(twelveThousand, 2), 2)).toBe("12000.00")
  })

  it("returns the requested scale", () => {
    expect(roundUp(dec("1.5"), 6).scale).toBe(6)
    expect(roundDown(dec("1.123456789"), 6).scale).toBe(6)
  })
})

describe("divideRounded", () => {
  it.each([
    ["1", "3", 6, "0.333334", "0.333333", "0.333333"],
    ["2", "3", 6, "0.666667", "0.666666", "0.666667"],
    ["1", "8", 2, "0.13", "0.12", "0.13"],
    ["-1", "8", 2, "-0.12", "-0.13", "-0.12"],
    ["1", "-3", 6, "-0.333333", "-0.333334", "-0.333333"],
    ["250000", "3930.7475", 6, "63.601135", "63.601134", "63.601134"],
    ["6", "3", 0, "2", "2", "2"],
    // 1 / 7 far beyond effect's 100-digit division precision
    [
      "1",
      "7",
      120,
      `0.${"142857".repeat(20)}`.slice(0, -1) + "8",
      `0.${"142857".repeat(20)}`,
      `0.${"142857".repeat(20)}`
    ]
  ])("%s / %s at scale %i", (a, b, scale, up, down, halfUp) => {
    expectDecimal(divideRounded(dec(a), dec(b), scale, "up"), up)
    expectDecimal(divideRounded(dec(a), dec(b), scale, "down"), down)
    expectDecimal(divideRounded(dec(a), dec(b), scale, "halfUp"), halfUp)
  })

  it("throws on division by zero", () => {
    expect(() => divideRounded(dec("1"), dec("0"), 2, "up")).toThrow(RangeError)
  })

  it("brackets the exact quotient (q·b ≤ a < (q + ulp)·b for b > 0)", () => {
    const decimal = fc
      .tuple(fc.bigInt({ min: -(10n ** 20n), max: 10n ** 20n }), fc.integer({ min: -3, max: 12 }))
      .map(([value, scale]) => BigDecimal.make(value, scale))
    const positiveDecimal = fc
      .tuple(fc.bigInt({ min: 1n, max: 10n ** 20n }), fc.integer({ min: -3, max: 12 }))
      .map(([value, scale]) => BigDecimal.make(value, scale))
    fc.assert(
      fc.property(decimal, positiveDecimal, fc.integer({ min: 0, max: 20 }), (a, b, scale) => {
        const ulp = BigDecimal.make(1n, scale)
        const down = divideRounded(a, b, scale, "down")
        const up = divideRounded(a, b, scale, "up")
        const halfUp = divideRounded(a, b, scale, "halfUp")
        // floor: down·b ≤ a < (down + ulp)·b
        expect(BigDecimal.isLessThanOrEqualTo(BigDecimal.multiply(down, b), a)).toBe(true)
        expect(BigDecimal.isLessThan(a, BigDecimal.multiply(BigDecimal.sum(down, ulp), b))).toBe(true)
        // ceil: (up − ulp)·b < a ≤ up·b
        expect(BigDecimal.isLessThan(BigDecimal.multiply(BigDecimal.subtract(up, ulp), b), a)).toBe(true)
        expect(BigDecimal.isLessThanOrEqualTo(a, BigDecimal.multiply(up, b))).toBe(true)
        // half-up: (halfUp − ulp/2)·b ≤ a < (halfUp + ulp/2)·b
        const halfUlp = BigDecimal.make(5n, scale + 1)
        expect(BigDecimal.isLessThanOrEqualTo(BigDecimal.multiply(BigDecimal.subtract(halfUp, halfUlp), b), a)).toBe(
          true
        )
        expect(BigDecimal.isLessThan(a, BigDecimal.multiply(BigDecimal.sum(halfUp, halfUlp), b))).toBe(true)
      }),
      { numRuns: 500 }
    )
  })
})

describe("formatFixed", () => {
  it.each([
    ["63.29114", 6, "63.291140"],
    ["5", 0, "5"],
    ["0.5", 2, "0.50"],
    ["0", 2, "0.00"],
    ["0", 0, "0"],
    ["-0.5", 2, "-0.50"],
    ["-12", 1, "-12.0"],
    ["3891.82", 2, "3891.82"],
    ["11551999.99", 2, "11551999.99"],
    ["0.000000000000000001", 18, "0.000000000000000001"],
    ["123456789012345678901234567890", 0, "123456789012345678901234567890"]
  ])("%s at scale %i is %j", (value, scale, expected) => {
    expect(formatFixed(dec(value), scale)).toBe(expected)
  })

  it("never uses exponent notation (BigDecimal.format does from 16 fraction digits on)", () => {
    expect(BigDecimal.format(BigDecimal.make(1n, 18))).toBe("1e-18")
    expect(formatFixed(BigDecimal.make(1n, 18), 18)).toBe("0.000000000000000001")
    expect(formatFixed(BigDecimal.make(5n, -20), 0)).toBe(`5${"0".repeat(20)}`)
  })

  it("ignores trailing zeros beyond the scale but throws instead of dropping digits", () => {
    expect(formatFixed(dec("1.2300000"), 2)).toBe("1.23")
    expect(() => formatFixed(dec("1.234"), 2)).toThrow(RangeError)
    expect(() => formatFixed(dec("0.5"), 0)).toThrow(RangeError)
  })
})

describe("base units", () => {
  it("converts exactly", () => {
    expect(toBaseUnits(dec("63.29114"), 6)).toBe(63_291_140n)
    expect(toBaseUnits(dec("2"), 18)).toBe(2n * pow10(18))
    expect(toBaseUnits(BigDecimal.make(3n, -2), 0)).toBe(300n)
    expect(toBaseUnits(dec("-0.000001"), 6)).toBe(-1n)
    expect(toBaseUnits(dec("1.5000000"), 1)).toBe(15n)
    expectDecimal(fromBaseUnits(63_291_140n, 6), "63.29114")
    expectDecimal(fromBaseUnits(1n, 18), "0.000000000000000001")
  })

  it("throws when the value has more fraction digits than decimals", () => {
    expect(() => toBaseUnits(dec("0.0000001"), 6)).toThrow(RangeError)
  })

  it("rejects invalid decimals counts", () => {
    expect(() => toBaseUnits(dec("1"), -1)).toThrow(RangeError)
    expect(() => toBaseUnits(dec("1"), 1.5)).toThrow(RangeError)
    expect(() => fromBaseUnits(1n, -1)).toThrow(RangeError)
  })

  it("round-trips", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }), fc.integer({ min: 0, max: 30 }), (units, d) => {
        expect(toBaseUnits(fromBaseUnits(units, d), d)).toBe(units)
      })
    )
  })
})
