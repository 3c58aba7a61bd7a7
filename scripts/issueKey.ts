/** Issuing a key for an integration by name, as the keys CLI (scripts/keys.ts) and `npm run live:local` do it. */
import type { ApiScope } from "@cop-integrations/contracts"
import { Effect, Option } from "effect"
import type { KeyKind } from "../src/auth/ApiKey.ts"
import { ApiKeyRepo } from "../src/auth/ApiKeyRepo.ts"
import { IntegrationRepo } from "../src/auth/IntegrationRepo.ts"

/**
 * A new key of `kind` for the integration named `name`, created first when missing and `create` is set; none when
 * it is missing and `create` is not (a misspelt name must not create a tenant).
 */
export const issueKeyFor = (options: {
  readonly name: string
  readonly kind: KeyKind
  readonly expiresAt: Date | null
  /** A restricted key's scopes; null or absent: a full key. */
  readonly scopes?: ReadonlyArray<ApiScope> | null
  /** The CIDRs the key is accepted from; null or absent: any address. */
  readonly allowedIps?: ReadonlyArray<string> | null
  readonly create: boolean
}) =>
  Effect.gen(function*() {
    const integrations = yield* IntegrationRepo
    const existing = yield* integrations.findByName(options.name)
    if (Option.isNone(existing) && !options.create) return Option.none()
    const integration = Option.isSome(existing) ? existing.value : yield* integrations.ensure(options.name)
    const issued = yield* (yield* ApiKeyRepo).issue(
      integration.id,
      options.kind,
      options.expiresAt,
      { scopes: options.scopes ?? null, allowedIps: options.allowedIps ?? null }
    )
    return Option.some({ integration, issued })
  })
