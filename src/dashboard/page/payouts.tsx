/** Payouts: the list (filters, cursor pages, a payout by id) and one payout's page (its events included). */
import type { Payout } from "@cop-integrations/contracts"
import { useState } from "preact/hooks"
import { get } from "./api.ts"
import { ResourceEvents } from "./events.tsx"
import { createdRange, type Filter, FilterForm, trimmed } from "./filters.tsx"
import { PAYOUT_STATUSES } from "./literals.ts"
import { Pager, useFilteredPages } from "./paging.tsx"
import { Amount, Code, DateTime, Failure, Fields, Heading, Loading, Status, Table, useLoad } from "./parts.tsx"
import { go, href } from "./router.ts"

/** The list's filters, each one query parameter of `GET breb/payouts` (a payout by its id is the form below). */
export const payoutFilters: ReadonlyArray<Filter> = [
  { name: "status", label: "Status", input: { choices: PAYOUT_STATUSES, any: "Any status" }, toQuery: trimmed },
  ...createdRange,
  { name: "txHash", label: "Transaction hash", input: "text", placeholder: "0x…", toQuery: trimmed },
  { name: "breBKeyLast4", label: "Bre-B key, last 4", input: "text", placeholder: "2024", toQuery: trimmed }
]

export const PayoutsView = () => {
  const { apply, cursors, list } = useFilteredPages<Payout>("/breb/payouts")
  const [payoutId, setPayoutId] = useState("")
  return (
    <section aria-labelledby="view-title">
      <Heading>Payouts</Heading>
      <FilterForm filters={payoutFilters} label="Filter payouts" onApply={apply} />
      <form
        class="filters"
        aria-label="Open a payout by id"
        onSubmit={(event) => {
          event.preventDefault()
          if (payoutId.trim() !== "") go(`/payouts/${encodeURIComponent(payoutId.trim())}`)
        }}
      >
        <p>
          <label for="payout-id">Payout id</label>
          <input
            id="payout-id"
            name="payoutId"
            placeholder="po_…"
            value={payoutId}
            onInput={(event) => setPayoutId(event.currentTarget.value)}
          />
        </p>
        <p class="actions">
          <button type="submit">Open payout</button>
        </p>
      </form>
      {list.error !== undefined ? <Failure error={list.error} /> : list.value === undefined ? <Loading /> : (
        <>
          <Table
            caption="Payouts, oldest first"
            rows={list.value.items}
            rowKey={(payout) => payout.payoutId}
            empty="No payouts match."
            columns={[
              { header: "Payout", cell: (p) => <a href={href(`/payouts/${p.payoutId}`)}>{p.payoutId}</a> },
              { header: "Created", cell: (p) => <DateTime iso={p.createdAt} /> },
              { header: "Status", cell: (p) => <Status value={p.status} /> },
              { header: "Destination", cell: (p) => <Amount value={p.destinationCop} unit="COP" /> },
              { header: "Paid", cell: (p) => <Amount value={p.sourceAmount} unit={p.fromToken} /> },
              { header: "Bre-B key", cell: (p) => p.receipt.breBKey ?? "—" }
            ]}
          />
          <Pager cursors={cursors} nextCursor={list.value.nextCursor} label="Payouts" />
        </>
      )}
    </section>
  )
}

export const PayoutView = ({ payoutId }: { readonly payoutId: string }) => {
  const payout = useLoad(() => get<Payout>(`/breb/payouts/${encodeURIComponent(payoutId)}`), [payoutId])
  return (
    <section aria-labelledby="view-title">
      <Heading>Payout {payoutId}</Heading>
      <p>
        <a href={href("/payouts")}>All payouts</a>
      </p>
      {payout.error !== undefined
        ? <Failure error={payout.error} />
        : payout.value === undefined
        ? <Loading />
        : <PayoutDetail payout={payout.value} />}
    </section>
  )
}

