/**
 * The published form: `npm pack` of contracts/ and testkit/, laid out in an empty project as `npm install`
 * would (the tarballs unpacked into node_modules, the `bin` linked, each declared dependency or peer linked
 * from this repo's node_modules: no registry, so `npm test` stays off the network), answers
 * `integrations-conformance --help`, type-checks against its declarations, and runs the full kit against a
 * started service, writing a JUnit file with one testcase per scenario. The kit is bundled
 * (scripts/build-kit.mjs): no runtime dependency, no import but node: builtins and vitest, under 5 MB unpacked,
 * its declarations checked without effect installed; an unsupported Node gets one line.
 *
 * The packages are packed from a copy of the workspace (pack swaps package.json for its published form
 * while it runs; the repo's own must not change under the other test files).
 */
import { execFile, execFileSync } from "node:child_process"
import { chmod, cp, mkdir, mkdtemp, readdir, readFile, rename, rm, symlink, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { build } from "esbuild"
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
    execFile(
      command,
      [...args],
      { cwd, env: { ...process.env, NO_COLOR: "1", ...env }, maxBuffer: 32 << 20 },
      (error, stdout, stderr) => {
        resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr })
      }
    )
  })

const expectSuccess = (outcome: Outcome, what: string) => {
  if (outcome.code !== 0) throw new Error(`${what} exited ${outcome.code}\n${outcome.stdout}\n${outcome.stderr}`)
}

/** The repository's tsc over `dir`/use.ts, strict, NodeNext, without @types (an integrator's project). */
const typeCheck = async (dir: string, options: { readonly skipLibCheck: boolean }) => {
  const compilerOptions = {
    module: "NodeNext",
    moduleResolution: "NodeNext",
    target: "ES2022",
    strict: true,
    noEmit: true,
    skipLibCheck: options.skipLibCheck,
    types: []
  }
  await writeFile(join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions, files: ["use.ts"] }))
  return run(process.execPath, [join(repo, "node_modules", "typescript", "bin", "tsc"), "-p", "."], dir)
}

interface PackResult {
  readonly size: number
  readonly unpackedSize: number
}

let work = ""
let consumer = ""
const packedSizes: Record<string, PackResult> = {}
let server: TestServer | undefined

/** contracts/ and testkit/ as they are in the repo, with the files their build reads. */
const stageWorkspace = async (stage: string) => {
  const copy = (path: string) => cp(join(repo, path), join(stage, path), { recursive: true })
  await Promise.all([
    copy("tsconfig.json"),
    copy("LICENSE"),
    copy("scripts/pack-manifest.mjs"),
    copy("scripts/build-kit.mjs"),
    ...["package.json", "tsconfig.build.json", "src", "openapi.json", "README.md"].map((file) =>
      copy(`contracts/${file}`).catch(() => undefined)
    ),
    ...["package.json", "tsconfig.build.json", "src", "README.md"].map((file) => copy(`testkit/${file}`))
  ])
  await symlink(join(repo, "node_modules"), join(stage, "node_modules"), "dir")
}

interface Manifest {
  readonly name: string
  readonly version: string
  readonly engines?: Record<string, string>
  readonly bin?: Record<string, string>
  readonly dependencies?: Record<string, string>
  readonly peerDependencies?: Record<string, string>
}

const readManifest = async (dir: string) => JSON.parse(await readFile(join(dir, "package.json"), "utf8")) as Manifest

const linkPackage = async (name: string, target: string) => {
  const link = join(consumer, "node_modules", name)
  await mkdir(dirname(link), { recursive: true })
  await symlink(target, link, "dir").catch((error: NodeJS.ErrnoException) => {
    if (error.code !== "EEXIST") throw error
  })
}

/** What `npm install <tarball>` does, without a registry: unpack, link its bins and its pinned dependencies. */
const installOffline = async (tarball: string) => {
  const unpacked = join(work, "unpacked", tarball.split("/").at(-1)!)
  await mkdir(unpacked, { recursive: true })
  expectSuccess(await run("tar", ["-xzf", tarball, "--strip-components=1", "-C", unpacked], work), `unpack ${tarball}`)
  const manifest = await readManifest(unpacked)
  const installed = join(consumer, "node_modules", manifest.name)
  await mkdir(dirname(installed), { recursive: true })
  await rename(unpacked, installed)
  for (const [bin, path] of Object.entries(manifest.bin ?? {})) {
    const link = join(consumer, "node_modules", ".bin", bin)
    await mkdir(dirname(link), { recursive: true })
    await symlink(relative(dirname(link), join(consumer, "node_modules", manifest.name, path)), link)
    await chmod(join(installed, path), 0o755)
  }
  const wanted = { ...manifest.peerDependencies, ...manifest.dependencies }
  for (const [name, range] of Object.entries(wanted)) {
    if (name.startsWith("@cop-integrations/")) continue
    const provided = join(repo, "node_modules", name)
    const { version } = await readManifest(provided)
    // dependencies are exact pins; peer ranges are checked by the type-check and the run below
    if (manifest.dependencies?.[name] !== undefined) expect(`${name}@${version}`).toBe(`${name}@${range}`)
    await linkPackage(name, provided)
  }
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "conformance-pack-"))
  const [stage, tarballs] = [join(work, "workspace"), join(work, "tarballs")]
  consumer = join(work, "consumer")
  await Promise.all([mkdir(stage), mkdir(tarballs), mkdir(consumer)])
  await stageWorkspace(stage)
  for (const pkg of ["contracts", "testkit"]) {
    const packed = await run("npm", ["pack", "--json", "--pack-destination", tarballs], join(stage, pkg))
    expectSuccess(packed, `npm pack ${pkg}`)
    const [{ size, unpackedSize }] = JSON.parse(packed.stdout.slice(packed.stdout.search(/^\[$/m))) as [PackResult]
    packedSizes[pkg] = { size, unpackedSize }
  }
  await writeFile(
    join(consumer, "package.json"),
    JSON.stringify({ name: "integrator-ci", private: true, type: "module" })
  )
  for (const tarball of await readdir(tarballs)) await installOffline(join(tarballs, tarball))
}, 300_000)

