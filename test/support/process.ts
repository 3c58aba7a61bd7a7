/** The service as partners run it: a child process started like `npm start`, talking real HTTP. */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import { once } from "node:events"
import { fileURLToPath } from "node:url"

export const repoRoot = fileURLToPath(new URL("../..", import.meta.url))
/** How `npm start` runs TypeScript: one node process with tsx's loader. */
const nodeWithTsx = (args: ReadonlyArray<string>) => [process.execPath, ["--import", "tsx", ...args]] as const

export interface StartedProcess {
  readonly child: ChildProcessWithoutNullStreams
  readonly baseUrl: string
  readonly stdout: () => string
  readonly stop: (signal?: NodeJS.Signals) => Promise<number | null>
}

const lineWith = (text: string, pattern: RegExp) => pattern.exec(text)?.[1]

/** Starts `src/main.ts`; resolves once the banner shows the listening address (or rejects with its output). */
export const startServiceProcess = async (env: Record<string, string>, timeoutMs = 60_000): Promise<StartedProcess> => {
  const child = spawn(...nodeWithTsx(["src/main.ts"]), {
    cwd: repoRoot,
    env: { ...process.env, PORT: "0", LOG_LEVEL: "info", ...env }
  })
  let out = ""
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")))
  child.stderr.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")))
  const baseUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start within ${timeoutMs} ms:\n${out}`)), timeoutMs)
    const check = () => {
      const url = lineWith(out, /listening on (http:\/\/[^\s]+)/)
      if (url !== undefined) {
        clearTimeout(timer)
        resolve(url)
      }
    }
    child.stdout.on("data", check)
    child.once("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`service exited with ${code} before listening:\n${out}`))
    })
  })
  return {
    child,
    baseUrl,
    stdout: () => out,
    stop: async (signal = "SIGTERM") => {
      if (child.exitCode !== null) return child.exitCode
      const exited = once(child, "exit")
      child.kill(signal)
      const [code] = (await exited) as [number | null]
      return code
    }
  }
}

/** Runs a script to completion and returns its exit code and output. */
export const runScript = async (args: ReadonlyArray<string>, env: Record<string, string>) => {
  const child = spawn(...nodeWithTsx(args), { cwd: repoRoot, env: { ...process.env, ...env } })
  let stdout = ""
  let stderr = ""
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")))
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
  const [code] = (await once(child, "exit")) as [number | null]
  return { code, stdout, stderr }
}
