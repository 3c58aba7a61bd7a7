/**
 * The published form: `npm pack` of contracts/ and testkit/, installed into an empty directory as an
 * integrator would, answers `npx integrations-conformance --help`, type-checks against its declarations,
 * and runs the full kit against a started service, writing a JUnit file with one testcase per scenario.
 *
 * The packages are packed from a copy of the workspace (pack swaps package.json for its published form
 * while it runs; the repo's own must not change under the other test files).
 */
import { execFile } from "node:child_process"
import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { XMLParser, XMLValidator } from "fast-xml-parser"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestServer, type TestServer } from "../../test/support/server.ts"
import { allScenarios } from "../src/scenarios/index.ts"

const repo = fileURLToPath(new URL("../../", import.meta.url))

interface Outcome {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

const run = (command: string, args: ReadonlyArray<string>, cwd: string, env: NodeJS.ProcessEnv = {}) =>
  new Promise<Outcome>((resolve) => {
    execFile(command, [...args], { cwd, env: { ...process.env, NO_COLOR: "1", ...env }, maxBuffer: 32 << 20 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr })
    })
  })

const expectSuccess = (outcome: Outcome, what: string) => {
  if (outcome.code !== 0) throw new Error(`${what} exited ${outcome.code}\n${outcome.stdout}\n${outcome.stderr}`)
}

let work = ""
let consumer = ""
let server: TestServer | undefined

/** contracts/ and testkit/ as they are in the repo, with the files their build reads. */
const stageWorkspace = async (stage: string) => {
  const copy = (path: string) => cp(join(repo, path), join(stage, path), { recursive: true })
  await Promise.all([
    copy("tsconfig.json"),
    copy("scripts/pack-manifest.mjs"),
    ...["package.json", "tsconfig.build.json", "src", "openapi.json"].map((file) => copy(`contracts/${file}`).catch(() => undefined)),
    ...["package.json", "tsconfig.build.json", "src", "README.md"].map((file) => copy(`testkit/${file}`))
  ])
  await symlink(join(repo, "node_modules"), join(stage, "node_modules"), "dir")
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "conformance-pack-"))
  const [stage, tarballs] = [join(work, "workspace"), join(work, "tarballs")]
  consumer = join(work, "consumer")
  await Promise.all([mkdir(stage), mkdir(tarballs), mkdir(consumer)])
  await stageWorkspace(stage)
  for (const pkg of ["contracts", "testkit"]) {
    expectSuccess(await run("npm", ["pack", "--pack-destination", tarballs], join(stage, pkg)), `npm pack ${pkg}`)
  }
  await writeFile(join(consumer, "package.json"), JSON.stringify({ name: "integrator-ci", private: true, type: "module" }))
  const packed = (await readdir(tarballs)).map((file) => join(tarballs, file))
  expectSuccess(await run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", ...packed], consumer), "npm install")
}, 300_000)

afterAll(async () => {
  await server?.close()
  if (work !== "") await rm(work, { recursive: true, force: true, maxRetries: 3 })
})

describe("the packed kit, installed into an empty project", () => {
  it("ships built JavaScript and declarations only, exported for import", async () => {
    const installed = join(consumer, "node_modules", "@cop-integrations")
    for (const pkg of ["contracts", "testkit"]) {
      const manifest = JSON.parse(await readFile(join(installed, pkg, "package.json"), "utf8")) as { exports: Record<string, unknown> }
      expect(manifest.exports["."]).toEqual({ types: "./dist/index.d.ts", default: "./dist/index.js" })
      expect((await readdir(join(installed, pkg))).sort()).not.toContain("src")
    }
  })

  it("answers npx integrations-conformance --help", async () => {
    const outcome = await run("npx", ["integrations-conformance", "--help"], consumer)
    expectSuccess(outcome, "--help")
    expect(outcome.stdout).toContain("Usage: integrations-conformance --base-url <url> --api-key <key>")
  }, 60_000)

  it("type-checks an integrator's use of the library and the vitest helper", async () => {
    await writeFile(join(consumer, "use.ts"), [
      `import { runConformance, type ConformanceReport } from "@cop-integrations/testkit"`,
      `import { describeConformance } from "@cop-integrations/testkit/vitest"`,
      `import { Payout } from "@cop-integrations/contracts"`,
      `const report: Promise<ConformanceReport> = runConformance({ baseUrl: "http://localhost:8787", apiKey: "k", grep: ["AUTH"] })`,
      `export const uses = [report, describeConformance, Payout]`
    ].join("\n"))
    await writeFile(join(consumer, "tsconfig.json"), JSON.stringify({
      compilerOptions: { module: "NodeNext", moduleResolution: "NodeNext", target: "ES2022", strict: true, noEmit: true, skipLibCheck: true, types: [] },
      files: ["use.ts"]
    }))
    const outcome = await run(process.execPath, [join(repo, "node_modules", "typescript", "bin", "tsc"), "-p", "."], consumer)
    expectSuccess(outcome, "tsc")
  }, 60_000)

  it("runs the full kit against a started service and writes a JUnit file with one testcase per scenario", async () => {
    server = await startTestServer()
    const [first, second] = [await server.newIntegration(), await server.newIntegration()]
    const outcome = await run(
      "npx",
      ["integrations-conformance", "--base-url", server.baseUrl, "--reporter", "console", "--reporter", "junit=reports/junit.xml", "--reporter", "json=reports/report.json"],
      consumer,
      { CONFORMANCE_API_KEY: first.apiKey, CONFORMANCE_SECOND_API_KEY: second.apiKey }
    )
    expectSuccess(outcome, "the full run")
    expect(outcome.stdout).toContain("CONFORMANT: every scenario of the kit ran and passed")

    const xml = await readFile(join(consumer, "reports", "junit.xml"), "utf8")
    expect(XMLValidator.validate(xml)).toBe(true)
    const suite = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "" }).parse(xml).testsuites.testsuite
    const names = (suite.testcase as ReadonlyArray<{ name: string }>).map((testcase) => testcase.name.split(" ")[0])
    expect(names).toEqual(allScenarios.map((scenario) => scenario.id))
    expect([suite.tests, suite.failures, suite.errors, suite.skipped]).toEqual([String(allScenarios.length), "0", "0", "0"])

    const report = JSON.parse(await readFile(join(consumer, "reports", "report.json"), "utf8")) as { fullConformanceClaim: boolean }
    expect(report.fullConformanceClaim).toBe(true)
  }, 180_000)
})
