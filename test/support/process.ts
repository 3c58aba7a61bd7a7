/** The service as partners run it: a child process started like `npm start`, talking real HTTP. */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import { once } from "node:events"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

export const repoRoot = fileURLToPath(new URL("../..", import.meta.url))
/** How `npm start` runs TypeScript: one node process with tsx's loader. */
const nodeWithTsx = (
  args: ReadonlyArray<string>
): readonly [string, ReadonlyArray<string>] => [process.execPath, ["--import", "tsx", ...args]]

export interface StartedProcess {
  readonly child: ChildProcessWithoutNullStreams
  readonly baseUrl: string
  /** Everything the process wrote, stdout and stderr interleaved as they arrived. */
  readonly stdout: () => string
  /** What it wrote to each stream. */
  readonly streams: () => { readonly stdout: string; readonly stderr: string }
  readonly stop: (signal?: NodeJS.Signals) => Promise<number | null>
}

const lineWith = (text: string, pattern: RegExp) => pattern.exec(text)?.[1]

/** `npm start` itself (with `npmArgs`, e.g. `--silent`), through the npm that runs this test when there is one. */
const npmStart = (npmArgs: ReadonlyArray<string>): readonly [string, ReadonlyArray<string>] => {
  const npmCli = process.env["npm_execpath"]
  return npmCli?.endsWith(".js") ? [process.execPath, [npmCli, "start", ...npmArgs]] : ["npm", ["start", ...npmArgs]]
}

/**
 * Starts `src/main.ts` (or, with `via: "npm"`, `npm start`); resolves once the banner shows the listening
 * address (or rejects with its output).
 */
export const startServiceProcess = async (
  env: Record<string, string>,
  options: {
    readonly timeoutMs?: number
    readonly via?: "node" | "npm"
    /** With `via: "npm"`: what follows `npm start` (e.g. `--silent`). */
    readonly npmArgs?: ReadonlyArray<string>
    /** The project directory to start it in (default: this checkout). */
    readonly cwd?: string
    /** Its own process group, so a test can signal the group as a terminal's Ctrl-C does. */
    readonly detached?: boolean
  } = {}
): Promise<StartedProcess> => {
  const timeoutMs = options.timeoutMs ?? 60_000
  const [command, args] = options.via === "npm" ? npmStart(options.npmArgs ?? []) : nodeWithTsx(["src/main.ts"])
  const child = spawn(command, args, {
    cwd: options.cwd ?? repoRoot,
    detached: options.detached ?? false,
    env: { ...process.env, PORT: "0", LOG_LEVEL: "info", npm_config_update_notifier: "false", ...env }
  })
  let out = ""
  const streams = { stdout: "", stderr: "" }
  child.stdout.on("data", (chunk: Buffer) => {
    out += chunk.toString("utf8")
    streams.stdout += chunk.toString("utf8")
  })
  child.stderr.on("data", (chunk: Buffer) => {
    out += chunk.toString("utf8")
    streams.stderr += chunk.toString("utf8")
  })
  const baseUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`service did not start within ${timeoutMs} ms:\n${out}`)),
      timeoutMs
    )
    const check = () => {
      const url = lineWith(out, /listening on (http:\/\/[^\s]+)/)
      if (url !== undefined) {
        clearTimeout(timer)
        resolve(url)
      }
    }
    child.stdout.on("data", check)
    child.stderr.on("data", check) // the banner goes to stderr
    child.once("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`service exited with ${code} before listening:\n${out}`))
    })
  })
  return {
    child,
    baseUrl,
    stdout: () => out,
    streams: () => ({ ...streams }),
    stop: async (signal = "SIGTERM") => {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode
      const exited = once(child, "exit")
      child.kill(signal)
      const [code] = (await exited) as [number | null]
      return code
    }
  }
}

/** Runs node with `nodeArgs` to completion and returns its exit code and output. */
const runNode = async (
  nodeArgs: ReadonlyArray<string>,
  env: Record<string, string>,
  options: { readonly cwd?: string } = {}
) => {
  const child = spawn(process.execPath, nodeArgs, { cwd: options.cwd ?? repoRoot, env: { ...process.env, ...env } })
  let stdout = ""
  let stderr = ""
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")))
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
  const [code] = (await once(child, "exit")) as [number | null]
  return { code, stdout, stderr }
}

/** Runs a script to completion and returns its exit code and output. */
export const runScript = (
  args: ReadonlyArray<string>,
  env: Record<string, string>,
  options: { readonly cwd?: string } = {}
) => runNode(nodeWithTsx(args)[1], env, options)

/** The keys CLI as `npm run -s keys -- …` runs it: from its cached bundle (scripts/run-bundled.mjs), not through tsx. */
export const runKeysCli = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  runNode(["scripts/run-bundled.mjs", "keys", ...args], env)

/**
 * The README's walkthrough block, run with bash against a service, as a reader would paste it; `then`: what the
 * reader pastes next into the same shell.
 */
export const runWalkthrough = async (baseUrl: string, key: string, then = "") => {
  const readme = readFileSync(`${repoRoot}/README.md`, "utf8")
  const block = /<!-- walkthrough:start -->\s*```sh\n([\s\S]*?)```\s*<!-- walkthrough:end -->/.exec(readme)?.[1]
  if (block === undefined) throw new Error("README.md has no walkthrough block")
  const child = spawn("bash", ["-euo", "pipefail", "-c", `${block}\n${then}`], {
    env: { ...process.env, KEY: key, BASE: baseUrl }
  })
  let output = ""
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
  const [code] = (await once(child, "exit")) as [number | null]
  return { code, output }
}

/** Whether a process with this pid exists (EPERM: it does, under another user, e.g. PostgreSQL's postmaster). */
export const processAlive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}
