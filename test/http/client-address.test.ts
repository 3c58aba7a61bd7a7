/**
 * The client address behind trusted proxies: `X-Forwarded-For` and `Forwarded` (RFC 7239) are read only when the TCP
 * peer is one of TRUSTED_PROXIES, walked from the right past trusted hops; the first hop that is not trusted is the
 * client. Anything that does not parse gives the peer's address, never an address of the sender's choosing.
 */
import { ConfigProvider, Effect, Exit, Option, Result } from "effect"
import { describe, expect, it } from "vitest"
import { canonicalIp, type Cidr, ipMatcher, parseCidrList } from "../../src/base/IpAddresses.ts"
import { startupFailureLine } from "../../src/base/StartupFailure.ts"
import { AppConfigShape } from "../../src/config/Config.ts"
import { forwardedHops, resolveClientAddress, xForwardedForHops } from "../../src/http/ClientAddress.ts"

const cidrs = (list: string): ReadonlyArray<Cidr> => Result.getOrThrow(parseCidrList(list))

/** The client address seen through `trusted` proxies from `peer` with these headers. */
const clientBehind = (
  trusted: string,
  peer: string | undefined,
  headers: { readonly xff?: string; readonly forwarded?: string }
) =>
  resolveClientAddress(ipMatcher(cidrs(trusted)), {
    peer,
    xForwardedFor: headers.xff,
    forwarded: headers.forwarded
  })

const PROXIES = "10.0.0.0/8, fd00::/8"

describe("IP addresses and CIDRs", () => {
  it("writes an address one way: IPv4-mapped IPv6 as IPv4, IPv6 compressed in lower case", () => {
    expect(canonicalIp("203.0.113.7")).toBe("203.0.113.7")
    expect(canonicalIp("::ffff:203.0.113.7")).toBe("203.0.113.7")
    expect(canonicalIp("::FFFF:cb00:7107")).toBe("203.0.113.7")
    expect(canonicalIp("2001:DB8:0:0::1")).toBe("2001:db8::1")
    for (const bad of ["", "unknown", "256.1.1.1", "01.2.3.4", "1.2.3", "1.2.3.4 ", "[::1]", "1.2.3.4:80", "::g"]) {
      expect(canonicalIp(bad), bad).toBeUndefined()
    }
  })

  it("gives the same form every time, also past the number of forms it remembers (4,096)", () => {
    const asked = ["::FFFF:cb00:7107", "2001:DB8:0:0::1", "01.2.3.4"]
    const first = asked.map(canonicalIp)
    expect(first).toEqual(["203.0.113.7", "2001:db8::1", undefined])
    for (let index = 0; index < 5_000; index++) {
      expect(canonicalIp(`2001:DB8::${(index + 1).toString(16)}`)).toBe(`2001:db8::${(index + 1).toString(16)}`)
      if (index % 1_000 === 0) expect(asked.map(canonicalIp)).toEqual(first)
    }
    expect(asked.map(canonicalIp)).toEqual(first)
  })

  it("reads a comma-separated list of CIDRs (IPv4, IPv6, or single addresses); blank is none", () => {
    expect(cidrs("")).toEqual([])
    expect(cidrs("  ")).toEqual([])
    expect(cidrs("10.0.0.0/8, 192.168.1.7 ,2001:db8::/32,::1").map((cidr) => cidr.text)).toEqual([
      "10.0.0.0/8",
      "192.168.1.7/32",
      "2001:db8::/32",
      "::1/128"
    ])
    for (
      const bad of ["10.0.0.0/33", "::/129", "10.0.0.0/", "10.0.0.0/8/8", "10.0.0.0/+8", "10.0.0/8", "lb.internal"]
    ) {
      expect(parseCidrList(`127.0.0.1/8, ${bad}`), bad).toEqual(Result.fail(bad))
    }
  })

  it("matches IPv4 ranges against IPv4-mapped IPv6 addresses too", () => {
    const trusted = ipMatcher(cidrs("127.0.0.0/8, 2001:db8::/32"))
    expect(trusted("127.9.9.9")).toBe(true)
    expect(trusted("::ffff:127.0.0.1")).toBe(true)
    expect(trusted("2001:db8:1::7")).toBe(true)
    expect(trusted("128.0.0.1")).toBe(false)
    expect(trusted("::1")).toBe(false)
    expect(trusted("not an address")).toBe(false)
  })
})

