/**
 * As root, PostgreSQL runs as the unprivileged `postgres` user, who cannot pass through a private (0700) directory:
 * a clone under /root, or under `mktemp -d`, failed `npm start` and `npm test` with `initdb … EACCES` (issue #18).
 * Here the project is laid out under a fresh 0700 directory (its node_modules hard-linked, so nothing is downloaded)
 * and started from there, as a user who cloned it there would.
 */
import { execFileSync } from "node:child_process"
import { cpSync, existsSync, lstatSync, mkdtempSync, readlinkSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { repoRoot, runScript, startServiceProcess } from "../support/process.ts"

const asRoot = process.getuid?.() === 0
if (!asRoot) {
  process.stderr.write(
    "private-directory.test.ts: not root, so PostgreSQL runs as this user and there is nothing to test\n"
  )
}

describe.runIf(asRoot)("as root, the project in a private (0700) directory", () => {
  let parent: string
  let project: string
  const dataDir = () => join(project, ".data", "postgres")

  beforeAll(() => {
    parent = mkdtempSync(join(tmpdir(), "private-"))
    expect(statSync(parent).mode & 0o777).toBe(0o700)
    project = join(parent, "app")
    for (const part of ["src", "contracts", "scripts", "package.json", "tsconfig.json"]) {
      cpSync(join(repoRoot, part), join(project, part), { recursive: true })
    }
    execFileSync("cp", ["-al", join(repoRoot, "node_modules"), join(project, "node_modules")])
  })

  afterAll(() => {
    // The data lives where the unprivileged user can reach it; the project's .data/postgres links to it.
    if (project !== undefined && existsSync(dataDir()) && lstatSync(dataDir()).isSymbolicLink()) {
      rmSync(dirname(readlinkSync(dataDir())), { recursive: true, force: true })
    }
    if (parent !== undefined) rmSync(parent, { recursive: true, force: true })
  })

  it(
    "the service starts on the embedded PostgreSQL, keeps its data at .data/postgres, serves, and stops it on SIGTERM",
    async () => {
      const service = await startServiceProcess({ DATABASE_URL: "" }, { cwd: project })
      const key = /(cop_test_pk_[0-9A-Za-z]+)/.exec(service.stdout())?.[1]
      expect(key, service.stdout()).toBeDefined()
      const quote = await fetch(`${service.baseUrl}/api/integrations/breb/quote`, {
        headers: { authorization: `Bearer ${key}` }
      })
      expect(quote.status).toBe(200)
      expect(existsSync(join(dataDir(), "PG_VERSION"))).toBe(true)
      expect(service.stdout()).toContain(readlinkSync(dataDir()))
      expect(await service.stop("SIGTERM")).toBe(0)
      expect(existsSync(join(dataDir(), "postmaster.pid"))).toBe(false)
    },
    120_000
  )

  it("a throw-away embedded PostgreSQL, as npm test starts one, starts and stops", async () => {
    const script =
      "const m = await import('./src/db/EmbeddedPostgres.ts'); const s = await m.startThrowawayPostgres(); console.log('up on', s.port); await s.stop()"
    const result = await runScript(["--input-type=module", "-e", script], {}, { cwd: project })
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toMatch(/up on \d+/)
  }, 120_000)
})
