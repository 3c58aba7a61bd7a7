/** The contract's event types, put in by the page's build (esbuild's `define`, from the contract's EventType). */
declare const __EVENT_TYPES__: ReadonlyArray<string>

export const EVENT_TYPES: ReadonlyArray<string> = __EVENT_TYPES__
