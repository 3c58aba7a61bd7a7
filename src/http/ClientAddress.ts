/**
 * The address of the client a request comes from, as the failed-authentication limit counts it.
 *
 * It is the TCP peer's, unless the peer is one of TRUSTED_PROXIES (a load balancer): then the chain of addresses the
 * proxies forwarded (`X-Forwarded-For`, or RFC 7239 `Forwarded`'s `for=`) is walked from the right, each trusted hop
 * skipped, and the first hop that is not trusted is the client; when every hop is trusted, the leftmost one. Only
 * the right part of a chain was written by trusted proxies (a client can send any left part), so the walk never
 * goes past the first untrusted hop. A header that does not parse, or a hop reached that is not an address
 * (`unknown`, an obfuscated `_name`), gives the peer's address. A proxy appends to one header and passes the other
 * through as the client sent it, so when both are present they must name the same client, else the peer's
 * address is used. Without TRUSTED_PROXIES (the default) the headers are never read.
 */
import { canonicalIp, type Cidr, ipMatcher } from "../base/IpAddresses.ts"

/** The hops of a chain, left to right: each an address (written by `canonicalIp`), or undefined when it is not one. */
type Hops = ReadonlyArray<string | undefined>

const PORT = /^:([0-9]{1,5}|_[A-Za-z0-9._-]+)$/

/** The address of a hop written `1.2.3.4`, `1.2.3.4:port`, `2001:db8::1`, `[2001:db8::1]` or `[2001:db8::1]:port`. */
const hopAddress = (node: string): string | undefined => {
  if (node.startsWith("[")) {
    const end = node.indexOf("]")
    const inside = node.slice(1, end)
    if (end < 0 || !inside.includes(":") || !(end === node.length - 1 || PORT.test(node.slice(end + 1)))) {
      return undefined
    }
    return canonicalIp(inside)
  }
  const bare = canonicalIp(node)
  if (bare !== undefined) return bare
  const colon = node.indexOf(":")
  return colon > 0 && PORT.test(node.slice(colon)) && !node.slice(0, colon).includes(":")
    ? canonicalIp(node.slice(0, colon))
    : undefined
}

/** `X-Forwarded-For: client, proxy1, proxy2` (empty entries skipped). */
export const xForwardedForHops = (header: string): Hops =>
  header.split(",").map((entry) => entry.trim()).filter((entry) => entry !== "").map(hopAddress)

const TOKEN_CHAR = /[!#$%&'*+.^_`|~0-9A-Za-z-]/
/** An unquoted value: token characters, and leniently `:`, `[`, `]` (strictly they need quotes). */
const VALUE_CHAR = /[!#$%&'*+.^_`|~0-9A-Za-z:[\]-]/

/**
 * The `for=` hops of RFC 7239 `Forwarded: for=192.0.2.60;proto=http, for="[2001:db8::17]:4711"`, left to right (an
 * element without `for=` is a hop of unknown address; empty elements are skipped), or undefined when the header
 * does not parse: a pair without `=` or value, an unterminated quote, a second `for=` in one element.
 */
export const forwardedHops = (header: string): Hops | undefined => {
  const hops: Array<string | undefined> = []
  let at = 0
  let element: { pairs: number; node: string | undefined } = { pairs: 0, node: undefined }
  const skipSpace = () => {
    while (header[at] === " " || header[at] === "\t") at++
  }
  const readValue = (): string | undefined => {
    if (header[at] !== "\"") {
      const start = at
      while (at < header.length && VALUE_CHAR.test(header[at]!)) at++
      return at > start ? header.slice(start, at) : undefined
    }
    let value = ""
    for (at++; at < header.length && header[at] !== "\""; at++) {
      if (header[at] === "\\") at++
      value += header[at] ?? ""
    }
    if (at >= header.length) return undefined
    at++
    return value
  }
  for (;;) {
    skipSpace()
    if (at < header.length && header[at] !== ";" && header[at] !== ",") {
      const start = at
      while (at < header.length && TOKEN_CHAR.test(header[at]!)) at++
      const name = header.slice(start, at).toLowerCase()
      if (name === "" || header[at] !== "=") return undefined
      at++
      const value = readValue()
      if (value === undefined) return undefined
      if (name === "for") {
        if (element.node !== undefined) return undefined
        element.node = value
      }
      element.pairs++
      skipSpace()
    }
    const end = at >= header.length
    if (end || header[at] === ",") {
      if (element.pairs > 0) hops.push(element.node === undefined ? undefined : hopAddress(element.node))
      if (end) return hops
      element = { pairs: 0, node: undefined }
    } else if (header[at] !== ";") {
      return undefined
    }
    at++
  }
}

/** The client of a forwarded chain: the first hop from the right that is not trusted; undefined when a hop reached is not an address. */
const clientOfChain = (hops: Hops | undefined, trusted: (address: string) => boolean): string | undefined => {
  if (hops === undefined || hops.length === 0) return undefined
  for (let index = hops.length - 1; index >= 0; index--) {
    const hop = hops[index]
    if (hop === undefined || !trusted(hop)) return hop
  }
  return hops[0]
}

export interface AddressSources {
  /** The TCP peer's address; none through the web-standard handler. */
  readonly peer: string | undefined
  readonly xForwardedFor: string | undefined
  readonly forwarded: string | undefined
}

const present = (header: string | undefined) => header !== undefined && header.trim() !== ""

/** The client address of a request (see the module's comment); `unknown` when there is no peer to go by. */
export const resolveClientAddress = (trusted: (address: string) => boolean, sources: AddressSources): string => {
  if (sources.peer === undefined) return "unknown"
  const peer = canonicalIp(sources.peer) ?? sources.peer
  if (!trusted(peer)) return peer
  const { forwarded, xForwardedFor } = sources
  const fromXff = present(xForwardedFor) ? clientOfChain(xForwardedForHops(xForwardedFor!), trusted) : undefined
  const fromForwarded = present(forwarded) ? clientOfChain(forwardedHops(forwarded!), trusted) : undefined
  if (present(xForwardedFor) && present(forwarded)) return fromXff === fromForwarded ? fromXff ?? peer : peer
  return fromXff ?? fromForwarded ?? peer
}

/** `resolveClientAddress` for a request's peer and headers, through `trustedProxies`. */
export const clientAddressResolver = (trustedProxies: ReadonlyArray<Cidr>) => {
  const trusted = ipMatcher(trustedProxies)
  return (peer: string | undefined, headers: Readonly<Record<string, string | undefined>>): string =>
    resolveClientAddress(trusted, {
      peer,
      xForwardedFor: headers["x-forwarded-for"],
      forwarded: headers["forwarded"]
    })
}
