/**
 * Debian's `prometheus` and `promtool` (apt-get install prometheus; .ci/run installs it), for the test that has a real
 * Prometheus scrape the service. Where they are missing that test is skipped, and says so loudly: it is never counted
 * as passed.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { once } from "node:events"
import { existsSync } from "node:fs"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { type AddressInfo, createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const binary = (name: string): string | undefined =>
  [`/usr/bin/${name}`, `/usr/local/bin/${name}`].find((candidate) => existsSync(candidate))

export const prometheusBinary = binary("prometheus")
export const promtoolBinary = binary("promtool")

/** Warns, when Prometheus or promtool is missing, that `testFile` skips and the metrics were not scraped. */
export const warnIfNoPrometheus = (testFile: string) => {
  if (prometheusBinary === undefined || promtoolBinary === undefined) {
    console.warn(
      `\n!!! ${testFile} SKIPPED: no prometheus/promtool binary (apt-get install --no-install-recommends prometheus); the /metrics output was NOT checked by Prometheus !!!\n`
    )
  }
}

/** `promtool check metrics` on `text` (on its stdin): its exit code and what it said. */
export const promtoolCheckMetrics = async (text: string) => {
  const child = spawn(promtoolBinary!, ["check", "metrics"])
  let output = ""
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
  child.stdin.end(text)
  const [code] = (await once(child, "exit")) as [number | null]
  return { code, output }
}

/** A port free now (Prometheus takes no port 0): bound by the kernel's choice, then released. */
export const freePort = async (): Promise<number> => {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

/** The alert rules an operator starts with, and their unit tests (`promtool test rules`). */
export const ALERT_RULES = fileURLToPath(new URL("../../ops/prometheus/alerts.yml", import.meta.url))
export const ALERT_RULE_TESTS = fileURLToPath(new URL("../../ops/prometheus/alerts.test.yml", import.meta.url))

/** `promtool <args>`: its exit code and what it said. */
export const promtool = async (args: ReadonlyArray<string>) => {
  const child = spawn(promtoolBinary!, args)
  let output = ""
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
  const [code] = (await once(child, "exit")) as [number | null]
  return { code, output }
}

/** A rule group as /api/v1/rules lists it. */
export interface RuleGroup {
  readonly name: string
  readonly file: string
  /** When it was last evaluated (RFC 3339). */
  readonly lastEvaluation: string
  readonly rules: ReadonlyArray<{ readonly name: string; readonly health: string; readonly type: string }>
}

export interface RunningPrometheus {
  readonly url: string
  /** What it has printed so far (for a failure's message). */
  readonly output: () => string
  readonly query: (promql: string) => Promise<ReadonlyArray<{ readonly metric: Record<string, string> }>>
  /** The rule groups it loaded (`GET /api/v1/rules`). */
  readonly ruleGroups: () => Promise<ReadonlyArray<RuleGroup>>
  readonly stop: () => Promise<void>
}

/**
 * Prometheus scraping `target` (`host:port`, path /metrics) every second and evaluating `ruleFiles` every second,
 * with a storage directory of its own.
 */
export const startPrometheus = async (
  target: string,
  options: { readonly ruleFiles?: ReadonlyArray<string> } = {}
): Promise<RunningPrometheus> => {
  const dir = await mkdtemp(join(tmpdir(), "prometheus-"))
  const config = join(dir, "prometheus.yml")
  const ruleFiles = options.ruleFiles ?? []
  await writeFile(
    config,
    [
      "global:",
      "  scrape_interval: 1s",
      "  evaluation_interval: 1s",
      ...(ruleFiles.length === 0 ? [] : ["rule_files:", ...ruleFiles.map((file) => `  - ${JSON.stringify(file)}`)]),
      "scrape_configs:",
      "  - job_name: cop-integrations",
      "    metrics_path: /metrics",
      "    static_configs:",
      `      - targets: ["${target}"]`,
      ""
    ].join("\n")
  )
  const port = await freePort()
  const child: ChildProcess = spawn(prometheusBinary!, [
    `--config.file=${config}`,
    `--storage.tsdb.path=${join(dir, "data")}`,
    `--web.listen-address=127.0.0.1:${port}`
  ])
  let output = ""
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
  const url = `http://127.0.0.1:${port}`
  return {
    url,
    output: () => output,
    query: async (promql) => {
      const response = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(promql)}`)
      const body = (await response.json()) as {
        readonly status: string
        readonly data?: { readonly result: ReadonlyArray<{ readonly metric: Record<string, string> }> }
      }
      if (body.status !== "success" || body.data === undefined) {
        throw new Error(`query ${promql}: ${JSON.stringify(body)}`)
      }
      return body.data.result
    },
    ruleGroups: async () => {
      const response = await fetch(`${url}/api/v1/rules`)
      const body = (await response.json()) as {
        readonly status: string
        readonly data?: { readonly groups: ReadonlyArray<RuleGroup> }
      }
      if (body.status !== "success" || body.data === undefined) throw new Error(`rules: ${JSON.stringify(body)}`)
      return body.data.groups
    },
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = once(child, "exit")
        child.kill("SIGTERM")
        await exited
      }
      await rm(dir, { recursive: true, force: true })
    }
  }
}
