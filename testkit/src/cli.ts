#!/usr/bin/env node
/**
 * integrations-conformance: runs the kit against a deployment and reports. The exit code follows the verdict line:
 * 0 CONFORMANT or PASSED, PARTIAL RUN (at least one scenario ran and every one that ran passed), 1 NOT CONFORMANT,
 * 2 the run could not start (options, an unreachable deployment or one that is not this API, a key that does not
 * authenticate) or NOTHING RAN. `integrations-conformance` starts in ./bin.ts, which refuses an unsupported Node first.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises"
import { dirname } from "node:path"
import { parseArgs } from "node:util"
import { exitCodeOf, grepTerms, type Reporter, writeReports } from "./commandLine.ts"
import { ConfigurationError } from "./configurationError.ts"
import { KEY_VARIABLES } from "./curl.ts"
import { consoleProgress, consoleSummary } from "./report/console.ts"
import type { ConformanceOptions } from "./runner.ts"
import { httpUrlProblem } from "./urlOptions.ts"
import { KIT_NAME, KIT_VERSION } from "./version.ts"

/** The runner (Effect, the contract) loads only once the arguments are known to be usable. */
const loadRunner = () => import("./runner.ts")

const HELP = `integrations-conformance ${KIT_VERSION}: does this deployment keep the Integrations API contract?

Usage: integrations-conformance --base-url <url> --api-key <key> [options]
       integrations-conformance listen --base-url <url> --api-key <key> --forward-to <url>
                            (a deployment's events, signed with WEBHOOK_SECRET or a new secret, to a
                            receiver on this machine; listen --help)
       integrations-conformance receiver --url <url> --secret <whsec_...> [--state-url <url>]
                            (tests your own webhook receiver with signed deliveries; receiver --help)
       integrations-conformance compat <released-openapi.json> <new-openapi.json>
                            (holds a contract change to the versioning rules; exit 1 if it breaks clients)
       integrations-conformance verify-report <signed-report.json> [--public-key <base64>]
       integrations-conformance keygen [--out <file>]
                            (check a signed report; make a key pair to sign reports with)

  --base-url <url>          the deployment, http://… or https://… (env CONFORMANCE_BASE_URL)
  --api-key <key>           an API key of one integration (env ${KEY_VARIABLES.primary})
  --second-api-key <key>    a key of a second integration, for cross-tenant checks; without it those
                            scenarios are not run (env ${KEY_VARIABLES.second})
  --mode mock|live          default: what GET /healthz says; a mismatch refuses to run
  --allow-live              let money-moving scenarios (payouts, confirmations, OTPs) run against live
  --strict                  a resource field the contract does not know fails the scenario (default: it
                            is a compatible addition, reported as a warning)
  --grep <id|prefix|tag>    run only matching scenarios (repeatable, or comma-separated): AUTH-001,
                            PAYOUT-CONFIRM, money-moving, cross-tenant, negative... A filtered run is
                            never a full conformance claim
  --reporter <name>[=file]  console, json or junit (repeatable; default console). Without =file a json or
                            junit report goes to --out, else to stdout (console then writes to stderr)
  --out <file>              where the json or junit reporter without its own file writes
  --report-signed <file>    also write the JSON report signed with ed25519: the kit's and the target's
                            versions and a SHA-256 of every exchange in it (verify-report checks it)
  --signing-key <file>      the ed25519 private key (PEM) to sign with (env CONFORMANCE_SIGNING_KEY, a
                            file); without one, a key made for the run: the report is intact, the signer
                            unknown
  --timeout <seconds>       time limit of one scenario, polling included (default 30)
  --seed <n>                seed of the generated inputs (default random; printed, so a run can be repeated)
  --concurrency <n>         scenarios at once (default 4)
  --negative-cases <n>      generated invalid inputs per endpoint (default 30)
  --sequences <n>           generated sequences of payout operations SEQ-001 tries within --timeout
                            (default 20; each creates a few payouts)
  --webhook-receiver <host:port>
                            where the kit listens for the deployment's webhooks (default: 127.0.0.1 and a
                            free port when a mock deployment is on a loopback address; else the event
                            delivery scenarios are not run)
  --webhook-receiver-url <url>
                            the URL the deployment reaches that receiver at, when not http://host:port
  --list                    list the scenarios and exit
  --version, --help

Before any scenario, the target must be the Integrations API (GET /healthz and GET /openapi.json) and
each key must authenticate, else one line says what was found (exit 2). Needs Node 22.12 or later. Failures are grouped by root cause, each
with what was expected, what came back and a curl that reproduces it, preceded by the setup requests it
depends on; the curls read the keys from ${KEY_VARIABLES.primary} and ${KEY_VARIABLES.second}.
Exit code, as the verdict line says: 0 CONFORMANT or PASSED, PARTIAL RUN (every scenario that ran passed),
1 NOT CONFORMANT (a scenario failed), 2 the run could not start, or NOTHING RAN (no selected scenario could
run here).
`

