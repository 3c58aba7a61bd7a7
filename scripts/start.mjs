/**
 * `npm start`: the bundled service, run in this very node process, so signals reach the service itself. Development
 * and tests run the TypeScript directly (`node --import tsx src/main.ts`).
 *
 * When the sources changed (and on a fresh clone) scripts/build.mjs rebuilds the bundle first, in a process of its
 * own: built here, esbuild's and tsx's modules and the build's garbage stayed in the service's heap (32 MB more at
 * rest), and a replica on a small heap died of it under a burst of requests its in-flight limit had admitted
 * (test/process/start-build.test.ts).
 */
import "./node-check.mjs"
import { spawnSync } from "node:child_process"
import { enableCompileCache } from "node:module"
import { fileURLToPath, pathToFileURL } from "node:url"
import { bundleIsStale, SERVER_BUNDLE } from "./build.mjs"

if (bundleIsStale()) {
  const build = spawnSync(process.execPath, [fileURLToPath(new URL("build.mjs", import.meta.url))], {
    stdio: "inherit"
  })
  if (build.status !== 0) process.exit(build.status ?? 1)
}
// V8's compiled code for the bundle kept between starts (node checks it against the file's content): compiling the
// 7 MB bundle was a fifth of the time from spawn to the first answer. NODE_COMPILE_CACHE, when set, names the place;
// an unwritable place only costs the compile.
enableCompileCache(
  process.env["NODE_COMPILE_CACHE"] ?? fileURLToPath(new URL("../node_modules/.cache/compile", import.meta.url))
)
await import(pathToFileURL(SERVER_BUNDLE).href)
