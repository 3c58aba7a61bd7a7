/**
 * `integrations-conformance compat <released-openapi.json> <new-openapi.json>`: a contract change held to the
 * versioning rules (./compat.ts). Exit 0 when every change is additive, 1 when one breaks a client of the released
 * contract, 2 when a document cannot be read.
 */
import { readFile } from "node:fs/promises"
import { parseArgs } from "node:util"
import { type Acknowledgment, acknowledge, type CompatChange, compareContracts } from "./compat.ts"

export const COMPAT_HELP = `integrations-conformance compat: does a contract change keep the versioning rules?

Usage: integrations-conformance compat <released-openapi.json> <new-openapi.json> [--json]
                                         [--acknowledged <file>]

Compares the two OpenAPI documents (README#versioning): breaking is an operation, webhook, field, parameter or
value removed, a new required input, an input narrowed, a type changed, a response field made optional, a new value
of a closed set (a status, an errorCode, a token), a new ErrorBody field; additive is a new operation, webhook,
optional input, response field, event type or error status. Prints each change, breaking ones first.
  --json                  the changes as a JSON array instead
  --acknowledged <file>   breaking changes this release accepts on purpose: a JSON array of
                          {"where", "what", "why"}, where and what as this check prints them; each is
                          printed as acknowledged with its why, and one that names no change fails the check
Exit code: 0 only additive or acknowledged changes (or none), 1 a breaking change (or a stale
acknowledgment), 2 a document or the acknowledgments cannot be read.
`

const readDocument = async (file: string) => {
  const document = JSON.parse(await readFile(file, "utf8")) as unknown
  if (typeof document !== "object" || document === null || !("openapi" in document) || !("paths" in document)) {
    throw new Error("not an OpenAPI document (no openapi or paths)")
  }
  return document as Readonly<Record<string, unknown>>
}

const readAcknowledgments = async (file: string): Promise<ReadonlyArray<Acknowledgment>> => {
  const parsed = JSON.parse(await readFile(file, "utf8")) as unknown
  const valid = Array.isArray(parsed) && parsed.every((each: unknown) =>
    typeof each === "object" && each !== null &&
    ["where", "what", "why"].every((key) => typeof (each as Record<string, unknown>)[key] === "string")
  )
  if (!valid) throw new Error("not a JSON array of {\"where\", \"what\", \"why\"} strings")
  return parsed as ReadonlyArray<Acknowledgment>
}

const line = (change: CompatChange) =>
  `${change.kind === "breaking" ? "BREAKING" : "additive"}  ${change.where}: ${change.what}`

export const compat = async (argv: ReadonlyArray<string>): Promise<number> => {
  let parsed
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: { json: { type: "boolean" }, acknowledged: { type: "string" }, help: { type: "boolean" } }
    })
  } catch (error) {
    process.stderr.write(`compat: ${error instanceof Error ? error.message : String(error)}\n${COMPAT_HELP}`)
    return 2
  }
  if (parsed.values.help === true) {
    process.stdout.write(COMPAT_HELP)
    return 0
  }
  const [released, next, ...extra] = parsed.positionals
  if (released === undefined || next === undefined || extra.length > 0) {
    process.stderr.write(COMPAT_HELP)
    return 2
  }
  const documents = await Promise.all(
    [released, next].map((file) =>
      readDocument(file).catch((error: unknown) => `${file}: ${error instanceof Error ? error.message : String(error)}`)
    )
  )
  const problems = documents.filter((document): document is string => typeof document === "string")
  if (problems.length > 0) {
    process.stderr.write(`compat: ${problems.join("; ")}\n`)
    return 2
  }
  const changes = compareContracts(
    documents[0] as Readonly<Record<string, unknown>>,
    documents[1] as Readonly<Record<string, unknown>>
  )
  const acknowledgments = parsed.values.acknowledged === undefined
    ? []
    : await readAcknowledgments(parsed.values.acknowledged).catch((error: unknown) =>
      `${parsed.values.acknowledged}: ${error instanceof Error ? error.message : String(error)}`
    )
  if (typeof acknowledgments === "string") {
    process.stderr.write(`compat: ${acknowledgments}\n`)
    return 2
  }
  const { acknowledged, unacknowledged, unused } = acknowledge(changes, acknowledgments)
  const additive = changes.filter((change) => change.kind === "additive")
  if (parsed.values.json === true) {
    process.stdout.write(`${JSON.stringify(changes, null, 2)}\n`)
  } else {
    for (const change of [...unacknowledged, ...additive]) process.stdout.write(`${line(change)}\n`)
    for (const change of acknowledged) {
      process.stdout.write(`acknowledged  ${change.where}: ${change.what}\n    why: ${change.why}\n`)
    }
    for (const each of unused) {
      process.stdout.write(`STALE ACKNOWLEDGMENT  ${each.where}: ${each.what} (no such change: remove it)\n`)
    }
    process.stdout.write(
      `compat: ${unacknowledged.length} breaking, ${acknowledged.length} acknowledged, ${additive.length} additive change(s)${
        unused.length === 0 ? "" : `, ${unused.length} stale acknowledgment(s)`
      } from ${released} to ${next}\n`
    )
  }
  return unacknowledged.length > 0 || unused.length > 0 ? 1 : 0
}
