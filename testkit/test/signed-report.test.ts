/**
 * `--report-signed`: the JSON report with the kit's and the target's versions and a SHA-256 of every exchange, signed
 * with ed25519; `verify-report` finds it valid with the signer's public key, and not valid once one character of it is
 * changed, or when another key signed it. The kit runs as a partner runs it: its CLI, against a started service.
 */
import { execFile } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestServer, type TestServer } from "../../test/support/server.ts"
import type { SignedReport } from "../src/report/signed.ts"

const CLI = fileURLToPath(new URL("../src/cli.ts", import.meta.url))
const work = mkdtempSync(join(tmpdir(), "signed-report-"))

const cli = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      ["--import", "tsx", CLI, ...args],
      { env: { ...process.env, ...env } },
      (error, stdout, stderr) => resolve({ code: error === null ? 0 : Number(error.code ?? 1), stdout, stderr })
    )
  })

let server: TestServer
let apiKey: string
let publicKey: string
beforeAll(async () => {
  server = await startTestServer()
  apiKey = (await server.newIntegration()).apiKey
  const made = await cli(["keygen", "--out", join(work, "signer.pem")])
  expect(made.code, made.stderr).toBe(0)
  publicKey = /^public key: (\S+)$/m.exec(made.stderr)![1]!
}, 60_000)
afterAll(async () => {
  await server.close()
  rmSync(work, { recursive: true, force: true })
})

const run = async (file: string, extra: ReadonlyArray<string> = []) => {
  const ran = await cli([
    "--base-url",
    server.baseUrl,
    "--grep",
    "HEALTH,QUOTE-002,PAYOUT-001",
    "--report-signed",
    file,
    ...extra
  ], {
    CONFORMANCE_API_KEY: apiKey
  })
  expect(ran.code, ran.stdout + ran.stderr).toBe(0)
  return { ran, signed: JSON.parse(readFileSync(file, "utf8")) as SignedReport }
}

describe("a signed report", () => {
  it(
    "names the kit and the target's version, hashes every exchange, and verifies with the signer's public key",
    async () => {
      const file = join(work, "signed.json")
      const { ran, signed } = await run(file, ["--signing-key", join(work, "signer.pem")])
      expect(ran.stdout).toContain(`signed report: ${file} (key ${signed.signature.keyId})`)
      expect(signed.format).toBe("integrations-conformance-signed-report/1")
      expect(signed.signature).toMatchObject({ algorithm: "ed25519", publicKey, ephemeral: false })
      expect(signed.report.kit.name).toBe("@cop-integrations/testkit")
      expect(signed.report.target.version).toMatch(/^\d+\.\d+\.\d+$/)
      for (const scenario of signed.report.scenarios.filter((each) => each.status === "passed")) {
        expect(scenario.exchangeHashes.length, scenario.id).toBe(scenario.requests.length)
        for (const hash of scenario.exchangeHashes) expect(hash).toMatch(/^[0-9a-f]{64}$/)
      }
      expect(new Set(signed.report.scenarios.flatMap((each) => each.exchangeHashes)).size).toBeGreaterThan(5)

      const verified = await cli(["verify-report", file, "--public-key", publicKey])
      expect(verified.code, verified.stdout).toBe(0)
      expect(verified.stdout).toMatch(new RegExp(`^VALID: signed by key ${signed.signature.keyId} at `))
      expect(verified.stdout).toContain(
        `against ${server.baseUrl} (Integrations API ${signed.report.target.version}, mock)`
      )
      expect(verified.stdout).toContain("PASSED")
    },
    120_000
  )

  it("one character changed (a hash, a status, the claim) is NOT VALID; so is another key's signature", async () => {
    const file = join(work, "tampered-source.json")
    const { signed } = await run(file, ["--signing-key", join(work, "signer.pem")])
    const text = readFileSync(file, "utf8")
    const [scenario] = signed.report.scenarios
    const firstHash = scenario!.exchangeHashes[0]!
    const changes = [
      text.replace(firstHash, `${firstHash.slice(0, -1)}${firstHash.endsWith("0") ? "1" : "0"}`),
      text.replace("\"status\": \"passed\"", "\"status\": \"failed\""),
      text.replace(signed.report.claim, `${signed.report.claim}.`)
    ]
    for (const [index, changed] of changes.entries()) {
      expect(changed).not.toBe(text)
      const tampered = join(work, `tampered-${index}.json`)
      writeFileSync(tampered, changed)
      const verdict = await cli(["verify-report", tampered, "--public-key", publicKey])
      expect(verdict.code, verdict.stdout).toBe(1)
      expect(verdict.stdout).toMatch(/^NOT VALID: the signature does not match the report/)
    }
    // laid out again (another indentation, keys in another order) it is the same report
    const relaid = join(work, "relaid.json")
    writeFileSync(relaid, JSON.stringify({ signature: signed.signature, report: signed.report, format: signed.format }))
    expect((await cli(["verify-report", relaid, "--public-key", publicKey])).code).toBe(0)

    const other = join(work, "other-signer.json")
    await run(other)
    const byOther = await cli(["verify-report", other, "--public-key", publicKey])
    expect(byOther.code).toBe(1)
    expect(byOther.stdout).toMatch(/^NOT VALID: signed by key [0-9a-f]{16}, not by the expected public key/)
    const unpinned = await cli(["verify-report", other])
    expect(unpinned.code).toBe(0)
    expect(unpinned.stdout).toContain("(a key made for that run: intact, signer unknown)")
  }, 180_000)

  it("refuses a signing key that is not ed25519, and one without --report-signed", async () => {
    writeFileSync(join(work, "rsa.pem"), "-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n")
    const broken = await cli([
      "--base-url",
      server.baseUrl,
      "--report-signed",
      join(work, "x.json"),
      "--signing-key",
      join(work, "rsa.pem")
    ], {
      CONFORMANCE_API_KEY: apiKey
    })
    expect(broken.code).toBe(2)
    expect(broken.stderr).toContain("--signing-key")
    const alone = await cli(["--base-url", server.baseUrl, "--signing-key", join(work, "signer.pem")], {
      CONFORMANCE_API_KEY: apiKey
    })
    expect(alone.code).toBe(2)
    expect(alone.stderr).toContain("--signing-key signs the report --report-signed <file> writes")
  }, 60_000)
})
