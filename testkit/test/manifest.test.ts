/**
 * What npm reads before it installs the kit: the vitest peer range admits every vitest major the vitest entry works
 * with (an integrator on the newest vitest got ERESOLVE from the old `^3.2.7`), and both packages say their licence
 * and where their source lives. scripts/kit-next-to-vitest.sh installs the packed kit next to each of these vitest
 * versions from the registry and runs it (CI); this test holds the manifest to that list without the network.
 */
import { readdir, readFile } from "node:fs/promises"
import { describe, expect, it } from "vitest"
import { suiteGrep } from "../src/describeConformance.ts"
import { MINIMUM_NODE, refusalOfNode } from "../src/nodeVersion.ts"

const repo = new URL("../../", import.meta.url)

interface Manifest {
  readonly name: string
  readonly license?: string
  readonly repository?: { readonly type: string; readonly url: string; readonly directory: string }
  readonly files?: ReadonlyArray<string>
  readonly peerDependencies?: Record<string, string>
  readonly peerDependenciesMeta?: Record<string, { readonly optional?: boolean }>
}

const manifest = async (path: string) => JSON.parse(await readFile(new URL(path, repo), "utf8")) as Manifest

/**
 * The vitest versions the vitest entry (describe, beforeAll with a timeout, it, context.skip) was run with through
 * scripts/kit-next-to-vitest.sh: the first and the newest release of each major (4.0.0 itself fails any test file
 * with today's vite, "Unknown method: getBuiltins", so 4.0.18 stands for 4.0). vitest 2 has context.skip() without a
 * note, so there a skipped scenario's reason is not shown; the test is skipped all the same.
 */
const SUPPORTED_VITEST = ["2.0.0", "2.1.9", "3.0.0", "3.2.7", "4.0.18", "4.1.12", "5.0.0", "5.1.1"] as const
/** Majors the entry has not been run with: the range must not claim them. */
const UNSUPPORTED_VITEST = ["1.6.1", "6.0.0"] as const

/** npm's `^X.Y.Z` (X > 0): the same major, at least X.Y.Z. Other comparators are refused, so this check is exact. */
const satisfiesCarets = (version: string, range: string): boolean =>
  range.split("||").map((part) => part.trim()).some((part) => {
    const caret = /^\^([1-9]\d*)\.(\d+)\.(\d+)$/.exec(part)
    if (caret === null) throw new Error(`the vitest peer range is written as ^X.Y.Z alternatives; got "${part}"`)
    const [major, minor, patch] = caret.slice(1).map(Number) as [number, number, number]
    const [vMajor, vMinor, vPatch] = version.split(".").map(Number) as [number, number, number]
    return vMajor === major && (vMinor > minor || (vMinor === minor && vPatch >= patch))
  })

describe("the kit's vitest peer range", () => {
  it("the check itself: the old ^3.2.7 admits 3.2.7 only among the supported versions", () => {
    expect(SUPPORTED_VITEST.filter((version) => satisfiesCarets(version, "^3.2.7"))).toEqual(["3.2.7"])
  })

  it("admits every supported vitest, and the one this repository runs, and no other major", async () => {
    const range = (await manifest("testkit/package.json")).peerDependencies?.["vitest"] ?? ""
    const installed = (await manifest("node_modules/vitest/package.json") as unknown as { version: string }).version
    for (const version of [...SUPPORTED_VITEST, installed]) {
      expect(satisfiesCarets(version, range), `vitest ${version} in "${range}"`).toBe(true)
    }
    for (const version of UNSUPPORTED_VITEST) {
      expect(satisfiesCarets(version, range), `vitest ${version} in "${range}"`).toBe(false)
    }
  })

  it("stays optional: the CLI and the library need no vitest", async () => {
    expect((await manifest("testkit/package.json")).peerDependenciesMeta?.["vitest"]?.optional).toBe(true)
  })
})