afterAll(async () => {
  await server?.close()
  if (work !== "") await rm(work, { recursive: true, force: true, maxRetries: 3 })
})

describe("the packed kit, installed into an empty project", () => {
  it("ships built JavaScript and declarations only, exported for import", async () => {
    const installed = join(consumer, "node_modules", "@cop-integrations")
    for (const pkg of ["contracts", "testkit"]) {
      const manifest = JSON.parse(await readFile(join(installed, pkg, "package.json"), "utf8")) as {
        exports: Record<string, unknown>
      }
      expect(manifest.exports["."]).toEqual({ types: "./dist/index.d.ts", default: "./dist/index.js" })
      expect((await readdir(join(installed, pkg))).sort()).not.toContain("src")
    }
  })

  it("carries its licence, README and source repository, and leaves the packed directory as it was", async () => {
    const installed = join(consumer, "node_modules", "@cop-integrations")
    const license = await readFile(join(repo, "LICENSE"), "utf8")
    for (const pkg of ["contracts", "testkit"]) {
      const files = await readdir(join(installed, pkg))
      expect(files).toEqual(expect.arrayContaining(["LICENSE", "README.md", "package.json", "dist"]))
      expect(await readFile(join(installed, pkg, "LICENSE"), "utf8")).toBe(license)
      expect(await readFile(join(installed, pkg, "README.md"), "utf8")).toMatch(/Apache-2\.0/)
      const manifest = JSON.parse(await readFile(join(installed, pkg, "package.json"), "utf8")) as Record<
        string,
        unknown
      >
      expect(manifest["license"]).toBe("Apache-2.0")
      expect(manifest["repository"]).toEqual({
        type: "git",
        url: "git+https://github.com/cop-integrations/integrations-api.git",
        directory: pkg
      })
      // pack-manifest.mjs copied the repository's LICENSE in for the pack only
      expect(await readdir(join(work, "workspace", pkg))).not.toContain("LICENSE")
    }
  })

  it("the kit has no runtime dependency: effect and the contract are bundled, vitest stays an optional peer", async () => {
    const kit = await readManifest(join(consumer, "node_modules", "@cop-integrations", "testkit"))
    expect(kit.dependencies ?? {}).toEqual({})
    expect(Object.keys(kit.peerDependencies ?? {})).toEqual(["vitest"])
    const contracts = await readManifest(join(consumer, "node_modules", "@cop-integrations", "contracts"))
    expect([contracts.dependencies ?? {}, contracts.peerDependencies]).toEqual([{}, { effect: "^4.1.0" }])
  })

  it("the kit's JavaScript imports nothing but node: builtins and vitest (the integrator's)", async () => {
    const installed = join(consumer, "node_modules", "@cop-integrations", "testkit")
    const imported = new Set<string>()
    // esbuild parses every import (static and dynamic) of the three entries and what they load, and keeps the bare ones.
    await build({
      entryPoints: ["dist/cli.js", "dist/index.js", "dist/vitest.js"].map((entry) => join(installed, entry)),
      bundle: true,
      write: false,
      platform: "node",
      format: "esm",
      outdir: join(work, "imports"),
      logLevel: "silent",
      plugins: [{
        name: "bare-imports",
        setup: (esbuild) => {
          esbuild.onResolve({ filter: /^[^./]/ }, (args) => {
            imported.add(args.path)
            return { path: args.path, external: true }
          })
        }
      }]
    })
    expect([...imported].filter((specifier) => !specifier.startsWith("node:") && specifier !== "vitest")).toEqual([])
    expect(imported).toContain("vitest")
  })

  it(
    "the kit's declarations type-check without effect, the contract or vitest installed (skipLibCheck off)",
    async () => {
      const alone = join(work, "kit-alone")
      await mkdir(join(alone, "node_modules", "@cop-integrations"), { recursive: true })
      // a copy, not a link: from the link's real path "effect" would resolve to the consumer's (the contract's peer)
      await cp(
        join(consumer, "node_modules", "@cop-integrations", "testkit"),
        join(alone, "node_modules", "@cop-integrations", "testkit"),
        { recursive: true }
      )
      await writeFile(
        join(alone, "use.ts"),
        [
          `import { allScenarios, runConformance, type ConformanceReport, type ScenarioInfo } from "@cop-integrations/testkit"`,
          `import { ConformanceFailure, describeConformance, type SuiteOptions } from "@cop-integrations/testkit/vitest"`,
          `export const isFailure = (error: unknown): error is ConformanceFailure => error instanceof ConformanceFailure`,
          `const report: Promise<ConformanceReport> = runConformance({ baseUrl: "http://localhost:8787", apiKey: "k" })`,
          `const first: ScenarioInfo | undefined = allScenarios[0]`,
          `const suite: SuiteOptions = { grep: ["HEALTH-001"] }`,
          `export const uses = [report, first, suite, describeConformance]`
        ].join("\n")
      )
      expectSuccess(await typeCheck(alone, { skipLibCheck: false }), "tsc of the kit alone")
    },
    60_000
  )

  it("the kit's tarball unpacks to less than 5 MB (it was 0.5 MB and pulled in 62 MB of effect and its platform)", () => {
    const kit = packedSizes["testkit"]!
    expect(kit.unpackedSize).toBeLessThan(5 * 1024 * 1024)
    expect(kit.size).toBeLessThan(kit.unpackedSize)
  })

  it("answers integrations-conformance --help through the linked bin", async () => {
    const outcome = await run(join(consumer, "node_modules", ".bin", "integrations-conformance"), ["--help"], consumer)
    expectSuccess(outcome, "--help")
    expect(outcome.stdout).toContain("Usage: integrations-conformance --base-url <url> --api-key <key>")
  }, 60_000)

  it("type-checks an integrator's use of the library and the vitest helper", async () => {
    await writeFile(
      join(consumer, "use.ts"),
      [
        `import { runConformance, type ConformanceReport } from "@cop-integrations/testkit"`,
        `import { describeConformance } from "@cop-integrations/testkit/vitest"`,
        `import { Payout } from "@cop-integrations/contracts"`,
        `const report: Promise<ConformanceReport> = runConformance({ baseUrl: "http://localhost:8787", apiKey: "k", grep: ["AUTH"] })`,
        `export const uses = [report, describeConformance, Payout]`
      ].join("\n")
    )
    expectSuccess(await typeCheck(consumer, { skipLibCheck: true }), "tsc")
  }, 60_000)

  it("runs the full kit against a started service and writes a JUnit file with one testcase per scenario", async () => {
    server = await startTestServer()
    const [first, second] = [await server.newIntegration(), await server.newIntegration()]
    const outcome = await run(
      join(consumer, "node_modules", ".bin", "integrations-conformance"),
      [
        "--base-url",
        server.baseUrl,
        "--reporter",
        "console",
        "--reporter",
        "junit=reports/junit.xml",
        "--reporter",
        "json=reports/report.json"
      ],
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
    expect([suite.tests, suite.failures, suite.errors, suite.skipped]).toEqual([
      String(allScenarios.length),
      "0",
      "0",
      "0"
    ])

    const report = JSON.parse(await readFile(join(consumer, "reports", "report.json"), "utf8")) as {
      fullConformanceClaim: boolean
    }
    expect(report.fullConformanceClaim).toBe(true)
  }, 180_000)
})

/** A Node older than the kit supports: the machine's own /usr/bin/node (v20 on this project's machines), if it is one. */
const oldNode = (() => {
  try {
    const version = execFileSync("/usr/bin/node", ["--version"], { encoding: "utf8" }).trim()
    const [major = 0, minor = 0] = version.slice(1).split(".").map(Number)
    return major < 22 || (major === 22 && minor < 12) ? { path: "/usr/bin/node", version } : undefined
  } catch {
    return undefined
  }
})()

describe.runIf(oldNode !== undefined)(`the packed kit on ${oldNode?.version ?? "an older Node"}`, () => {
  const refusal = (version: string) =>
    `Node ${version.slice(1)} is not supported: the conformance kit needs Node 22.12.0 or later (Node 22 or 24 LTS)`

  it("the CLI refuses in one line, exit 2, before loading the kit", async () => {
    const bin = join(consumer, "node_modules", "@cop-integrations", "testkit", "dist", "cli.js")
    const outcome = await run(oldNode!.path, [bin, "--base-url", "http://127.0.0.1:9", "--api-key", "k"], consumer)
    expect(outcome).toEqual({ code: 2, stdout: "", stderr: `integrations-conformance: ${refusal(oldNode!.version)}\n` })
  })

  it("the vitest entry says the same first, then throws it (vitest 5 on Node 20 fails while reporting errors)", async () => {
    const outcome = await run(
      oldNode!.path,
      ["--input-type=module", "-e", `await import("@cop-integrations/testkit/vitest")`],
      consumer
    )
    expect(outcome.code).not.toBe(0)
    expect(outcome.stderr.split("\n")[0]).toBe(`@cop-integrations/testkit/vitest: ${refusal(oldNode!.version)}`)
    expect(outcome.stderr).toContain(`Error: ${refusal(oldNode!.version)}`)
  })
})
