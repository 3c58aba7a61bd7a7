import { BlockList, isIP, SocketAddress } from "node:net"
import { Result } from "effect"

export interface Cidr {
  /** As written back: `network/prefix`, the network in the form of `canonicalIp`. */
  readonly text: string
  readonly family: "ipv4" | "ipv6"
  readonly network: string
  readonly prefix: number
}

const familyOf = (text: string) => {
  const version = isIP(text)
  return version === 4 ? "ipv4" : version === 6 ? "ipv6" : undefined
}

const IPV4_MAPPED = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/

/**
 * An IP address written one way, so one host is one key wherever it is counted: IPv4 dotted (an IPv4-mapped IPv6
 * address such as `::ffff:10.0.0.1` becomes `10.0.0.1`), IPv6 compressed in lower case. undefined when `text` is not
 * an address (no brackets, no port; IPv4 in four decimal parts without leading zeros).
 */
export const canonicalIp = (text: string): string | undefined => {
  const known = canonicalForms.get(text)
  if (known !== undefined || canonicalForms.has(text)) return known
  const canonical = canonicalFormOf(text)
  // Bounded: emptied when full (headers a client sends can name any number of addresses).
  if (canonicalForms.size >= MAX_CANONICAL_FORMS) canonicalForms.clear()
  canonicalForms.set(text, canonical)
  return canonical
}

/** Every request asks for its peer's form (the request log, the failed-authentication limit): one parse per peer. */
const canonicalForms = new Map<string, string | undefined>()
const MAX_CANONICAL_FORMS = 4096

const canonicalFormOf = (text: string): string | undefined => {
  const family = familyOf(text)
  if (family === undefined) return undefined
  const { address } = new SocketAddress({ address: text, family })
  return IPV4_MAPPED.exec(address)?.[1] ?? address
}

const PREFIX = /^(0|[1-9][0-9]{0,2})$/

const parseCidr = (text: string): Cidr | undefined => {
  const [address = "", prefixText, ...rest] = text.split("/")
  const network = canonicalIp(address)
  if (network === undefined || rest.length > 0) return undefined
  const family = familyOf(network)!
  const longest = family === "ipv4" ? 32 : 128
  if (prefixText !== undefined && !PREFIX.test(prefixText)) return undefined
  const prefix = prefixText === undefined ? longest : Number(prefixText)
  return prefix > longest ? undefined : { text: `${network}/${prefix}`, family, network, prefix }
}

/**
 * The CIDRs of a comma-separated list (`10.0.0.0/8, 2001:db8::/32`; a single address is its own /32 or /128; blank
 * entries are skipped), or the first entry that is not one.
 */
export const parseCidrList = (list: string): Result.Result<ReadonlyArray<Cidr>, string> => {
  const cidrs: Array<Cidr> = []
  for (const entry of list.split(",").map((item) => item.trim()).filter((item) => item !== "")) {
    const cidr = parseCidr(entry)
    if (cidr === undefined) return Result.fail(entry)
    cidrs.push(cidr)
  }
  return Result.succeed(cidrs)
}

/**
 * Whether an address is in one of `cidrs`. An IPv4 range also holds the IPv4-mapped IPv6 form of its addresses (a
 * dual-stack socket reports IPv4 peers that way). Anything that is not an address is in none.
 */
export const ipMatcher = (cidrs: ReadonlyArray<Cidr>): (address: string) => boolean => {
  if (cidrs.length === 0) return () => false
  const ranges = new BlockList()
  for (const { family, network, prefix } of cidrs) ranges.addSubnet(network, prefix, family)
  return (address) => {
    const family = familyOf(address)
    return family !== undefined && ranges.check(address, family)
  }
}