describe("the kit's install footprint", () => {
  it("does not depend on viem (~80 MB installed), nor does the contract: their own Keccak-256, EIP-55 (contracts/src/Evm.ts) and calldata decoding", async () => {
    const pkg = (await manifest("testkit/package.json")) as Manifest & {
      readonly dependencies?: Record<string, string>
    }
    // none at all: effect and the contract are bundled into dist/ (scripts/build-kit.mjs; pack.test.ts checks the bundle)
    expect(pkg.dependencies ?? {}).toEqual({})
    const sources = (await readdir(new URL("testkit/src/", repo), { recursive: true })).filter((file) =>
      file.endsWith(".ts")
    )
    expect(sources.length).toBeGreaterThan(20)
    for (const file of sources) {
      expect(await readFile(new URL(`testkit/src/${file}`, repo), "utf8"), file).not.toMatch(/from "viem/)
    }
    const contract = (await manifest("contracts/package.json")) as Manifest & {
      readonly dependencies?: Record<string, string>
    }
    // the typed-client package uses the integrator's effect
    expect([contract.dependencies ?? {}, contract.peerDependencies]).toEqual([{}, { effect: "^4.1.0" }])
    const contractSources = (await readdir(new URL("contracts/src/", repo))).filter((file) => file.endsWith(".ts"))
    for (const file of contractSources) {
      expect(await readFile(new URL(`contracts/src/${file}`, repo), "utf8"), file).not.toMatch(/from "viem/)
    }
  })
})

describe("licence and source of both packages", () => {
  for (
    const [dir, name] of [["contracts", "@cop-integrations/contracts"], [
      "testkit",
      "@cop-integrations/testkit"
    ]] as const
  ) {
    it(`${name}: Apache-2.0, the repository and its directory, README and LICENSE in the files`, async () => {
      const pkg = await manifest(`${dir}/package.json`)
      expect(pkg.name).toBe(name)
      expect(pkg.license).toBe("Apache-2.0")
      expect(pkg.repository).toEqual({
        type: "git",
        url: "git+https://github.com/cop-integrations/integrations-api.git",
        directory: dir
      })
      expect(pkg.files).toEqual(expect.arrayContaining(["dist", "README.md", "LICENSE"]))
      expect(await readFile(new URL(`${dir}/README.md`, repo), "utf8")).toMatch(/Apache-2\.0/)
    })
  }

  it("no README tells to install them from the registry (they are not published): they install from the tarballs", async () => {
    const tarballs = [
      ["README.md", "testkit"], // the kit alone: the contract is bundled into it
      ["contracts/README.md", "contracts"],
      ["testkit/README.md", "testkit"] // the kit alone: the contract is bundled into it
    ] as const
    for (const [readme, pkg] of tarballs) {
      const text = await readFile(new URL(readme, repo), "utf8")
      expect(text, readme).not.toMatch(/npm (?:install|i|add)\b[^\n`]*@cop-integrations\//)
      expect(text, readme).toMatch(new RegExp(`npm install [^\\n]*\\./cop-integrations-${pkg}-0\\.1\\.0\\.tgz`))
    }
  })

  it("the repository's LICENSE is the Apache License 2.0", async () => {
    const license = await readFile(new URL("LICENSE", repo), "utf8")
    expect(license).toContain("Apache License\n                           Version 2.0, January 2004")
  })
})

describe("describeConformance's scenario filter", () => {
  const options = { baseUrl: "http://127.0.0.1:1", apiKey: "k", grep: ["AUTH"] }
  it("is the suite's grep when given (it was ignored when the options were an object)", () => {
    expect(suiteGrep(options, { grep: ["HEALTH-001"] })).toEqual(["HEALTH-001"])
    expect(suiteGrep(() => options, { grep: ["HEALTH-001"] })).toEqual(["HEALTH-001"])
  })
  it("else the options' own grep, or none for options given as a function", () => {
    expect(suiteGrep(options, {})).toEqual(["AUTH"])
    expect(suiteGrep(() => options, {})).toEqual([])
  })
})

describe("the kit's supported Node versions", () => {
  it("engines says what src/nodeVersion.ts enforces", async () => {
    const kit = (await manifest("testkit/package.json")) as Manifest & { readonly engines?: Record<string, string> }
    expect(kit.engines).toEqual({ node: `>=${MINIMUM_NODE}` })
    expect([refusalOfNode("v22.11.0") !== undefined, refusalOfNode("20.19.0") !== undefined]).toEqual([true, true])
    expect([refusalOfNode("22.12.0"), refusalOfNode("v24.0.0"), refusalOfNode("26.1.0")]).toEqual([
      undefined,
      undefined,
      undefined
    ])
  })
})
