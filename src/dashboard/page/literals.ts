/**
 * The contract's lists of names, put in by the page's build (esbuild's `define`, from the contract's schemas), so the
 * page offers exactly what the API takes without bundling the contract's runtime.
 */
declare const __CONTRACT_LITERALS__: {
  readonly eventTypes: ReadonlyArray<string>
  readonly payoutStatuses: ReadonlyArray<string>
  readonly swapStatuses: ReadonlyArray<string>
  readonly statusClasses: ReadonlyArray<string>
}

export const {
  eventTypes: EVENT_TYPES,
  payoutStatuses: PAYOUT_STATUSES,
  statusClasses: STATUS_CLASSES,
  swapStatuses: SWAP_STATUSES
} = __CONTRACT_LITERALS__
