/**
 * npm run money:check -- [--cases 1000000] [--seed <integer>]
 *
 * Runs the money properties of the test suite (scripts/moneyProperties/properties.ts: one definition each, which
 * test/money/Fees.property.test.ts runs over 1,000 cases) over many generated payouts, USDC and COPm, priced by the
 * service's own path and checked against the exact-rational reference (scripts/moneyProperties/reference.ts). COPm cases are priced
 * through the mock route's pricing (SwapRouterMock.mockRouteQuote) at each case's mid-market rate and route fee; the
 * reference checks them against its own model of that pricing. Prints a summary; exits 1 on any failure.
 */
import * as fc from "fast-check"
import { evaluate, MONEY_PROPERTIES, moneyCaseArb, showCase, violations } from "./moneyProperties/properties.ts"

const CHUNK = 10_000
const SHOWN_PER_PROPERTY = 3

const option = (name: string, fallback: number): number => {
  const index = process.argv.indexOf(`--${name}`)
  if (index === -1) return fallback
  const value = Number(process.argv[index + 1])
  if (!Number.isSafeInteger(value) || value < 0) {
    process.stderr.write(`--${name}: expected a non-negative integer, got ${process.argv[index + 1]}\n`)
    process.exit(2)
  }
  return value
}

const total = option("cases", 1_000_000)
const seed = option("seed", Date.now() % 2_147_483_647)
const failures = new Map(
  MONEY_PROPERTIES.map((property) => [property.name, { count: 0, examples: [] as Array<string> }])
)
const tally = { USDC: 0, COPm: 0, firmCopm: 0, failedCases: 0 }
const refused = new Map<string, number>()
const started = performance.now()

for (let done = 0, chunk = 0; done < total; chunk++) {
  const size = Math.min(CHUNK, total - done)
  for (const c of fc.sample(moneyCaseArb, { numRuns: size, seed: seed + chunk })) {
    const evaluated = evaluate(c)
    if (evaluated.outcome._tag === "Priced") {
      tally[c.fromToken]++
      if (c.quoted !== undefined) tally.firmCopm++
    } else {
      refused.set(evaluated.outcome.error._tag, (refused.get(evaluated.outcome.error._tag) ?? 0) + 1)
    }
    const found = violations(evaluated)
    if (found.length > 0) tally.failedCases++
    for (const { message, property } of found) {
      const entry = failures.get(property)!
      entry.count++
      if (entry.examples.length < SHOWN_PER_PROPERTY) entry.examples.push(`${message}\n      case ${showCase(c)}`)
    }
  }
  done += size
  if (done % 100_000 === 0 && done < total) {
    process.stderr.write(
      `  ${done.toLocaleString("en")} cases, ${((performance.now() - started) / 1000).toFixed(0)} s\n`
    )
  }
}

const seconds = (performance.now() - started) / 1000
const lines = [
  `money:check  ${total.toLocaleString("en")} cases (seed ${seed}) in ${seconds.toFixed(1)} s (${
    Math.round(total / seconds).toLocaleString("en")
  } cases/s)`,
  `  priced from USDC ${tally.USDC.toLocaleString("en")}, from COPm ${tally.COPm.toLocaleString("en")} (${
    tally.firmCopm.toLocaleString("en")
  } with a firm quote); refused: ${
    [...refused].map(([tag, count]) => `${tag} ${count.toLocaleString("en")}`).join(", ") || "none"
  }`,
  `  reference: exact rationals (bigint numerator/denominator); COPm routes: the mock route's pricing at each case's M and fee`,
  ...MONEY_PROPERTIES.map((property) => {
    const entry = failures.get(property.name)!
    return `  ${entry.count === 0 ? "ok  " : "FAIL"} ${property.name.padEnd(16)} ${
      entry.count.toLocaleString("en").padStart(9)
    } failures  ${property.rule}` +
      entry.examples.map((example) => `\n    - ${example}`).join("")
  }),
  `failures: ${tally.failedCases.toLocaleString("en")} of ${total.toLocaleString("en")} cases`
]
process.stdout.write(`${lines.join("\n")}\n`)
process.exit(tally.failedCases === 0 ? 0 : 1)
