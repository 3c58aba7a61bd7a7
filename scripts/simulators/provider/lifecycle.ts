/**
 * State changes and the webhooks they send: KYC decisions on customers, and a transfer's path
 * awaiting_funds → funds_received → payment_submitted → payment_processed (one step per `stepDelayMs`), or a
 * forced side exit. A step only runs from the state it expects, so a forced state stops the normal path.
 */
import { randomBytes } from "node:crypto"
import type { SendRefund } from "./refunds.ts"
import { computeReceipt, customerResponse, type EventCategory, transferResponse, webhookEnvelope } from "./shapes.ts"
import {
  type CustomerRecord,
  nowIso,
  type RefundRecord,
  type SimulatorState,
  type TransferRecord,
  type TransferState
} from "./state.ts"
import { type SentEvent, WebhookSender } from "./webhooks.ts"

const NEXT_STEP: Partial<Record<TransferState, TransferState>> = {
  funds_received: "payment_submitted",
  payment_submitted: "payment_processed"
}

export class Lifecycle {
  private readonly timers = new Set<NodeJS.Timeout>()

  constructor(
    private readonly state: SimulatorState,
    private readonly webhooks: WebhookSender,
    private readonly decimals: number,
    private readonly baseUrl: () => string,
    /** Sends a refund onchain; null without a node (then only a phantom refund can be reported). */
    private readonly sendRefund: SendRefund | null = null,
    private readonly log: (line: string) => void = () => {}
  ) {}

  // -- customers --------------------------------------------------------------------------------------

  approveCustomer(customer: CustomerRecord): ReadonlyArray<SentEvent> {
    const before = customerResponse(customer)
    customer.kycStatus = "approved"
    customer.tosStatus = "approved"
    customer.copEndorsement = "approved"
    customer.rejectionReasons = []
    customer.updatedAt = nowIso()
    return this.customerEvent(customer, before)
  }

  rejectCustomer(customer: CustomerRecord, reasons: ReadonlyArray<string>): ReadonlyArray<SentEvent> {
    const before = customerResponse(customer)
    customer.kycStatus = "rejected"
    customer.copEndorsement = "incomplete"
    customer.rejectionReasons = [...reasons]
    customer.updatedAt = nowIso()
    return this.customerEvent(customer, before)
  }

  private customerEvent(customer: CustomerRecord, before: ReturnType<typeof customerResponse>) {
    const after = customerResponse(customer)
    const changes: Record<string, readonly [unknown, unknown]> = {}
    for (const key of ["status", "kyc_status", "tos_status"] as const) {
      if (before[key] !== after[key]) changes[key] = [before[key], after[key]]
    }
    return this.emit("customer", customer.id, after.status, after, changes, "state_change")
  }

  // -- transfers --------------------------------------------------------------------------------------

  /** A deposit seen onchain (or credited by the control API); the funds are received once they cover the amount. */
  credit(transfer: TransferRecord, deposit: TransferRecord["deposits"][number]): boolean {
    if (transfer.deposits.some((d) => d.txHash === deposit.txHash && d.logIndex === deposit.logIndex)) return false
    transfer.deposits.push(deposit)
    transfer.receivedUnits += deposit.units
    transfer.updatedAt = nowIso()
    if (transfer.state === "awaiting_funds" && transfer.receivedUnits >= transfer.amountUnits) {
      this.fundsReceived(transfer)
    }
    // Bridge returns funds sent to a canceled transfer (the crypto return policy): they are not paid out.
    if (transfer.state === "canceled" && transfer.refund === undefined) {
      const returned = this.fail(transfer, { reason: "transfer_canceled", feeUnits: 0n, phantom: false })
      if (typeof returned === "string") this.log(`funds for canceled transfer ${transfer.id} not returned: ${returned}`)
    }
    return true
  }

  private fundsReceived(transfer: TransferRecord): void {
    transfer.receipt = computeReceipt(transfer, this.state.rates.sell_rate, this.decimals)
    this.transition(transfer, "funds_received")
  }

