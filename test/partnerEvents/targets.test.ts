/**
 * SSRF: in live mode a webhook may only reach public addresses over https, checked at registration and again, after
 * DNS resolution, by the `lookup` every delivery connects through. Names are resolved by an injected resolver, and
 * the only server any of these tests could reach is a listener on 127.0.0.1 that counts connections: a refusal is
 * proven by that count staying 0.
 */
import { describe, expect, it, layer } from "@effect/vitest"
import { Context, Effect, Layer, Option, Result } from "effect"
import { once } from "node:events"
import { createServer, isIP } from "node:net"
import type { AddressInfo } from "node:net"
import { postWebhook } from "../../src/partnerEvents/Sender.ts"
import { checkUrl, forbiddenAddress } from "../../src/partnerEvents/TargetPolicy.ts"
import {
  guardedLookup,
  type Resolver,
  WebhookTargets,
  WebhookTargetsOpen,
  WebhookTargetsStrict
} from "../../src/partnerEvents/WebhookTargets.ts"

/** A fake DNS: every name resolves to what the table says, an IP address to itself (the tests never touch real DNS). */
const resolver = (table: Record<string, ReadonlyArray<string>>): Resolver => async (hostname) => {
  const addresses = isIP(hostname) === 0 ? table[hostname] : [hostname]
  if (addresses === undefined) {
    throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" })
  }
  return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }))
}

const DNS = resolver({
  "hooks.partner.example": ["93.184.215.14"],
  "rebind.partner.example": ["127.0.0.1"],
  "intranet.partner.example": ["10.1.2.3"],
  "mixed.partner.example": ["93.184.215.14", "192.168.1.10"],
  // for delivery tests: even a broken guard could only connect to the loopback listener
  "mixed-loop.partner.example": ["127.0.0.1", "192.168.1.10"],
  "metadata.google.internal": ["169.254.169.254"],
  "v6.partner.example": ["::ffff:127.0.0.1"]
})

const check = (url: string) => Effect.flatMap(WebhookTargets, (targets) => targets.check(url))

/**
 * Every IPv6 way to reach an address a webhook may not: the IPv6 ranges themselves, and the forms that carry an
 * IPv4 address (judged by the IPv4 rules), each spelled as URLs normalise it (hex) and, where it has one, dotted.
 */
const IPV6_FORMS: ReadonlyArray<readonly [string, string]> = [
  ["::127.0.0.1", "loopback"], // IPv4-compatible
  ["::7f00:1", "loopback"],
  ["::10.0.0.1", "private"],
  ["::ffff:7f00:1", "loopback"], // IPv4-mapped
  ["::ffff:192.168.0.1", "private"],
  ["::ffff:0:127.0.0.1", "loopback"], // IPv4-translated
  ["::ffff:0:7f00:1", "loopback"],
  ["::ffff:0:a9fe:a9fe", "link-local or cloud metadata"],
  ["64:ff9b::127.0.0.1", "loopback"], // NAT64, well-known prefix
  ["64:ff9b::a9fe:a9fe", "link-local or cloud metadata"],
  ["64:ff9b:1::a00:1", "private"], // NAT64, local-use prefix: never global, whatever it carries
  ["64:ff9b:1:ffff::808:808", "private"],
  ["2002:7f00:1::", "loopback"], // 6to4
  ["2002:a9fe:a9fe::1", "link-local or cloud metadata"],
  ["2002:c0a8:101::", "private"],
  ["2002:a00:1:1::1", "private"],
  ["2001:0:4136:e378:8000:63bf:80ff:fffe", "loopback"], // Teredo: client 127.0.0.1 (stored inverted)
  ["2001:0:4136:e378:8000:63bf:f5ff:fffe", "private"], // client 10.0.0.1
  ["2001:0:a00:1:8000:63bf:f7f7:f7f7", "private"], // server 10.0.0.1
  ["fec0::1", "private"], // site-local (deprecated)
  ["feff::1", "private"],
  ["fc00::1", "private"], // unique-local
  ["fd12:3456::1", "private"],
  ["fe80::1", "link-local or cloud metadata"],
  ["fe80::1%eth0", "link-local or cloud metadata"],
  ["febf::1", "link-local or cloud metadata"],
  ["::1", "loopback"],
  ["0:0:0:0:0:0:0:1", "loopback"],
  ["::", "reserved or not routable"], // unspecified
  ["ff02::1", "reserved or not routable"], // multicast
  ["ff0e::1", "reserved or not routable"],
  ["2001:db8::1", "reserved or not routable"], // documentation
  ["3fff::1", "reserved or not routable"],
  ["100::1", "reserved or not routable"], // discard-only
  ["2001:2::1", "reserved or not routable"], // benchmarking
  ["fc0::1", "reserved or not routable"], // outside global unicast (2000::/3), not unique-local
  ["ff::1", "reserved or not routable"], // not multicast either
  ["4000::1", "reserved or not routable"]
]

