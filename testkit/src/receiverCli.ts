/**
 * `integrations-conformance receiver`: the receiver kit (./receiverKit.ts) from the command line. Exit codes as the main
 * CLI: 0 every scenario that ran passed, 1 one failed, 2 the run could not start (options, a URL that does not answer).
 */
import { readFile } from "node:fs/promises"
import { parseArgs } from "node:util"
import { exitCodeOf, grepTerms, type Reporter, writeReports } from "./commandLine.ts"
import { ConfigurationError } from "./configurationError.ts"
import { consoleProgress } from "./report/console.ts"
import { describeFailureGroup, groupByRootCause } from "./report/text.ts"
import type { ConformanceReport } from "./report/types.ts"
import { httpUrlProblem } from "./urlOptions.ts"
import { v1aPublicKey } from "./webhookSignature.ts"

/** The text of a PEM file an option names. */
const pemOf = async (option: string, file: string): Promise<string> => {
  try {
    return await readFile(file, "utf8")
  } catch (error) {
    throw new ConfigurationError(`--${option}: cannot read ${file}: ${error instanceof Error ? error.message : ""}`)
  }
}

export const RECEIVER_HELP = `integrations-conformance receiver: does your webhook receiver verify, dedupe and order?

Usage: integrations-conformance receiver --url <url> --secret <whsec_...> [options]
       integrations-conformance receiver --url <url> --signing-key <file.pem> [options]

  --url <url>               where your receiver takes deliveries, e.g. http://localhost:3000/hooks
  --secret <whsec_...>      its signing secret (env WEBHOOK_SECRET)
  --old-secret <whsec_...>  a secret it used before a rotation whose overlap is over: signatures by it
                            must be refused (default: a secret it never had)
  --signing-key <file>      instead of --secret, for a receiver of a v1a endpoint: an ed25519 private key
                            (PEM; \`integrations-conformance keygen\` makes one) that signs the deliveries
                            v1a; your receiver verifies with its public key, printed as whpk_... (env
                            WEBHOOK_SIGNING_KEY, a file)
  --old-signing-key <file>  with --signing-key: a key whose v1a signatures must be refused
  --state-url <url>         your receiver's state probe: GET <url>?payoutId=po_... answers 200
                            {"status":"<the payout's status as recorded>","applied":<distinct events of it
                            applied>}, or 404 when none was. Without it, only the answers are checked
  --grep <id|prefix>        run only these scenarios (RECEIVER-008, or comma-separated)
  --reporter <name>[=file]  console, json or junit (repeatable; default console). Without =file a json or
                            junit report goes to --out, else to stdout (console then writes to stderr)
  --out <file>              where the json or junit reporter without its own file writes
  --timeout <seconds>       time limit of one request (default 10, as the API's deliveries)
  --list                    list the scenarios and exit
  --help

The kit POSTs events of every type the contract declares, built from its schemas and signed with
Standard Webhooks headers, then deliveries your receiver must refuse (a wrong or retired secret, a body
changed by one byte, a timestamp 10 minutes off, a missing header), a duplicate webhook-id and an event
older than the one before it. Every event has new ids, so your receiver's stored state does not matter.
Exit code: 0 every scenario that ran passed, 1 one failed, 2 the run could not start (e.g. the URL does
not answer at all).
`

const reportersOf = (specs: ReadonlyArray<string>, out: string | undefined): ReadonlyArray<Reporter> => {
  const parsed = (specs.length === 0 ? ["console"] : specs).flatMap((spec) => spec.split(",")).map((spec): Reporter => {
    const [name = "", file] = spec.split("=", 2)
    if (name !== "console" && name !== "json" && name !== "junit") {
      throw new ConfigurationError(`unknown reporter ${name} (console, json, junit)`)
    }
    if (name === "console" && file !== undefined) {
      throw new ConfigurationError("the console reporter writes to the terminal")
    }
    return { name, file }
  })
  if (parsed.filter((reporter) => reporter.name !== "console" && reporter.file === undefined).length > 1) {
    throw new ConfigurationError("several json/junit reporters need a file each: --reporter junit=report.xml")
  }
  return parsed.map((reporter) =>
    reporter.name !== "console" && reporter.file === undefined ? { ...reporter, file: out } : reporter
  )
}

const httpUrl = (option: string, text: string | undefined): string => {
  if (text === undefined) throw new ConfigurationError(`--${option} <url> must be an http or https URL`)
  const problem = httpUrlProblem(option, text)
  if (problem !== undefined) throw new ConfigurationError(problem)
  return text
}

