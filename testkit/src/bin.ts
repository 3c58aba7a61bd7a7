#!/usr/bin/env node
/**
 * The `integrations-conformance` command: refuses an unsupported Node in one line before anything else loads (the
 * CLI and the kit are imported only once the version is known to be good).
 */
import { refusalOfNode } from "./nodeVersion.ts"

const refusal = refusalOfNode(process.versions.node)
if (refusal === undefined) {
  await import("./cli.ts")
} else {
  process.stderr.write(`integrations-conformance: ${refusal}\n`)
  process.exitCode = 2
}
