/** Swaps of the COP stablecoin: the list (filters, cursor pages) and one swap. */
import type { SwapIntent } from "@cop-integrations/contracts"
import { get } from "./api.ts"
import { createdRange, type Filter, FilterForm, trimmed } from "./filters.tsx"
import { SWAP_STATUSES } from "./literals.ts"
import { Pager, useFilteredPages } from "./paging.tsx"
import { Amount, Code, DateTime, Failure, Fields, Heading, Loading, Status, Table, useLoad } from "./parts.tsx"
import { href } from "./router.ts"

/** The list's filters, each one query parameter of `GET swaps`. */
const swapFilters: ReadonlyArray<Filter> = [
  { name: "status", label: "Status", input: { choices: SWAP_STATUSES, any: "Any status" }, toQuery: trimmed },
  ...createdRange
]

export const SwapsView = () => {
  const { apply, cursors, list } = useFilteredPages<SwapIntent>("/swaps")
  return (
    <section aria-labelledby="view-title">
      <Heading>Swaps</Heading>
      <FilterForm filters={swapFilters} label="Filter swaps" onApply={apply} />
      {list.error !== undefined ? <Failure error={list.error} /> : list.value === undefined ? <Loading /> : (
        <>
          <Table
            caption="Swaps, oldest first"
            rows={list.value.items}
            rowKey={(swap) => swap.intentId}
            empty="No swaps match."
            columns={[
              { header: "Swap", cell: (s) => <a href={href(`/swaps/${s.intentId}`)}>{s.intentId}</a> },
              { header: "Created", cell: (s) => <DateTime iso={s.createdAt} /> },
              { header: "Status", cell: (s) => <Status value={s.status} /> },
              { header: "In", cell: (s) => <Amount value={s.amountIn} unit={s.fromToken} /> },
              { header: "Expected out", cell: (s) => <Amount value={s.expectedAmountOut} unit={s.toToken} /> }
            ]}
          />
          <Pager cursors={cursors} nextCursor={list.value.nextCursor} label="Swaps" />
        </>
      )}
    </section>
  )
}

export const SwapView = ({ intentId }: { readonly intentId: string }) => {
  const swap = useLoad(() => get<SwapIntent>(`/swaps/${encodeURIComponent(intentId)}`), [intentId])
  const s = swap.value
  return (
    <section aria-labelledby="view-title">
      <Heading>Swap {intentId}</Heading>
      <p>
        <a href={href("/swaps")}>All swaps</a>
      </p>
      {swap.error !== undefined ? <Failure error={swap.error} /> : s === undefined ? <Loading /> : (
        <>
          <Fields
            rows={[
              ["Status", <Status value={s.status} />],
              ["Created", <DateTime iso={s.createdAt} />],
              ["Updated", <DateTime iso={s.updatedAt} />],
              ["Expires", <DateTime iso={s.expiresAt} />],
              ["User", <Code>{s.userAddress}</Code>],
              ["In", <Amount value={s.amountIn} unit={s.fromToken} />],
              ["Expected out", <Amount value={s.expectedAmountOut} unit={s.toToken} />],
              ["Minimum out", <Amount value={s.minAmountOut} unit={s.toToken} />],
              ["Slippage", `${s.slippageBps} bps`],
              ["Transaction", s.txHash === null ? "—" : <Code>{s.txHash}</Code>]
            ]}
          />
          <h2>Fees</h2>
          <Table
            caption="Fee legs"
            rows={s.fees}
            rowKey={(leg) => leg.code}
            empty="No fees."
            columns={[
              { header: "Leg", cell: (leg) => leg.code },
              { header: "Amount", cell: (leg) => <Amount value={leg.amountUsd} unit="USD" /> },
              { header: "Status", cell: (leg) => <Status value={leg.status} /> }
            ]}
          />
        </>
      )}
    </section>
  )
}