const PayoutDetail = ({ payout }: { readonly payout: Payout }) => (
  <>
    <Fields
      rows={[
        ["Status", <Status value={payout.status} />],
        ["Created", <DateTime iso={payout.createdAt} />],
        ["Updated", <DateTime iso={payout.updatedAt} />],
        ["Deposit window ends", <DateTime iso={payout.expiresAt} />],
        ["User", <Code>{payout.userAddress}</Code>],
        ["Destination", <Amount value={payout.destinationCop} unit="COP" />],
        ["Paid by the user", <Amount value={payout.sourceAmount} unit={payout.fromToken} />],
        [
          "Deposit",
          <>
            <Amount value={payout.deposit.amount} unit={payout.deposit.currency} /> to{" "}
            <Code>{payout.deposit.address}</Code>
          </>
        ],
        ["Rate", payout.quote.display ?? "—"],
        ["Deposit transaction", payout.txHash === null ? "—" : <Code>{payout.txHash}</Code>],
        ["Fee transaction", payout.feeTxHash === null ? "—" : <Code>{payout.feeTxHash}</Code>]
      ]}
    />
    <h2>Timeline</h2>
    <ol class="timeline">
      {payout.timeline.map((hop, index) => (
        <li key={index}>
          <Status value={hop.status} /> <DateTime iso={hop.at} /> <span class="muted">from {hop.source}</span>
          {hop.refundStatus === undefined ? null : <span>refund {hop.refundStatus}</span>}
        </li>
      ))}
    </ol>
    <h2>Fees</h2>
    <Table
      caption="Fee legs"
      rows={payout.fees}
      rowKey={(leg) => leg.code}
      empty="No fees."
      columns={[
        { header: "Leg", cell: (leg) => leg.code },
        { header: "Amount", cell: (leg) => <Amount value={leg.amountUsd} unit="USD" /> },
        { header: "To", cell: (leg) => (leg.to === null ? "—" : <Code>{leg.to}</Code>) },
        { header: "Status", cell: (leg) => <Status value={leg.status} /> }
      ]}
    />
    <h2>Receipt</h2>
    <Fields
      rows={[
        ["Title", payout.receipt.title],
        ["Completed", <DateTime iso={payout.receipt.completedAt} />],
        ["Bre-B key", payout.receipt.breBKey ?? "—"],
        ["Beneficiary", payout.receipt.beneficiaryName ?? "—"],
        ["Total paid", <Amount value={payout.receipt.totalPaid.amount} unit={payout.receipt.totalPaid.currency} />],
        [
          "Total received",
          <Amount value={payout.receipt.totalReceived.amount} unit={payout.receipt.totalReceived.currency} />
        ],
        ["Exchange rate", payout.receipt.exchangeRate.display ?? "—"],
        [
          "Commission",
          <>
            <Amount value={payout.receipt.commission.displayAmount} unit={payout.receipt.commission.displayCurrency} />
            {" "}
            ({payout.receipt.commission.note})
          </>
        ]
      ]}
    />
    <h2>Failure</h2>
    {payout.failure === null ? <p class="muted">None.</p> : (
      <Fields
        rows={[
          ["Code", <Code>{payout.failure.code}</Code>],
          ["Category", payout.failure.category],
          ["Retryable", payout.failure.retryable ? "yes" : "no"],
          ["Message", payout.failure.message],
          ["At", <DateTime iso={payout.failure.at} />]
        ]}
      />
    )}
    <h2>Refund</h2>
    {payout.refund === null ? <p class="muted">None.</p> : (
      <Fields
        rows={[
          ["Status", <Status value={payout.refund.status} />],
          ["To", <Code>{payout.refund.to}</Code>],
          ["Amount", <Amount value={payout.refund.amount} unit={payout.refund.token} />],
          ["Retained", <Amount value={payout.refund.retained} unit={payout.refund.token} />],
          ["Transaction", payout.refund.txHash === null ? "—" : <Code>{payout.refund.txHash}</Code>],
          ["At", <DateTime iso={payout.refund.at} />]
        ]}
      />
    )}
    <h2>Events</h2>
    <ResourceEvents resourceId={payout.payoutId} />
  </>
)