  /** Moves a transfer to any state (control API); funds_received and payment_submitted continue the normal path. */
  force(transfer: TransferRecord, next: TransferState): ReadonlyArray<SentEvent> {
    if (next === "funds_received" && transfer.receipt === null) {
      const delivered = transfer.receivedUnits > 0n ? transfer : { ...transfer, receivedUnits: transfer.amountUnits }
      transfer.receipt = computeReceipt(delivered, this.state.rates.sell_rate, this.decimals)
    }
    return this.transition(transfer, next)
  }

  /**
   * A transfer whose funds arrived fails and its deposit goes back to the sender (refund_to_sender): `returned`
   * (with `return_details.reason` and the refund, no transaction yet), then the refund is sent onchain (the received
   * amount less `feeUnits`, to the first deposit's sender) and `refunded` names its transaction. `phantom`: the
   * transaction named is a random hash, sent nowhere. Answers an error message, or the `returned` events (the
   * refund follows asynchronously; `refund.error` says if sending it failed).
   */
  fail(
    transfer: TransferRecord,
    options: { readonly reason: string; readonly feeUnits: bigint; readonly phantom: boolean }
  ): string | ReadonlyArray<SentEvent> {
    const sender = transfer.deposits[0]?.from
    if (transfer.receivedUnits === 0n || sender === undefined) return "no funds arrived: nothing to return"
    if (transfer.refund !== undefined) return "the transfer is already being returned"
    if (options.feeUnits > transfer.receivedUnits) return "refund_fee is more than the funds received"
    if (!options.phantom && (this.sendRefund === null || !sender.startsWith("0x"))) {
      return "no onchain deposit to return (start the simulator with a node, or report a phantom refund)"
    }
    const refund: RefundRecord = {
      units: transfer.receivedUnits - options.feeUnits,
      toAddress: sender,
      txHash: null,
      error: null
    }
    transfer.returnReason = options.reason
    transfer.refund = refund
    const sent = this.transition(transfer, "returned")
    const send = options.phantom || this.sendRefund === null
      ? Promise.resolve(`0x${randomBytes(32).toString("hex")}` as const)
      : this.sendRefund({ from: transfer.depositAddress, to: sender, units: refund.units })
    void send.then(
      (txHash) => {
        refund.txHash = txHash
        this.log(`refund ${txHash} of ${refund.units} units to ${sender} for transfer ${transfer.id}`)
        this.transition(transfer, "refunded")
      },
      (cause: unknown) => {
        refund.error = cause instanceof Error ? cause.message.split("\n")[0] ?? "error" : String(cause)
        this.log(`refund for transfer ${transfer.id} failed: ${refund.error}`)
      }
    )
    return sent
  }

  /** Sends an event carrying `state` without changing the transfer (a late or replayed event). */
  emitAs(transfer: TransferRecord, state: TransferState): ReadonlyArray<SentEvent> {
    const object = transferResponse(transfer, this.decimals, this.baseUrl(), { state })
    return this.emit("transfer", transfer.id, state, object, { state: [transfer.state, state] }, "emit")
  }

  private transition(transfer: TransferRecord, next: TransferState): ReadonlyArray<SentEvent> {
    const previous = transfer.state
    transfer.state = next
    transfer.updatedAt = nowIso()
    const object = transferResponse(transfer, this.decimals, this.baseUrl())
    const sent = this.emit("transfer", transfer.id, next, object, { state: [previous, next] }, "state_change")
    const following = NEXT_STEP[next]
    if (following !== undefined) {
      this.schedule(() => {
        if (transfer.state === next) this.transition(transfer, following)
      })
    }
    return sent
  }

  private emit(
    category: EventCategory,
    objectId: string,
    status: string | null,
    object: Record<string, unknown>,
    changes: Record<string, readonly [unknown, unknown]>,
    reason: "state_change" | "emit"
  ): ReadonlyArray<SentEvent> {
    const envelope = webhookEnvelope({
      eventId: WebhookSender.newEventId(),
      category,
      objectId,
      status,
      object,
      changes,
      createdAt: nowIso()
    })
    return this.webhooks.send(envelope, reason)
  }

  private schedule(step: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer)
      step()
    }, this.state.stepDelayMs)
    this.timers.add(timer)
  }

  close(): void {
    for (const timer of this.timers) clearTimeout(timer)
    this.timers.clear()
  }
}