describe("TRUSTED_PROXIES at start-up", () => {
  const read = (env: Record<string, string>) =>
    Effect.runSyncExit(
      Effect.provideService(AppConfigShape, ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env }))
    )

  it("is off by default", () => {
    const config = read({})
    expect(Exit.isSuccess(config) && config.value.trustedProxies).toEqual([])
  })

  it("takes CIDRs", () => {
    const config = read({ TRUSTED_PROXIES: "10.0.0.0/8,fd00::/8" })
    expect(Exit.isSuccess(config) && config.value.trustedProxies.map((cidr) => cidr.text)).toEqual([
      "10.0.0.0/8",
      "fd00::/8"
    ])
  })

  it("refuses a list with one bad entry, naming the variable and the entry", () => {
    const config = read({ TRUSTED_PROXIES: "10.0.0.0/8, 10.0.0.0/33" })
    expect(Exit.isFailure(config)).toBe(true)
    const line = Exit.isFailure(config) ? startupFailureLine(config.cause) : Option.none()
    expect(Option.getOrUndefined(line)).toMatch(/^configuration error: TRUSTED_PROXIES: .*"10\.0\.0\.0\/33"/)
  })
})

describe("the client address", () => {
  it("is the peer's when no proxy is trusted, or the peer is not one: the headers are ignored", () => {
    expect(clientBehind("", "203.0.113.7", { xff: "198.51.100.1", forwarded: "for=198.51.100.1" })).toBe(
      "203.0.113.7"
    )
    expect(clientBehind(PROXIES, "203.0.113.7", { xff: "198.51.100.1" })).toBe("203.0.113.7")
    expect(clientBehind(PROXIES, "203.0.113.7", { forwarded: "for=198.51.100.1" })).toBe("203.0.113.7")
  })

  it("is the peer's, written one way, when nothing was forwarded", () => {
    expect(clientBehind(PROXIES, "::ffff:10.0.0.1", {})).toBe("10.0.0.1")
    expect(clientBehind(PROXIES, "::ffff:203.0.113.7", {})).toBe("203.0.113.7")
    expect(clientBehind(PROXIES, undefined, { xff: "198.51.100.1" })).toBe("unknown")
  })

  it("is the first untrusted hop of X-Forwarded-For from the right, through a trusted peer", () => {
    expect(clientBehind(PROXIES, "10.0.0.1", { xff: "203.0.113.7" })).toBe("203.0.113.7")
    // the left part is whatever the client sent: never read past the first untrusted hop
    expect(clientBehind(PROXIES, "10.0.0.1", { xff: "198.51.100.1, 203.0.113.7, 10.0.0.2" })).toBe("203.0.113.7")
    expect(clientBehind(PROXIES, "10.0.0.1", { xff: "garbage, 203.0.113.7" })).toBe("203.0.113.7")
    // IPv4-mapped peer, IPv6 hops, ports, brackets
    expect(clientBehind(PROXIES, "::ffff:10.0.0.1", { xff: "::ffff:203.0.113.7" })).toBe("203.0.113.7")
    expect(clientBehind(PROXIES, "fd00::1", { xff: "2001:DB8::7, fd00::2" })).toBe("2001:db8::7")
    expect(clientBehind(PROXIES, "10.0.0.1", { xff: "203.0.113.7:52811" })).toBe("203.0.113.7")
    expect(clientBehind(PROXIES, "10.0.0.1", { xff: "[2001:db8::7]:443" })).toBe("2001:db8::7")
    // several header lines, as Node joins them
    expect(clientBehind(PROXIES, "10.0.0.1", { xff: "203.0.113.7, 10.0.0.3, 10.0.0.2" })).toBe("203.0.113.7")
  })

  it("is the leftmost hop when every hop is trusted (a caller inside the proxies' network)", () => {
    expect(clientBehind(PROXIES, "10.0.0.1", { xff: "10.0.0.3, 10.0.0.2" })).toBe("10.0.0.3")
  })

  it("reads RFC 7239 Forwarded: quotes, ports, IPv6 brackets, other parameters, several elements", () => {
    expect(clientBehind(PROXIES, "10.0.0.1", { forwarded: "for=192.0.2.60;proto=http;by=203.0.113.43" })).toBe(
      "192.0.2.60"
    )
    expect(clientBehind(PROXIES, "10.0.0.1", { forwarded: `For="[2001:db8:cafe::17]:4711"` })).toBe(
      "2001:db8:cafe::17"
    )
    expect(clientBehind(PROXIES, "10.0.0.1", { forwarded: `for="192.0.2.60:8080"` })).toBe("192.0.2.60")
    expect(
      clientBehind(PROXIES, "10.0.0.1", {
        forwarded: `for=198.51.100.1, for="[2001:db8:cafe::17]";proto=https, for=10.0.0.2;by="[fd00::1]"`
      })
    ).toBe("2001:db8:cafe::17")
    expect(clientBehind(PROXIES, "10.0.0.1", { forwarded: `proto=https;for="192.0.2.60" ,, for=10.0.0.2` })).toBe(
      "192.0.2.60"
    )
    expect(clientBehind(PROXIES, "10.0.0.1", { forwarded: `for="\\"quoted, with a comma\\"", for=192.0.2.60` })).toBe(
      "192.0.2.60"
    )
  })

  it("is the peer's when a header does not parse or the hop reached is not an address", () => {
    const malformed: ReadonlyArray<{ readonly xff?: string; readonly forwarded?: string }> = [
      { xff: "not-an-address" },
      { xff: "203.0.113.7 198.51.100.1" },
      { xff: "256.0.0.1" },
      { xff: "01.2.3.4" },
      { xff: "unknown" },
      { xff: "[203.0.113.7]" },
      { xff: "203.0.113.7:http" },
      { forwarded: "for=" },
      { forwarded: `for="192.0.2.60` },
      { forwarded: "for=192.0.2.60;for=198.51.100.1" },
      { forwarded: "for=192.0.2.60 proto=http" },
      { forwarded: "=192.0.2.60" },
      { forwarded: "for=unknown" },
      { forwarded: `for="_gazonk"` },
      { forwarded: "proto=https" },
      { forwarded: `for="[2001:db8:cafe::17"` },
      { forwarded: `for="[192.0.2.60]"` }
    ]
    for (const headers of malformed) {
      expect(clientBehind(PROXIES, "10.0.0.1", headers), JSON.stringify(headers)).toBe("10.0.0.1")
    }
  })

  it("with both headers, is the client they agree on, else the peer's", () => {
    expect(clientBehind(PROXIES, "10.0.0.1", { xff: "203.0.113.7", forwarded: "for=203.0.113.7" })).toBe(
      "203.0.113.7"
    )
    // a proxy that appends to one header passes the other through as the client wrote it
    expect(clientBehind(PROXIES, "10.0.0.1", { xff: "203.0.113.7", forwarded: "for=198.51.100.1" })).toBe(
      "10.0.0.1"
    )
    expect(clientBehind(PROXIES, "10.0.0.1", { xff: "203.0.113.7", forwarded: "for=unknown" })).toBe("10.0.0.1")
  })

  it("exposes the hops it reads, each an address or undefined", () => {
    expect(xForwardedForHops(" 203.0.113.7 ,, [::1]:80 ,unknown")).toEqual(["203.0.113.7", "::1", undefined])
    expect(forwardedHops(`for=192.0.2.60;proto=http, for="[::1]", for=_hidden`)).toEqual([
      "192.0.2.60",
      "::1",
      undefined
    ])
    expect(forwardedHops("for=192.0.2.60;;")).toEqual(["192.0.2.60"])
    expect(forwardedHops(`for="a`)).toBeUndefined()
  })
})