/** Public addresses, the embedded forms of a public IPv4 address included. */
const PUBLIC: ReadonlyArray<string> = [
  "93.184.215.14",
  "8.8.8.8",
  "172.32.0.1",
  "2606:4700::1111",
  "2001:4860:4860::8888",
  "::ffff:8.8.8.8",
  "64:ff9b::8.8.8.8",
  "2002:808:808::1",
  "2001:0:4136:e378:8000:63bf:f7f7:f7f7" // Teredo: server 65.54.227.120, client 8.8.8.8
]

describe("forbidden addresses", () => {
  it.each<readonly [string, string]>([
    ["127.0.0.1", "loopback"],
    ["127.255.0.9", "loopback"],
    ["::1", "loopback"],
    ["10.0.0.1", "private"],
    ["172.16.5.4", "private"],
    ["172.31.255.255", "private"],
    ["192.168.0.1", "private"],
    ["100.64.0.1", "private"],
    ["fd00:ec2::254", "private"],
    ["169.254.169.254", "link-local or cloud metadata"],
    ["fe80::1", "link-local or cloud metadata"],
    ["0.0.0.0", "reserved or not routable"],
    ["::", "reserved or not routable"],
    ["224.0.0.1", "reserved or not routable"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:a9fe:a9fe", "link-local or cloud metadata"],
    ["64:ff9b::10.0.0.1", "private"],
    ["255.255.255.255", "reserved or not routable"],
    ...IPV6_FORMS
  ])("%s is %s", (address, reason) => {
    expect(Option.getOrNull(forbiddenAddress(address))).toBe(reason)
  })

  it.each(PUBLIC)("%s is public", (address) => {
    expect(Option.getOrNull(forbiddenAddress(address))).toBeNull()
  })
})

/** The 400 a URL gets, `url: …` (a URL the targets accept fails the test with it). */
const refusal = (url: string) => Effect.map(Effect.flip(check(url)), (error) => error.error)

layer(WebhookTargetsStrict(DNS))("registration in live mode", (it) => {
  it.effect("accepts https to a public host", () =>
    Effect.gen(function*() {
      const url = yield* check("https://hooks.partner.example/cop")
      expect(url.href).toBe("https://hooks.partner.example/cop")
    }))

  it.effect.each<readonly [string, string]>([
    ["http://hooks.partner.example/cop", "must use https in live mode"],
    ["https://127.0.0.1/hook", "loopback"],
    ["https://[::1]/hook", "loopback"],
    ["https://10.0.0.7/hook", "private"],
    ["https://192.168.1.1/hook", "private"],
    ["https://169.254.169.254/latest/meta-data", "link-local or cloud metadata"],
    ["https://localhost/hook", "local"],
    ["https://printer.local/hook", "local"],
    ["https://rebind.partner.example/hook", "resolves to a loopback address (127.0.0.1)"],
    ["https://intranet.partner.example/hook", "resolves to a private address"],
    ["https://mixed.partner.example/hook", "resolves to a private address (192.168.1.10)"],
    ["https://metadata.google.internal/computeMetadata", "local"],
    ["https://v6.partner.example/hook", "loopback"],
    ["https://nowhere.partner.example/hook", "does not resolve"],
    ["https://user:pass@hooks.partner.example/hook", "credentials"]
  ])("refuses %s (400 on url: %s)", ([url, reason]) =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(check(url))
      expect(error._tag).toBe("BadRequest")
      expect(error.error).toMatch(/^url: /)
      expect(error.error).toContain(reason)
    }))

  it.effect.each(IPV6_FORMS.filter(([address]) => !address.includes("%")))(
    "refuses https://[%s]/hook (%s), and a name resolving to it",
    ([address, reason]) =>
      Effect.gen(function*() {
        expect(yield* refusal(`https://[${address}]/hook`)).toMatch(
          new RegExp(`^url: must not point to a ${reason} address \\(`)
        )
        const resolving = WebhookTargetsStrict(resolver({ "v6-form.partner.example": [address] }))
        expect(yield* Effect.provide(refusal("https://v6-form.partner.example/hook"), resolving))
          .toBe(`url: v6-form.partner.example resolves to a ${reason} address (${address})`)
      })
  )

  it.effect("accepts the IPv6 forms of public addresses", () =>
    Effect.gen(function*() {
      for (const address of PUBLIC.filter((a) => a.includes(":"))) {
        expect((yield* check(`https://[${address}]/hook`)).protocol).toBe("https:")
      }
    }))

  it.effect("mock mode accepts http and loopback, so local development works", () =>
    Effect.gen(function*() {
      expect((yield* check("http://127.0.0.1:9999/hooks")).port).toBe("9999")
      expect((yield* check("http://localhost:3000/hooks")).hostname).toBe("localhost")
    }).pipe(Effect.provide(WebhookTargetsOpen)))

  it("the static checks still refuse what is not a URL in either mode", () => {
    expect(Result.isFailure(checkUrl("hooks.partner.example/cop", { strict: false }))).toBe(true)
    expect(Result.isFailure(checkUrl("file:///etc/passwd", { strict: false }))).toBe(true)
  })
})

