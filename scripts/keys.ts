/**
 * API key administration against DATABASE_URL (or the embedded database when unset; it joins a running server).
 * `npm run -s keys -- help` prints the commands (USAGE below). Run from a cached esbuild bundle
 * (scripts/run-bundled.mjs), so a call takes a fraction of a second plus the database's own time.
 * The key kind follows APP_MODE (mock → cop_test_pk_…, live → cop_live_pk_…). Exit code 2: a usage error, or no
 * such integration or active key. Running servers honour a revocation or an expiry within API_KEY_CACHE_MS.
 */
import { NodeRuntime } from "@effect/platform-node"
import { ApiScope } from "@cop-integrations/contracts"
import { type Cause, Console, Effect, Fiber, Layer, Option, References, Result, Schema } from "effect"
import { parseArgs } from "node:util"
import { keyKindForMode } from "../src/auth/ApiKey.ts"
import { ApiKeyRepo, type ApiKeyRow, keyState } from "../src/auth/ApiKeyRepo.ts"
import { AuditLog } from "../src/auth/AuditLog.ts"
import { parseCidrList } from "../src/base/IpAddresses.ts"
import { startupFailureLine } from "../src/base/StartupFailure.ts"
import { AppConfig, AppConfigShape, databaseTarget } from "../src/config/Config.ts"
import { DashboardSessions } from "../src/dashboard/DashboardSessions.ts"
import { SessionRepo } from "../src/dashboard/SessionRepo.ts"
import { databaseLayer } from "../src/db/Database.ts"
import { IntegrationRepo } from "../src/auth/IntegrationRepo.ts"
import { issueKeyFor } from "./issueKey.ts"

const usage = [
  "usage: keys issue <integration-name> [--create] [--expires <30d|12h|ISO timestamp|never>] [--scopes <a,b,…>]",
  "                  [--allow-ips <cidr,…>]",
  "       keys allow-ips <key-id> <cidr,…|any>",
  "       keys rotate <key-id> [--overlap <24h|90m|0>] [--expires <30d|12h|ISO timestamp|never>]",
  "       keys list [--json]",
  "       keys revoke <key-id>",
  "       keys dashboard-link <integration-name>",
  "       keys help"
].join("\n")

const USAGE = `${usage}

API keys of the integrations, against DATABASE_URL, or else the embedded PostgreSQL in EMBEDDED_DATA_DIR
(default .data/postgres; joins the server running there, or starts one and stops it). Run it as
npm run -s keys -- <command> …

  issue   a new key for the integration <integration-name>, printed once as the last line of stdout; --create is
          required to create a new integration (a misspelt name cannot create a tenant); --expires bounds it;
          --scopes makes it a restricted key that may do only those (comma-separated: ${ApiScope.literals.join(", ")});
          a request outside them is 403 naming the scope it needs. Without --scopes: a full key. --allow-ips: as
          allow-ips, from the start
  allow-ips
          the addresses an active key is accepted from from now on, as comma-separated CIDRs (203.0.113.0/24,
          2001:db8::/48; one address is its /32 or /128), or any; a request from elsewhere is 403 naming the rule
          (never the addresses). The address is the client's through TRUSTED_PROXIES. Running servers apply it
          within API_KEY_CACHE_MS; a rotation keeps it
  rotate  a new key for the same integration (last line of stdout); the old key keeps working for --overlap
          (default 24h; 0 stops it at once), then stops; the new key keeps the old one's expiry unless --expires
          gives another
  list    every key: its id, integration, last 4 characters, created, last used, expiry and state (--json: an array)
  revoke  stops a key at once (running servers notice within API_KEY_CACHE_MS)
  dashboard-link
          a one-time sign-in link to the dashboard (/dashboard) for the integration, made with its newest active key,
          valid 5 minutes, printed as the last line of stdout; it names PUBLIC_BASE_URL, else http://HOST:PORT

The key kind follows APP_MODE: mock (default) issues cop_test_pk_ keys, live cop_live_pk_ keys.
Exit codes: 0 done, 2 a usage error or no such integration or active key, 1 the database failed.`

const fail = (message: string) => Effect.andThen(Console.error(message), Effect.sync(() => process.exit(2)))

const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const

/** "90m", "24h", "30d" or "0" in milliseconds; undefined for anything else. */
const durationMs = (text: string): number | undefined => {
  if (text === "0") return 0
  const match = /^([1-9][0-9]{0,5})([mhd])$/.exec(text)
  return match === null ? undefined : Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS]
}

