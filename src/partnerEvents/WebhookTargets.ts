import { BadRequest } from "@cop-integrations/contracts"
import type { LookupFunction } from "node:net"
import { lookup as dnsLookup } from "node:dns/promises"
import { Context, Effect, Layer, Option, Result } from "effect"
import { checkUrl, forbiddenAddress, type UrlRules } from "./TargetPolicy.ts"

export interface ResolvedAddress {
  readonly address: string
  readonly family: number
}

/** Every address a host name resolves to (node's resolver in production; tests inject their own). */
export type Resolver = (hostname: string) => Promise<ReadonlyArray<ResolvedAddress>>

/** Where webhooks may go: checked at registration, and again, after DNS resolution, for every connection. */
export class WebhookTargets extends Context.Service<WebhookTargets, {
  /** The URL, or a 400 naming the rule it breaks. */
  readonly check: (url: string) => Effect.Effect<URL, BadRequest>
  /** Checks without DNS, at delivery time (an endpoint registered under other rules is refused too). */
  readonly checkStatic: (url: string) => Result.Result<URL, string>
  /** The `lookup` every delivery connects through: it refuses forbidden addresses (none: the system resolver). */
  readonly lookup: LookupFunction | undefined
}>()("WebhookTargets") {}

const badUrl = (reason: string) => new BadRequest({ error: `url: ${reason}` })

const refusal = (hostname: string, addresses: ReadonlyArray<ResolvedAddress>): Option.Option<string> => {
  if (addresses.length === 0) return Option.some(`${hostname} does not resolve`)
  for (const { address } of addresses) {
    const reason = forbiddenAddress(address)
    if (Option.isSome(reason)) return Option.some(`${hostname} resolves to a ${reason.value} address (${address})`)
  }
  return Option.none()
}

/**
 * A node `lookup` that resolves with `resolve` and refuses to connect when any address is forbidden, so the
 * connection can only go to an address that was checked (no window for DNS rebinding between check and connect).
 */
export const guardedLookup = (resolve: Resolver): LookupFunction => (hostname, options, callback) => {
  resolve(hostname).then(
    (addresses) => {
      const refused = refusal(hostname, addresses)
      if (Option.isSome(refused)) {
        return callback(Object.assign(new Error(`refused: ${refused.value}`), { code: "EWEBHOOKTARGET" }), "", 4)
      }
      // Node types the callback by the `all` option it was called with, which TypeScript cannot narrow from here.
      if (options.all === true) {
        return (callback as (error: null, all: ReadonlyArray<ResolvedAddress>) => void)(null, addresses)
      }
      // `refusal` refused an empty answer above, so the resolver's list has a first address.
      const first = addresses[0] as ResolvedAddress
      callback(null, first.address, first.family)
    },
    (error: NodeJS.ErrnoException) => callback(error, "", 4)
  )
}

const systemResolver: Resolver = (hostname) => dnsLookup(hostname, { all: true, order: "verbatim" })

const rules = (strict: boolean): UrlRules => ({ strict })

/** Live mode: https to public addresses only, checked at registration and at every connection. */
export const WebhookTargetsStrict = (resolve: Resolver = systemResolver) =>
  Layer.succeed(WebhookTargets, {
    checkStatic: (url) => checkUrl(url, rules(true)),
    check: (text) =>
      Result.match(checkUrl(text, rules(true)), {
        onFailure: (reason) => Effect.fail(badUrl(reason)),
        onSuccess: (url) =>
          Effect.tryPromise(() => resolve(url.hostname.replace(/^\[|\]$/g, ""))).pipe(
            Effect.orElseSucceed((): ReadonlyArray<ResolvedAddress> => []),
            Effect.flatMap((addresses) =>
              Option.match(refusal(url.hostname, addresses), {
                onNone: () => Effect.succeed(url),
                onSome: (reason) => Effect.fail(badUrl(reason))
              })
            )
          )
      }),
    lookup: guardedLookup(resolve)
  })

/** Mock mode: http and loopback allowed, so a receiver on a developer's machine works. */
export const WebhookTargetsOpen = Layer.succeed(WebhookTargets, {
  checkStatic: (url) => checkUrl(url, rules(false)),
  check: (text) =>
    Result.match(checkUrl(text, rules(false)), {
      onFailure: (reason) => Effect.fail(badUrl(reason)),
      onSuccess: Effect.succeed
    }),
  lookup: undefined
})