class UsageError extends Error {}

/** The PEM text of --signing-key, once it is known to hold an ed25519 private key. */
const readSigningKey = async (file: string) => {
  const { signingKeyProblem } = await import("./report/signed.ts")
  const pem = await readFile(file, "utf8").catch((error: unknown) => {
    throw new UsageError(`--signing-key: cannot read ${file}: ${error instanceof Error ? error.message : ""}`)
  })
  const problem = signingKeyProblem(pem)
  if (problem !== undefined) throw new UsageError(`--signing-key ${file}: ${problem}`)
  return pem
}

const integer = (name: string, text: string | undefined, fallback: number | undefined): number | undefined => {
  if (text === undefined) return fallback
  const value = Number(text)
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new UsageError(`--${name} must be a non-negative integer, got ${text}`)
  }
  return value
}

const reportersOf = (specs: ReadonlyArray<string>, out: string | undefined): ReadonlyArray<Reporter> => {
  const parsed = (specs.length === 0 ? ["console"] : specs).flatMap((spec) => spec.split(",")).map((spec): Reporter => {
    const [name = "", file] = spec.split("=", 2)
    if (name !== "console" && name !== "json" && name !== "junit") {
      throw new UsageError(`unknown reporter ${name} (console, json, junit)`)
    }
    if (name === "console" && file !== undefined) {
      throw new UsageError("the console reporter writes to the terminal; use json or junit for a file")
    }
    return { name, file }
  })
  const withoutFile = parsed.filter((reporter) => reporter.name !== "console" && reporter.file === undefined)
  if (withoutFile.length > 1) {
    throw new UsageError("several json/junit reporters need a file each: --reporter junit=report.xml")
  }
  if (out !== undefined && withoutFile.length === 0 && !parsed.some((r) => r.name !== "console")) {
    throw new UsageError("--out needs a json or junit reporter (--reporter json --out report.json)")
  }
  return parsed.map((
    reporter
  ) => (reporter.name !== "console" && reporter.file === undefined ? { ...reporter, file: out } : reporter))
}

const parse = (argv: ReadonlyArray<string>) =>
  parseArgs({
    args: [...argv],
    strict: true,
    allowPositionals: false,
    options: {
      "base-url": { type: "string" },
      "api-key": { type: "string" },
      "second-api-key": { type: "string" },
      mode: { type: "string" },
      "allow-live": { type: "boolean" },
      strict: { type: "boolean" },
      grep: { type: "string", multiple: true },
      reporter: { type: "string", multiple: true },
      out: { type: "string" },
      "report-signed": { type: "string" },
      "signing-key": { type: "string" },
      timeout: { type: "string" },
      seed: { type: "string" },
      concurrency: { type: "string" },
      "negative-cases": { type: "string" },
      sequences: { type: "string" },
      "webhook-receiver": { type: "string" },
      "webhook-receiver-url": { type: "string" },
      list: { type: "boolean" },
      help: { type: "boolean", short: "h" },
      version: { type: "boolean" }
    }
  }).values

const listing = async (grep: ReadonlyArray<string>) =>
  (await loadRunner()).selectScenarios(grep).map((scenario) =>
    `${scenario.id.padEnd(24)} ${scenario.title}\n${" ".repeat(25)}[${scenario.tags.join(", ")}]`
  ).join("\n")

