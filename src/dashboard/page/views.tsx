/**
 * Every view of the dashboard, by route. A view is one entry: its path (`:name` for a parameter), its entry in the
 * navigation if it has one, and what it shows.
 */
import type { VNode } from "preact"
import { ApiKeysView } from "./apiKeys.tsx"
import { EventsView, EventView } from "./events.tsx"
import { PayoutsView, PayoutView } from "./payouts.tsx"
import { RequestLogsView, RequestLogView } from "./requestLogs.tsx"
import { SwapsView, SwapView } from "./swaps.tsx"
import { WebhooksView } from "./webhooks.tsx"

export interface View {
  readonly path: string
  /** Its entry in the navigation, if any; the views under it (`/payouts/:payoutId`) mark it current. */
  readonly nav?: string
  readonly render: (params: Readonly<Record<string, string>>) => VNode
}

export const views: ReadonlyArray<View> = [
  { path: "/payouts", nav: "Payouts", render: () => <PayoutsView /> },
  { path: "/payouts/:payoutId", render: ({ payoutId }) => <PayoutView payoutId={payoutId!} /> },
  { path: "/swaps", nav: "Swaps", render: () => <SwapsView /> },
  { path: "/swaps/:intentId", render: ({ intentId }) => <SwapView intentId={intentId!} /> },
  { path: "/events", nav: "Events", render: () => <EventsView /> },
  { path: "/events/:eventId", render: ({ eventId }) => <EventView eventId={eventId!} /> },
  { path: "/webhooks", nav: "Webhook endpoints", render: () => <WebhooksView /> },
  { path: "/request-logs", nav: "Request logs", render: () => <RequestLogsView /> },
  { path: "/request-logs/:requestId", render: ({ requestId }) => <RequestLogView requestId={requestId!} /> },
  { path: "/api-keys", nav: "API keys", render: () => <ApiKeysView /> }
]

export const DEFAULT_ROUTE = "/payouts"