/** `--expires`: a duration from now, an ISO timestamp in the future, or `never` (null); undefined if none of those. */
const expiryFrom = (text: string, now: Date): Date | null | undefined => {
  if (text === "never") return null
  const ms = durationMs(text)
  if (ms !== undefined) return ms > 0 ? new Date(now.getTime() + ms) : undefined
  const at = /^\d{4}-\d{2}-\d{2}T/.test(text) ? new Date(text) : new Date(Number.NaN)
  return Number.isNaN(at.getTime()) || at <= now ? undefined : at
}

const badExpiry = (text: string) =>
  `--expires: a duration (30d, 12h, 90m), a future ISO timestamp or never, not "${text}"`

/** `--scopes a,b`: the scopes, each once and known; undefined for an empty list or an unknown scope. */
const scopesFrom = (text: string): ReadonlyArray<ApiScope> | undefined => {
  const named = [...new Set(text.split(",").map((scope) => scope.trim()).filter((scope) => scope !== ""))]
  const isScope = Schema.is(ApiScope)
  return named.length > 0 && named.every(isScope) ? named : undefined
}

/** `--allow-ips` / `allow-ips`: the CIDRs as stored (`network/prefix`), null for `any`; undefined if not a list of them. */
const allowedIpsFrom = (text: string): ReadonlyArray<string> | null | undefined => {
  if (text.trim() === "any") return null
  const parsed = parseCidrList(text)
  if (Result.isFailure(parsed) || parsed.success.length === 0) return undefined
  return [...new Set(parsed.success.map((cidr) => cidr.text))]
}

const badAllowedIps = (text: string) =>
  `allowed addresses: comma-separated CIDRs (203.0.113.0/24, 2001:db8::/48, 198.51.100.7) or any, not "${text}"`

const describeAllowedIps = (allowedIps: ReadonlyArray<string> | null) =>
  allowedIps === null ? "any address" : allowedIps.join(",")

const badScopes = (text: string) => `--scopes: a comma-separated list of ${ApiScope.literals.join(", ")}, not "${text}"`

const iso = (date: Date | null, none: string) => (date === null ? none : date.toISOString())

const describeState = (key: ApiKeyRow, now: Date) => {
  const state = keyState(key, now)
  const replaced = key.replaced_by === null ? "" : ` (replaced by ${key.replaced_by})`
  if (state === "revoked") return `revoked ${iso(key.revoked_at, "")}${replaced}`
  if (state === "expired") return `expired ${iso(key.expires_at, "")}${replaced}`
  return key.expires_at === null ? "active" : `active until ${key.expires_at.toISOString()}${replaced}`
}

const asJson = (key: ApiKeyRow, now: Date) => ({
  id: key.id,
  integrationId: key.integration_id,
  integrationName: key.integration_name,
  kind: key.kind,
  last4: key.last4,
  state: keyState(key, now),
  createdAt: key.created_at.toISOString(),
  lastUsedAt: key.last_used_at?.toISOString() ?? null,
  expiresAt: key.expires_at?.toISOString() ?? null,
  revokedAt: key.revoked_at?.toISOString() ?? null,
  replacedBy: key.replaced_by,
  scopes: key.scopes,
  allowedIps: key.allowed_ips
})

const VERBS = ["issue", "allow-ips", "rotate", "list", "revoke", "dashboard-link"] as const

/** Where the link sends a browser: PUBLIC_BASE_URL, else the service as this configuration runs it (HOST, PORT). */
const dashboardOrigin = (config: AppConfigShape) =>
  Option.getOrElse(config.publicBaseUrl, () => {
    const host = config.host === "0.0.0.0"
      ? "127.0.0.1"
      : config.host === "::"
      ? "[::1]"
      : config.host.includes(":")
      ? `[${config.host}]`
      : config.host
    return `http://${host}:${config.port}`
  })

const parseCommandLine = (args: ReadonlyArray<string>) =>
  parseArgs({
    args: [...args],
    allowPositionals: true,
    options: {
      create: { type: "boolean" },
      expires: { type: "string" },
      scopes: { type: "string" },
      "allow-ips": { type: "string" },
      overlap: { type: "string" },
      json: { type: "boolean" },
      help: { type: "boolean", short: "h" }
    }
  })

type CommandLine = ReturnType<typeof parseCommandLine>