const main = async (argv: ReadonlyArray<string>, env: NodeJS.ProcessEnv): Promise<number> => {
  if (argv[0] === "listen") return (await import("./listen.ts")).listen(argv.slice(1), env)
  if (argv[0] === "receiver") return (await import("./receiverCli.ts")).receiver(argv.slice(1), env)
  if (argv[0] === "compat") return (await import("./compatCli.ts")).compat(argv.slice(1))
  if (argv[0] === "verify-report") return (await import("./signedReportCli.ts")).verifyReport(argv.slice(1))
  if (argv[0] === "keygen") return (await import("./signedReportCli.ts")).keygen(argv.slice(1))
  const values = parse(argv)
  const grep = grepTerms(values.grep)
  const info = values.help === true
    ? HELP
    : values.version === true
    ? `${KIT_NAME} ${KIT_VERSION}\n`
    : values.list === true
    ? `${await listing(grep)}\n`
    : undefined
  if (info !== undefined) {
    process.stdout.write(info)
    return 0
  }

  const baseUrl = values["base-url"] ?? env["CONFORMANCE_BASE_URL"]
  const apiKey = values["api-key"] ?? env[KEY_VARIABLES.primary]
  if (baseUrl === undefined || baseUrl === "") {
    throw new UsageError("--base-url <url> is required (or CONFORMANCE_BASE_URL)")
  }
  const baseUrlProblem = httpUrlProblem("base-url", baseUrl)
  if (baseUrlProblem !== undefined) throw new UsageError(baseUrlProblem)
  const receiverUrlProblem = values["webhook-receiver-url"] === undefined
    ? undefined
    : httpUrlProblem("webhook-receiver-url", values["webhook-receiver-url"])
  if (receiverUrlProblem !== undefined) throw new UsageError(receiverUrlProblem)
  if (apiKey === undefined || apiKey === "") {
    throw new UsageError(`--api-key <key> is required (or ${KEY_VARIABLES.primary})`)
  }
  const mode = values.mode
  if (mode !== undefined && mode !== "mock" && mode !== "live") {
    throw new UsageError(`--mode must be mock or live, got ${mode}`)
  }
  const reporters = reportersOf(values.reporter ?? [], values.out)
  const signedReport = values["report-signed"]
  const signingKeyFile = values["signing-key"] ?? env["CONFORMANCE_SIGNING_KEY"]
  if (signingKeyFile !== undefined && signedReport === undefined) {
    throw new UsageError("--signing-key signs the report --report-signed <file> writes: give that too")
  }
  const signingKey = signingKeyFile === undefined ? undefined : await readSigningKey(signingKeyFile)
  const consoleStream = reporters.some((r) => r.name !== "console" && r.file === undefined)
    ? process.stderr
    : process.stdout
  const style = { color: consoleStream.isTTY === true && env["NO_COLOR"] === undefined }
  const showConsole = reporters.some((r) => r.name === "console")

  const options: ConformanceOptions = {
    baseUrl,
    apiKey,
    secondApiKey: values["second-api-key"] ?? env[KEY_VARIABLES.second],
    mode,
    grep,
    allowLive: values["allow-live"] === true,
    strict: values.strict === true,
    timeoutMs: (integer("timeout", values.timeout, 30) ?? 30) * 1000,
    seed: integer("seed", values.seed, undefined),
    concurrency: Math.max(1, integer("concurrency", values.concurrency, 4) ?? 4),
    negativeCases: integer("negative-cases", values["negative-cases"], 30),
    sequences: integer("sequences", values.sequences, undefined),
    webhookReceiver: values["webhook-receiver"],
    webhookReceiverUrl: values["webhook-receiver-url"],
    onEvent: showConsole ? consoleProgress((text) => consoleStream.write(text), style) : undefined
  }
  const { runConformance } = await loadRunner()
  const report = await runConformance(options)
  if (showConsole) consoleStream.write(consoleSummary(report, style))
  await writeReports(reporters, report, showConsole ? (text) => consoleStream.write(text) : undefined)
  if (signedReport !== undefined) {
    const { signReport } = await import("./report/signed.ts")
    const signed = signReport(report, signingKey)
    await mkdir(dirname(signedReport), { recursive: true })
    await writeFile(signedReport, `${JSON.stringify(signed, null, 2)}\n`)
    consoleStream.write(
      `signed report: ${signedReport} (key ${signed.signature.keyId}${
        signed.signature.ephemeral
          ? ", made for this run: no --signing-key, so it shows the report intact, not who ran it"
          : ""
      })\n`
    )
  }
  return exitCodeOf(report)
}

const isUsageProblem = (error: unknown) =>
  error instanceof UsageError || error instanceof ConfigurationError ||
  (error instanceof TypeError && "code" in error && String(error.code).startsWith("ERR_PARSE_ARGS"))

main(process.argv.slice(2), process.env).then(
  (code) => {
    process.exitCode = code
  },
  (error: unknown) => {
    process.stderr.write(`integrations-conformance: ${error instanceof Error ? error.message : String(error)}\n`)
    if (!isUsageProblem(error)) process.stderr.write(`${error instanceof Error ? error.stack ?? "" : ""}\n`)
    process.exitCode = 2
  }
)
