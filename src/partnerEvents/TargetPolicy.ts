import { BlockList, isIP } from "node:net"
import { Option, Result } from "effect"

type Subnets = ReadonlyArray<readonly [network: string, prefix: number]>

const blockList = (ipv4: Subnets, ipv6: Subnets) => {
  const list = new BlockList()
  for (const [network, prefix] of ipv4) list.addSubnet(network, prefix, "ipv4")
  for (const [network, prefix] of ipv6) list.addSubnet(network, prefix, "ipv6")
  return list
}

/** Address ranges a webhook may never reach in live mode, by the reason given when one is refused. */
const FORBIDDEN: ReadonlyArray<readonly [string, BlockList]> = [
  ["loopback", blockList([["127.0.0.0", 8]], [["::1", 128]])],
  [
    "private",
    blockList([["10.0.0.0", 8], ["172.16.0.0", 12], ["192.168.0.0", 16], ["100.64.0.0", 10]], [
      ["fc00::", 7], // unique-local
      ["fec0::", 10], // site-local (deprecated, still routed inside some networks)
      ["64:ff9b:1::", 48] // NAT64 for local use: whatever IPv4 address it carries, it is never global
    ])
  ],
  ["link-local or cloud metadata", blockList([["169.254.0.0", 16]], [["fe80::", 10]])],
  [
    "reserved or not routable",
    blockList([
      ["0.0.0.0", 8],
      ["192.0.0.0", 24],
      ["192.0.2.0", 24],
      ["198.18.0.0", 15],
      ["198.51.100.0", 24],
      ["203.0.113.0", 24],
      ["224.0.0.0", 4],
      ["240.0.0.0", 4]
    ], [
      ["::", 128], // unspecified
      ["ff00::", 8], // multicast
      ["2001:db8::", 32], // documentation
      ["3fff::", 20], // documentation
      ["100::", 64], // discard-only
      ["2001:2::", 48] // benchmarking
    ])
  ]
]

/** `…:a.b.c.d` with its dotted IPv4 tail written as the two hex groups it stands for. */
const hexTail = (address: string) =>
  address.replace(
    /(\d+)\.(\d+)\.(\d+)\.(\d+)$/,
    (_, a: string, b: string, c: string, d: string) =>
      `${((Number(a) << 8) | Number(b)).toString(16)}:${((Number(c) << 8) | Number(d)).toString(16)}`
  )

/** The 16 bytes of an IPv6 address `isIP` accepted (hex groups, at most one `::`, an optional dotted IPv4 tail). */
const ipv6Bytes = (address: string): Uint8Array => {
  const groups = (part: string | undefined) => (part === undefined || part === "" ? [] : part.split(":"))
  // `isIP` accepted it, so it has at most one `::`: one or two parts.
  const [head, tail] = hexTail(address).split("::").map(groups) as [Array<string>, Array<string> | undefined]
  const words = [...head, ...Array<string>(8 - head.length - (tail?.length ?? 0)).fill("0"), ...(tail ?? [])]
  const bytes = new Uint8Array(16)
  words.forEach((word, i) => {
    const value = parseInt(word, 16)
    bytes[2 * i] = value >> 8
    bytes[2 * i + 1] = value & 255
  })
  return bytes
}

const ipv4At = (bytes: Uint8Array, offset: number, mask = 0) =>
  Array.from(bytes.subarray(offset, offset + 4), (byte) => byte ^ mask).join(".")

/**
 * The IPv6 forms that reach an IPv4 host, and where that host's address sits in them: a connection to one goes to
 * (or through) that IPv4 address, so it is judged by the IPv4 rules.
 */
const EMBEDDINGS: ReadonlyArray<
  { readonly prefix: Uint8Array; readonly ipv4: (bytes: Uint8Array) => ReadonlyArray<string> }