/** What the command line asks for, before any database is involved: help, a usage error, or a command to run. */
const understand = (args: ReadonlyArray<string>):
  | { readonly help: true }
  | { readonly usageError: string }
  | { readonly run: CommandLine } =>
{
  let parsed: CommandLine
  try {
    parsed = parseCommandLine(args)
  } catch (error) {
    // `keys issue --help` with an option this command line does not know is still a request for help
    if (args.includes("--help") || args.includes("-h")) return { help: true }
    return { usageError: `${error instanceof Error ? error.message : String(error)}\n${usage}` }
  }
  const [verb, , ...extra] = parsed.positionals
  if (parsed.values.help === true || verb === "help") return { help: true }
  if (!VERBS.includes(verb as typeof VERBS[number])) {
    return { usageError: verb === undefined ? usage : `unknown command "${verb}"\n${usage}` }
  }
  if (verb === "allow-ips") {
    const [, keyId, list, ...more] = parsed.positionals
    if (keyId === undefined || list === undefined || more.length > 0) return { usageError: usage }
    if (allowedIpsFrom(list) === undefined) return { usageError: badAllowedIps(list) }
    return { run: parsed }
  }
  if (extra.length > 0) return { usageError: usage }
  const allowIps = parsed.values["allow-ips"]
  if (allowIps !== undefined && (verb !== "issue" || allowedIpsFrom(allowIps) === undefined)) {
    return {
      usageError: verb === "issue"
        ? `--allow-ips: ${badAllowedIps(allowIps)}`
        : `--allow-ips: only with issue\n${usage}`
    }
  }
  const { scopes } = parsed.values
  if (scopes !== undefined && (verb !== "issue" || scopesFrom(scopes) === undefined)) {
    return { usageError: verb === "issue" ? badScopes(scopes) : `--scopes: only with issue\n${usage}` }
  }
  return { run: parsed }
}

const command = (parsed: CommandLine) =>
  Effect.gen(function*() {
    const config = yield* AppConfigShape
    const [verb, argument] = parsed.positionals
    const { values } = parsed
    const keys = yield* ApiKeyRepo
    const now = new Date()
    switch (verb) {
      case "issue": {
        const name = argument?.trim() ?? ""
        if (name === "") {
          return yield* fail(usage)
        }
        const expiresAt = values.expires === undefined ? null : expiryFrom(values.expires, now)
        if (expiresAt === undefined) {
          return yield* fail(badExpiry(values.expires ?? ""))
        }
        // Checked as the command line was read (`understand`); never a full key for scopes that do not read.
        const scopes = values.scopes === undefined ? null : scopesFrom(values.scopes)
        if (scopes === undefined) return yield* fail(badScopes(values.scopes ?? ""))
        const allowIps = values["allow-ips"]
        const allowedIps = allowIps === undefined ? null : allowedIpsFrom(allowIps)
        if (allowedIps === undefined) return yield* fail(badAllowedIps(allowIps ?? ""))
        const created = yield* issueKeyFor({
          name,
          kind: keyKindForMode(config.mode),
          expiresAt,
          scopes,
          allowedIps,
          create: values.create === true
        })
        if (Option.isNone(created)) {
          return yield* fail(`no integration named "${name}": check the spelling, or pass --create to create it`)
        }
        const { integration, issued } = created.value
        const until = issued.expiresAt === null ? "" : `, valid until ${issued.expiresAt.toISOString()}`
        const restricted = scopes === null ? "" : `, restricted to ${scopes.join(", ")}`
        const from = allowedIps === null ? "" : `, accepted only from ${describeAllowedIps(allowedIps)}`
        yield* Console.log(
          `integration ${integration.name} (${integration.id}), key id ${issued.id}${until}${restricted}${from}; shown once:`
        )
        yield* Console.log(issued.key)
        return
      }
      case "allow-ips": {
        const [, keyId = "", list = ""] = parsed.positionals
        const allowedIps = allowedIpsFrom(list)
        if (allowedIps === undefined) return yield* fail(badAllowedIps(list))
        const changed = yield* keys.setAllowedIps(keyId, allowedIps)
        return yield* Option.match(changed, {
          onNone: () => fail(`no active key ${keyId}`),
          onSome: () => Console.log(`key ${keyId} is accepted from ${describeAllowedIps(allowedIps)}`)
        })
      }
      case "rotate": {
        if (argument === undefined) {
          return yield* fail(usage)
        }
        const overlapMs = durationMs(values.overlap ?? "24h")
        if (overlapMs === undefined) {
          return yield* fail(`--overlap: a duration (24h, 90m, 7d) or 0, not "${values.overlap}"`)
        }
        const expiresAt = values.expires === undefined ? undefined : expiryFrom(values.expires, now)
        if (values.expires !== undefined && expiresAt === undefined) {
          return yield* fail(badExpiry(values.expires))
        }
        const rotated = yield* keys.rotate(argument, overlapMs, expiresAt)
        if (Option.isNone(rotated)) {
          return yield* fail(`no active key ${argument}`)
        }
        const { issued, oldKeyExpiresAt } = rotated.value
        const validity = issued.expiresAt === null ? "no expiry" : `valid until ${issued.expiresAt.toISOString()}`
        const whose = values.expires === undefined ? " (as the old key; --expires sets another)" : ""
        yield* Console.log(`key ${argument} stays valid until ${oldKeyExpiresAt.toISOString()}, then stops`)
        yield* Console.log(`new key id ${issued.id}, ${validity}${whose}; shown once:`)
        yield* Console.log(issued.key)
        return
      }
      case "list": {
        if (argument !== undefined) {
          return yield* fail(usage)
        }
        const all = yield* keys.list
        if (values.json === true) {
          return yield* Console.log(JSON.stringify(
            all.map((key) => asJson(key, now)),
            null,
            2
          ))
        }
        for (const key of all) {
          yield* Console.log(
            [
              key.id,
              key.integration_name,
              `cop_${key.kind}_pk_…${key.last4}`,
              `created ${key.created_at.toISOString()}`,
              `last used ${iso(key.last_used_at, "never")}`,
              describeState(key, now),
              key.scopes === null ? "full" : `scopes ${key.scopes.join(",")}`,
              `from ${describeAllowedIps(key.allowed_ips)}`
            ].join("  ")
          )
        }
        return
      }
      case "revoke": {
        if (argument === undefined) return yield* fail(usage)
        const revoked = yield* keys.revoke(argument)
        return yield* Option.match(revoked, {
          onNone: () => fail(`no active key ${argument}`),
          onSome: () => Console.log(`revoked ${argument}`)
        })
      }
      case "dashboard-link": {
        const name = argument?.trim() ?? ""
        if (name === "") return yield* fail(usage)
        const integration = yield* (yield* IntegrationRepo).findByName(name)
        if (Option.isNone(integration)) return yield* fail(`no integration named "${name}"`)
        const key = yield* keys.newestActiveOf(integration.value.id)
        if (Option.isNone(key)) return yield* fail(`integration "${name}" has no active key: issue one first`)
        const link = yield* (yield* DashboardSessions).createLink(
          { integrationId: integration.value.id, keyId: key.value.id },
          dashboardOrigin(config)
        )
        yield* Console.log(
          `integration ${name} (${integration.value.id}), made with key ${key.value.id}; one use, until ${link.expiresAt.toISOString()}:`
        )
        yield* Console.log(link.url)
        return
      }
      default:
        return yield* fail(usage)
    }
  })