const summary = (report: ConformanceReport): string => {
  const failed = report.scenarios.filter((result) => result.failure !== undefined)
  return [
    "",
    ...groupByRootCause(failed).map((group) => `✗ ${describeFailureGroup(group)}\n`),
    `${report.summary.selected} scenarios, ${(report.durationMs / 1000).toFixed(1)} s`,
    report.claim,
    `receiver: ${report.summary.passed} passed, ${report.summary.failed + report.summary.errors} failed`,
    ""
  ].join("\n")
}

export const receiver = async (argv: ReadonlyArray<string>, env: NodeJS.ProcessEnv): Promise<number> => {
  const { values } = parseArgs({
    args: [...argv],
    strict: true,
    allowPositionals: false,
    options: {
      url: { type: "string" },
      secret: { type: "string" },
      "old-secret": { type: "string" },
      "signing-key": { type: "string" },
      "old-signing-key": { type: "string" },
      "state-url": { type: "string" },
      grep: { type: "string", multiple: true },
      reporter: { type: "string", multiple: true },
      out: { type: "string" },
      timeout: { type: "string" },
      list: { type: "boolean" },
      help: { type: "boolean", short: "h" }
    }
  })
  if (values.help === true) {
    process.stdout.write(RECEIVER_HELP)
    return 0
  }
  const kit = await import("./receiverKit.ts")
  const grep = grepTerms(values.grep)
  if (values.list === true) {
    const lines = kit.selectReceiverScenarios(grep).map((scenario) => `${scenario.id.padEnd(14)} ${scenario.title}`)
    process.stdout.write(`${lines.join("\n")}\n`)
    return 0
  }
  const url = httpUrl("url", values.url)
  const keyFile = values["signing-key"] ?? (values.secret === undefined ? env["WEBHOOK_SIGNING_KEY"] : undefined)
  const secret = keyFile === undefined ? values.secret ?? env["WEBHOOK_SECRET"] : await pemOf("signing-key", keyFile)
  if (keyFile !== undefined && values.secret !== undefined) {
    throw new ConfigurationError("--secret (v1) or --signing-key (v1a): one of them")
  }
  if (secret === undefined || !(kit.isWebhookSecret(secret) || kit.isV1aSigningKey(secret))) {
    throw new ConfigurationError(
      keyFile === undefined
        ? "--secret <whsec_...> is required (or WEBHOOK_SECRET): whsec_ followed by base64; or --signing-key <file.pem> for v1a"
        : `--signing-key ${keyFile}: not an ed25519 private key in PEM`
    )
  }
  const oldSecret = values["old-signing-key"] === undefined
    ? values["old-secret"]
    : await pemOf("old-signing-key", values["old-signing-key"])
  const timeout = Number(values.timeout ?? "10")
  if (!Number.isFinite(timeout) || timeout <= 0) {
    throw new ConfigurationError(`--timeout must be seconds, got ${values.timeout}`)
  }
  const reporters = reportersOf(values.reporter ?? [], values.out)
  const stream = reporters.some((r) => r.name !== "console" && r.file === undefined) ? process.stderr : process.stdout
  const showConsole = reporters.some((r) => r.name === "console")
  const progress = consoleProgress((text) => stream.write(text), { color: false })

  const report = await kit.runReceiverConformance({
    url,
    secret,
    oldSecret,
    stateUrl: values["state-url"] === undefined ? undefined : httpUrl("state-url", values["state-url"]),
    grep,
    requestTimeoutMs: Math.round(timeout * 1000),
    onEvent: showConsole
      ? (event) => {
        if (event._tag === "RunStarted") {
          stream.write(`Receiver conformance: ${event.selected} of ${event.total} scenarios against ${url}\n`)
          stream.write(
            kit.isV1aSigningKey(secret)
              ? `signed v1a (ed25519): your receiver verifies with ${v1aPublicKey(secret)}\n\n`
              : "signed v1 (HMAC-SHA256) with the secret given\n\n"
          )
        } else {
          progress(event)
        }
      }
      : undefined
  })
  if (showConsole) stream.write(summary(report))
  await writeReports(reporters, report, showConsole ? (text) => stream.write(text) : undefined)
  // a receiver run is never NOTHING RAN (its verdicts: conformant, partial, not_conformant), so this is 0 or 1
  return exitCodeOf(report)
}