/** A listener on 127.0.0.1 that counts the connections made to it (and closes each): the only server in reach. */
class Listener extends Context.Service<Listener, { readonly port: number; readonly connections: () => number }>()(
  "test/Listener"
) {}

const ListenerLive = Layer.effect(
  Listener,
  Effect.acquireRelease(
    Effect.promise(async () => {
      let connections = 0
      const server = createServer((socket) => {
        connections++
        socket.destroy()
      })
      server.listen(0, "127.0.0.1")
      await once(server, "listening")
      return { server, port: (server.address() as AddressInfo).port, connections: () => connections }
    }),
    ({ server }) => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
  )
)

const send = (url: string, resolve: Resolver) =>
  postWebhook({ url: new URL(url), headers: {}, body: "{}", timeoutMs: 2000, lookup: guardedLookup(resolve) })

// excludeTestServices: real sockets and the sender's own timer, nothing on the TestClock.
layer(Layer.merge(ListenerLive, WebhookTargetsStrict(DNS)), { excludeTestServices: true })(
  "delivery in live mode: the connect guard",
  (it) => {
    it.effect("refuses, before any connection, a name that resolves to loopback at delivery time (DNS rebinding)", () =>
      Effect.gen(function*() {
        const { connections, port } = yield* Listener
        // registered while it resolved to a public address; by delivery time it points at the listener
        const outcome = yield* send(`http://rebind.partner.example:${port}/hook`, DNS)
        expect(outcome).toEqual({
          ok: false,
          status: null,
          error: "refused: rebind.partner.example resolves to a loopback address (127.0.0.1)",
          responseExcerpt: null
        })
        expect(connections()).toBe(0)
      }))

    it.effect("refuses when any of the addresses is private", () =>
      Effect.gen(function*() {
        const { connections, port } = yield* Listener
        const outcome = yield* send(`http://mixed-loop.partner.example:${port}/hook`, DNS)
        expect(outcome.ok).toBe(false)
        expect(!outcome.ok && outcome.error).toMatch(/^refused: mixed-loop.partner.example resolves to a /)
        expect(connections()).toBe(0)
      }))

    it.effect.each(IPV6_FORMS)(
      "refuses to connect when the DNS answer is %s (%s)",
      ([address, reason]) =>
        Effect.gen(function*() {
          const { connections, port } = yield* Listener
          const outcome = yield* send(
            `http://v6-form.partner.example:${port}/hook`,
            resolver({ "v6-form.partner.example": [address] })
          )
          expect(outcome).toEqual({
            ok: false,
            status: null,
            error: `refused: v6-form.partner.example resolves to a ${reason} address (${address})`,
            responseExcerpt: null
          })
          expect(connections()).toBe(0)
        })
    )

    it.effect("the same guard lets a connection through when the address is allowed (proof the listener counts)", () =>
      Effect.gen(function*() {
        const { connections, port } = yield* Listener
        // a guard whose resolver answers 127.0.0.1 is refused, so the control goes around it with the system resolver
        const outcome = yield* postWebhook({
          url: new URL(`http://127.0.0.1:${port}/hook`),
          headers: {},
          body: "{}",
          timeoutMs: 2000,
          lookup: undefined
        })
        expect(outcome.ok).toBe(false)
        expect(connections()).toBe(1)
      }))

    it.effect("the live Layer's lookup is the guard", () =>
      Effect.gen(function*() {
        const { connections, port } = yield* Listener
        const targets = yield* WebhookTargets
        const outcome = yield* postWebhook({
          url: new URL(`http://rebind.partner.example:${port}/hook`),
          headers: {},
          body: "{}",
          timeoutMs: 2000,
          lookup: targets.lookup
        })
        expect(outcome.ok).toBe(false)
        expect(connections()).toBe(1)
      }))
  }
)
