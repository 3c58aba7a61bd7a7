import { BlockList, isIP } from "node:net"
import { Either, Option } from "effect"

const named = (list: BlockList, type: "ipv4" | "ipv6", subnets: ReadonlyArray<readonly [string, number]>) => {
  for (const [network, prefix] of subnets) list.addSubnet(network, prefix, type)
  return list
}

/** Address ranges a webhook may never reach in live mode, by the reason given when one is refused. */
const FORBIDDEN: ReadonlyArray<readonly [string, BlockList]> = [
  ["loopback", named(named(new BlockList(), "ipv4", [["127.0.0.0", 8]]), "ipv6", [["::1", 128]])],
  [
    "private",
    named(named(new BlockList(), "ipv4", [["10.0.0.0", 8], ["172.16.0.0", 12], ["192.168.0.0", 16], ["100.64.0.0", 10]]), "ipv6", [
      ["fc00::", 7]
    ])
  ],
  ["link-local or cloud metadata", named(named(new BlockList(), "ipv4", [["169.254.0.0", 16]]), "ipv6", [["fe80::", 10]])],
  [
    "reserved or not routable",
    named(
      named(new BlockList(), "ipv4", [
        ["0.0.0.0", 8],
        ["192.0.0.0", 24],
        ["192.0.2.0", 24],
        ["198.18.0.0", 15],
        ["198.51.100.0", 24],
        ["203.0.113.0", 24],
        ["224.0.0.0", 4],
        ["240.0.0.0", 4]
      ]),
      "ipv6",
      [["::", 128], ["ff00::", 8], ["2001:db8::", 32], ["100::", 64]]
    )
  ]
]

/** `::ffff:a.b.c.d` and NAT64 `64:ff9b::a.b.c.d` reach an IPv4 host: judge that host. */
const embeddedIpv4 = (address: string): Option.Option<string> => {
  const dotted = /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  if (dotted?.[1] !== undefined) return Option.some(dotted[1])
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address)
  if (hex?.[1] === undefined || hex[2] === undefined) return Option.none()
  const high = parseInt(hex[1], 16)
  const low = parseInt(hex[2], 16)
  return Option.some(`${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`)
}

/** Why a webhook may not be sent to `address` (an IP literal) in live mode; none when it is a public address. */
export const forbiddenAddress = (address: string): Option.Option<string> => {
  const bare = address.replace(/^\[|\]$/g, "").replace(/%.*$/, "")
  const family = isIP(bare)
  if (family === 0) return Option.some("not an IP address")
  const mapped = family === 6 ? embeddedIpv4(bare) : Option.none()
  if (Option.isSome(mapped)) return forbiddenAddress(mapped.value)
  const type = family === 4 ? "ipv4" : "ipv6"
  const hit = FORBIDDEN.find(([, list]) => list.check(bare, type))
  return hit === undefined ? Option.none() : Option.some(hit[0])
}

const LOCAL_NAMES = /(^|\.)(localhost|localdomain|internal|local|home\.arpa)$/i

export interface UrlRules {
  /** Live: https only, and only public targets. Mock: http and loopback too, so local development works. */
  readonly strict: boolean
}

/**
 * The checks that need no DNS: an absolute http(s) URL without credentials; in strict mode `https`, no IP literal
 * or local name that points inside the network. Left: the refusal, worded for a 400 on `url`.
 */
export const checkUrl = (text: string, rules: UrlRules): Either.Either<URL, string> => {
  if (!URL.canParse(text)) return Either.left("must be an absolute URL, e.g. https://example.com/webhooks")
  const url = new URL(text)
  if (url.protocol !== "https:" && url.protocol !== "http:") return Either.left("must use https")
  if (url.username !== "" || url.password !== "") return Either.left("must not contain credentials")
  if (url.hash !== "") return Either.left("must not contain a fragment")
  if (!rules.strict) return Either.right(url)
  if (url.protocol !== "https:") return Either.left("must use https in live mode")
  const host = url.hostname.replace(/^\[|\]$/g, "")
  if (isIP(host) !== 0) {
    const reason = forbiddenAddress(host)
    return Option.isSome(reason) ? Either.left(`must not point to a ${reason.value} address (${host})`) : Either.right(url)
  }
  if (!host.includes(".") || LOCAL_NAMES.test(host)) return Either.left(`must name a public host (${host} is local)`)
  return Either.right(url)
}
