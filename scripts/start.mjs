/**
 * `npm start`: the bundled service (scripts/build.mjs rebuilds it first when the sources changed), run in this very
 * node process, so signals reach the service itself. Development and tests run the TypeScript directly
 * (`node --import tsx src/main.ts`).
 */
import "./node-check.mjs"
import { pathToFileURL } from "node:url"
import { buildIfStale, SERVER_BUNDLE } from "./build.mjs"

await buildIfStale()
await import(pathToFileURL(SERVER_BUNDLE).href)