> = [
  { prefix: ipv6Bytes("::").subarray(0, 12), ipv4: (bytes) => [ipv4At(bytes, 12)] }, // IPv4-compatible ::a.b.c.d
  { prefix: ipv6Bytes("::ffff:0:0").subarray(0, 12), ipv4: (bytes) => [ipv4At(bytes, 12)] }, // IPv4-mapped
  { prefix: ipv6Bytes("::ffff:0:0:0").subarray(0, 12), ipv4: (bytes) => [ipv4At(bytes, 12)] }, // IPv4-translated
  { prefix: ipv6Bytes("64:ff9b::").subarray(0, 12), ipv4: (bytes) => [ipv4At(bytes, 12)] }, // NAT64
  { prefix: ipv6Bytes("2002::").subarray(0, 2), ipv4: (bytes) => [ipv4At(bytes, 2)] }, // 6to4
  // Teredo: the server's address, and the client's (stored with every bit inverted)
  { prefix: ipv6Bytes("2001::").subarray(0, 4), ipv4: (bytes) => [ipv4At(bytes, 4), ipv4At(bytes, 12, 255)] }
]

const embeddedIpv4 = (bytes: Uint8Array): Option.Option<ReadonlyArray<string>> =>
  Option.map(
    Option.fromNullishOr(EMBEDDINGS.find(({ prefix }) => prefix.every((byte, i) => bytes[i] === byte))),
    (embedding) => embedding.ipv4(bytes)
  )

/** Global unicast is 2000::/3; every other IPv6 address (but the forms above) is reserved or unassigned. */
const isGlobalUnicast = (bytes: Uint8Array) => ((bytes[0] ?? 0) & 0xe0) === 0x20

/** Why a webhook may not be sent to `address` (an IP literal) in live mode; none when it is a public address. */
export const forbiddenAddress = (address: string): Option.Option<string> => {
  const bare = address.replace(/^\[|\]$/g, "").replace(/%.*$/, "")
  const family = isIP(bare)
  if (family === 0) return Option.some("not an IP address")
  const hit = FORBIDDEN.find(([, list]) => list.check(bare, family === 4 ? "ipv4" : "ipv6"))
  if (hit !== undefined) return Option.some(hit[0])
  if (family === 4) return Option.none()
  const bytes = ipv6Bytes(bare)
  return Option.match(embeddedIpv4(bytes), {
    onSome: (hosts) => Option.firstSomeOf(hosts.map(forbiddenAddress)),
    onNone: () => (isGlobalUnicast(bytes) ? Option.none() : Option.some("reserved or not routable"))
  })
}

const LOCAL_NAMES = /(^|\.)(localhost|localdomain|internal|local|home\.arpa)$/i

export interface UrlRules {
  /** Live: https only, and only public targets. Mock: http and loopback too, so local development works. */
  readonly strict: boolean
}

/**
 * The checks that need no DNS: an absolute http(s) URL without credentials; in strict mode `https`, no IP literal
 * or local name that points inside the network. Failure: the refusal, worded for a 400 on `url`.
 */
export const checkUrl = (text: string, rules: UrlRules): Result.Result<URL, string> => {
  if (!URL.canParse(text)) return Result.fail("must be an absolute URL, e.g. https://example.com/webhooks")
  const url = new URL(text)
  if (url.protocol !== "https:" && url.protocol !== "http:") return Result.fail("must use https")
  if (url.username !== "" || url.password !== "") return Result.fail("must not contain credentials")
  if (url.hash !== "") return Result.fail("must not contain a fragment")
  if (!rules.strict) return Result.succeed(url)
  if (url.protocol !== "https:") return Result.fail("must use https in live mode")
  const host = url.hostname.replace(/^\[|\]$/g, "")
  if (isIP(host) !== 0) {
    const reason = forbiddenAddress(host)
    return Option.isSome(reason)
      ? Result.fail(`must not point to a ${reason.value} address (${host})`)
      : Result.succeed(url)
  }
  if (!host.includes(".") || LOCAL_NAMES.test(host)) return Result.fail(`must name a public host (${host} is local)`)
  return Result.succeed(url)
}
