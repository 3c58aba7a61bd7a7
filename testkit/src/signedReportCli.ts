/**
 * `integrations-conformance verify-report <signed.json> [--public-key <base64>]`: is a signed report (`--report-signed`)
 * intact, and signed by that key? Exit 0 valid, 1 not, 2 unreadable. `integrations-conformance keygen [--out <file>]`
 * makes an ed25519 key pair for `--signing-key`: the private key as PEM (file mode 0600), the public key printed.
 */
import { readFile, writeFile } from "node:fs/promises"
import { parseArgs } from "node:util"
import { newSigningKey, verifySignedReport } from "./report/signed.ts"

export const VERIFY_REPORT_HELP = `integrations-conformance verify-report: is a signed report intact, and whose is it?

Usage: integrations-conformance verify-report <signed-report.json> [--public-key <base64>]

Checks the ed25519 signature of a report written with --report-signed over its canonical JSON. Without
--public-key it proves only that the report is unchanged since someone signed it (it names the key); with the
public key of the party that ran the kit, that this party signed it.
Exit code: 0 valid, 1 not valid, 2 the file cannot be read.
`

export const KEYGEN_HELP = `integrations-conformance keygen: a key pair to sign reports with.

Usage: integrations-conformance keygen [--out <file>]

Writes an ed25519 private key (PEM, PKCS#8) to --out (mode 0600) or stdout, and prints its public key (base64)
and key id on stderr: give the public key to whoever checks your signed reports. The same key signs v1a
deliveries for \`receiver --signing-key\`; your receiver then verifies with whpk_ and that public key.
`

export const verifyReport = async (argv: ReadonlyArray<string>): Promise<number> => {
  const { positionals, values } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: { "public-key": { type: "string" }, help: { type: "boolean" } }
  })
  if (values.help === true || positionals.length !== 1) {
    process.stdout.write(VERIFY_REPORT_HELP)
    return values.help === true ? 0 : 2
  }
  let text: string
  try {
    text = await readFile(positionals[0]!, "utf8")
  } catch (error) {
    process.stderr.write(
      `verify-report: cannot read ${positionals[0]}: ${error instanceof Error ? error.message : ""}\n`
    )
    return 2
  }
  const verdict = verifySignedReport(text, values["public-key"])
  if (!verdict.valid) {
    process.stdout.write(`NOT VALID: ${verdict.reason}\n`)
    return 1
  }
  const { report, signature } = verdict.signed
  const exchanges = report.scenarios.reduce((count, scenario) => count + scenario.exchangeHashes.length, 0)
  process.stdout.write(
    [
      `VALID: signed by key ${signature.keyId}${
        signature.ephemeral ? " (a key made for that run: intact, signer unknown)" : ""
      } at ${signature.signedAt}`,
      `${report.kit.name} ${report.kit.version} against ${report.target.baseUrl} (Integrations API ${
        report.target.version ?? "version not reported"
      }, ${report.target.mode}), seed ${report.seed}, started ${report.startedAt}`,
      `${report.claim}`,
      `${report.summary.passed} passed, ${report.summary.failed} failed of ${report.summary.selected}; ${exchanges} exchanges hashed`,
      ""
    ].join("\n")
  )
  return 0
}

export const keygen = async (argv: ReadonlyArray<string>): Promise<number> => {
  const { values } = parseArgs({
    args: [...argv],
    options: { out: { type: "string" }, help: { type: "boolean" } }
  })
  if (values.help === true) {
    process.stdout.write(KEYGEN_HELP)
    return 0
  }
  const key = newSigningKey()
  if (values.out === undefined) process.stdout.write(key.privateKeyPem)
  else await writeFile(values.out, key.privateKeyPem, { mode: 0o600, flag: "wx" })
  process.stderr.write(
    `public key: ${key.publicKey}\nkey id: ${key.keyId}\nas a webhook signing key (receiver --signing-key): whpk_${key.publicKey}\n`
  )
  return 0
}
