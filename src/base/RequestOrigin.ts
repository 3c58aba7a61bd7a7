import { Context } from "effect"

/**
 * Where the request being served comes from, for what records it (the audit log): its request id and the client's
 * address through the trusted proxies, worked out only when asked. Outside a request (the keys CLI, the worker),
 * neither.
 */
export const RequestOrigin = Context.Reference<{
  readonly requestId: string | null
  readonly address: () => string | null
}>("RequestOrigin", { defaultValue: () => ({ requestId: null, address: () => null }) })