/**
 * One line on stderr while the database is not there yet: at once for the embedded one (it may have to be started,
 * which takes seconds), after a second for DATABASE_URL (normally there by then). Yields what withdraws a line not
 * said yet, for once the database answered.
 */
const sayConnecting = (config: AppConfigShape) => {
  const line = `keys: connecting to ${databaseTarget(config)}`
  if (Option.isNone(config.databaseUrl)) {
    return Effect.as(Console.error(`${line}, starting it unless a server runs there…`), Effect.void)
  }
  return Effect.map(Effect.forkChild(Effect.delay(Console.error(`${line}…`), "1 second")), Fiber.interrupt)
}

/** A database or configuration failure is one plain line and exit code 1, as for the service; anything else as is. */
const reportFailure = (cause: Cause.Cause<unknown>, database?: string) =>
  Option.match(startupFailureLine(cause, database), {
    onNone: () => Effect.failCause(cause),
    onSome: (line) => Effect.andThen(Console.error(`keys: ${line}`), Effect.sync(() => (process.exitCode = 1)))
  })

const program = (parsed: CommandLine) =>
  Effect.gen(function*() {
    const config = yield* AppConfigShape
    const services = DashboardSessions.Default.pipe(
      Layer.provideMerge(
        Layer.mergeAll(ApiKeyRepo.Default, IntegrationRepo.Default, SessionRepo.Default, AuditLog.Default)
      ),
      Layer.provideMerge(databaseLayer(config)),
      Layer.provide(Layer.succeed(AppConfig, config))
    )
    const stopSaying = yield* sayConnecting(config)
    yield* Effect.provide(Effect.andThen(stopSaying, command(parsed)), services).pipe(
      Effect.catchCause((cause) => reportFailure(cause, databaseTarget(config)))
    )
  })

const request = understand(process.argv.slice(2))
if ("help" in request) {
  process.stdout.write(`${USAGE}\n`)
} else if ("usageError" in request) {
  process.stderr.write(`${request.usageError}\n`)
  process.exitCode = 2
} else {
  NodeRuntime.runMain(
    program(request.run).pipe(
      // A configuration error, met before any database is named.
      Effect.catchCause((cause) => reportFailure(cause)),
      Effect.provideService(References.MinimumLogLevel, "Warn")
    )
  )
}
