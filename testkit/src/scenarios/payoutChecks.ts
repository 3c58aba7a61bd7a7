/**
 * What a prepared payout must show: its receipt (R-PAYOUT-3), the calldata of its two transactions (R-PAYOUT-4) and,
 * when it offers one, the one-signature batch of exactly those two (R-PAYOUT-10).
 */
import { isAddress, type Payout } from "@cop-integrations/contracts"
import { Effect } from "effect"
import { decodeErc20Transfer, sameAddress } from "../calldata.ts"
import { check, checkEqual } from "../check.ts"
import { failure, type ScenarioFailure, show } from "../failure.ts"
import type { PayoutRequest } from "../fixtures.ts"
import type { Answered } from "../http.ts"
import {
  abs,
  add,
  compare,
  decimal,
  fractionDigits,
  sameValue,
  show as showDecimal,
  subtract,
  toBaseUnits
} from "../money.ts"
import type { RuleId } from "../rules.ts"
import { legAmount } from "./amounts.ts"

/** The rule the one-signature batch belongs to, named in its failure message. */
const CALLS_RULE = "R-PAYOUT-10" satisfies RuleId

/** The rule a receipt check belongs to, named in its failure message. */
const RECEIPT_RULE = "R-PAYOUT-3" satisfies RuleId

export const checkMaskedKey = (payout: Payout, key: string, exchange: Answered): Effect.Effect<void, ScenarioFailure> =>
  Effect.gen(function*() {
    const masked = payout.receipt.breBKey ?? ""
    const last4 = key.slice(-4)
    const mask = masked.slice(0, -4)
    yield* check(
      masked.endsWith(last4) && mask.length > 0 && /^[^A-Za-z0-9@.+]+$/.test(mask),
      `breBKey is masked to its last 4 characters (${RECEIPT_RULE})`,
      {
        expected: `mask characters followed by ${JSON.stringify(last4)} for key ${JSON.stringify(key)}`,
        actual: show(masked),
        exchange
      }
    )
    yield* checkEqual(
      `breBKeyLast4 is the key's last 4 characters (${RECEIPT_RULE})`,
      payout.receipt.breBKeyLast4,
      last4,
      exchange
    )
    yield* check(!exchange.response.body.includes(key), "the full Bre-B key never appears in a payout", {
      expected: `no ${JSON.stringify(key)} anywhere in the response`,
      actual: exchange.response.body.slice(0, 600),
      exchange
    })
  })

export const checkReceipt = (
  payout: Payout,
  request: PayoutRequest,
  exchange: Answered
): Effect.Effect<void, ScenarioFailure> =>
  Effect.gen(function*() {
    const { receipt } = payout
    const facts: ReadonlyArray<readonly [string, boolean, unknown, unknown]> = [
      ["title is a fixed label", receipt.title.trim() !== "", "a non-empty title", receipt.title],
      ["receipt.payoutId is the payout's", receipt.payoutId === payout.payoutId, payout.payoutId, receipt.payoutId],
      ["receipt.status is the payout's", receipt.status === payout.status, payout.status, receipt.status],
      ["completedAt is null until completed", receipt.completedAt === null, null, receipt.completedAt],
      [
        "beneficiaryName is the account owner",
        receipt.beneficiaryName === request.accountOwnerName,
        request.accountOwnerName,
        receipt.beneficiaryName
      ],
      [
        "totalPaid is T = sourceAmount",
        receipt.totalPaid.amount === payout.sourceAmount,
        payout.sourceAmount,
        receipt.totalPaid.amount
      ],
      [
        "totalReceived is D in COP",
        sameValue(receipt.totalReceived.amount, request.destinationCop),
        request.destinationCop,
        receipt.totalReceived.amount
      ],
      [
        "the receipt shows the payout's effective rate",
        receipt.exchangeRate.effectiveUsdCop === payout.quote.effectiveUsdCop,
        payout.quote.effectiveUsdCop,
        receipt.exchangeRate.effectiveUsdCop
      ],
      [
        "the receipt shows the payout's display rate",
        receipt.exchangeRate.display === payout.quote.display,
        payout.quote.display,
        receipt.exchangeRate.display
      ],
      [
        "commission is shown in USD",
        receipt.commission.displayCurrency === "USD",
        "USD",
        receipt.commission.displayCurrency
      ],
      ["commission has a note", receipt.commission.note.trim() !== "", "a non-empty note", receipt.commission.note]
    ]
    for (const [name, holds, expected, actual] of facts) {
      yield* check(holds, `${name} (${RECEIPT_RULE})`, { expected: show(expected), actual: show(actual), exchange })
    }
    const legs = payout.fees.map((leg) => decimal(leg.amountUsd)).reduce(add, decimal("0"))
    const shown = receipt.commission.displayAmount
    const withinHalfCent = compare(abs(subtract(decimal(shown), legs)), decimal("0.005")) <= 0
    yield* check(
      fractionDigits(shown) === 2 && withinHalfCent,
      `commission.displayAmount is the sum of the legs to 2 decimals (${RECEIPT_RULE})`,
      {
        expected: `${payout.fees.map((leg) => leg.amountUsd).join(" + ")} = ${showDecimal(legs)}, to 2 decimals`,
        actual: shown,
        exchange
      }
    )
  })

