/** What the API and control routes share. */
import type { DepositWatcher } from "./depositWatcher.ts"
import type { Lifecycle } from "./lifecycle.ts"
import type { ReturnPolicyStrategy, SimulatorState } from "./state.ts"
import type { WebhookSender } from "./webhooks.ts"

export interface SimulatorContext {
  readonly state: SimulatorState
  readonly lifecycle: Lifecycle
  readonly webhooks: WebhookSender
  readonly watcher: DepositWatcher | null
  readonly apiKey: string
  /** Decimals of the deposit token (read onchain when a node is configured). */
  readonly decimals: number
  readonly baseUrl: () => string
  /** Offramp minimum in COP ("0" turns the check off). */
  readonly minimumCop: string
  readonly requireApprovedCustomer: boolean
  /** How long a request hung by the timeout switch waits before the simulator itself gives up (504). */
  readonly hangTimeoutMs: number
  /** Requests currently hung by the timeout switch; ended on close. */
  readonly hangs: Set<() => void>
  /** The developer's crypto return policy; null: none. */
  readonly returnPolicy: ReturnPolicyStrategy | null
  readonly log: (line: string) => void
}

/** A route's answer before it is sent (and, for POST, stored for idempotent replay). */
export interface Answer {
  readonly status: number
  readonly body: unknown
}