export const checkCalldata = (payout: Payout, exchange: Answered): Effect.Effect<void, ScenarioFailure> =>
  Effect.gen(function*() {
    const decimals = fractionDigits(payout.deposit.amount)
    const feeWallet = payout.fees.find((leg) => leg.code === "copby")?.to ?? null
    const serviceFee = legAmount(payout.fees, "copby") ?? "0"
    const expectations = [
      ["transaction", payout.transaction, payout.deposit.address, payout.deposit.amount, "the deposit"] as const,
      ["feeTransaction", payout.feeTransaction, feeWallet, serviceFee, "the copby fee"] as const
    ]
    for (const [name, tx, recipient, amount, what] of expectations) {
      const rule = `${name} is an ERC-20 transfer of ${what}`
      const decoded = decodeErc20Transfer(tx.data)
      if ("problem" in decoded) {
        return yield* Effect.fail(
          failure(rule, {
            expected: "transfer(address,uint256) calldata",
            actual: `${decoded.problem}: ${tx.data}`,
            exchange
          })
        )
      }
      yield* check(sameAddress(decoded.to, recipient), rule, {
        expected: `transfer to ${recipient ?? "(the copby leg's `to`)"}`,
        actual: `transfer to ${decoded.to}`,
        exchange
      })
      const units = toBaseUnits(decimal(amount), decimals)
      yield* check(decoded.amount === units, rule, {
        expected: `amount ${units} base units (${amount} at ${decimals} decimals)`,
        actual: `amount ${decoded.amount} base units`,
        exchange
      })
      yield* check(isAddress(tx.to) && tx.value === "0" && tx.approvalTarget === null, rule, {
        expected: "`to` the token contract, value \"0\", no approvalTarget for a USDC transfer",
        actual: show({ to: tx.to, value: tx.value, approvalTarget: tx.approvalTarget }),
        exchange
      })
    }
    yield* check(
      sameAddress(payout.transaction.to, payout.feeTransaction.to),
      "both transactions call the same token contract",
      {
        expected: `feeTransaction.to = ${payout.transaction.to}`,
        actual: payout.feeTransaction.to,
        exchange
      }
    )
    yield* checkCalls(payout, exchange)
  })

/**
 * `calls`, when the payout offers it (live, USDC): an atomic EIP-5792 batch from `userAddress` of exactly `transaction`
 * then `feeTransaction`, so one signature moves what the two transactions would and nothing else.
 */
const checkCalls = (payout: Payout, exchange: Answered): Effect.Effect<void, ScenarioFailure> =>
  Effect.gen(function*() {
    if (payout.calls === null) return
    const { atomicRequired, calls, chainId, from, version } = payout.calls
    const expected = [payout.transaction, payout.feeTransaction].map((tx) => ({ to: tx.to, data: tx.data }))
    const actual = calls.map((call) => ({ to: call.to, data: call.data }))
    yield* check(
      calls.length === 2 &&
        calls.every((call, i) =>
          sameAddress(call.to, expected[i]!.to) && call.data.toLowerCase() === expected[i]!.data.toLowerCase()
        ),
      `calls batches exactly transaction then feeTransaction (${CALLS_RULE})`,
      { expected: show(expected), actual: show(actual), exchange }
    )
    yield* check(
      calls.every((call) => /^0x0*$/i.test(call.value)) && version === "2.0.0" && atomicRequired &&
        sameAddress(from, payout.userAddress) && /^0x[0-9a-f]+$/i.test(chainId),
      `calls is an atomic EIP-5792 batch from userAddress that moves no native value (${CALLS_RULE})`,
      {
        expected: `version "2.0.0", atomicRequired true, from ${payout.userAddress}, a hex chainId, every value 0x0`,
        actual: show({ version, atomicRequired, from, chainId, values: calls.map((call) => call.value) }),
        exchange
      }
    )
  })
