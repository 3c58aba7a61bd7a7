/**
 * The Node versions the kit runs on, checked first by each entry (the CLI, the vitest entry, runConformance) so that an
 * older Node gets one line saying so, not a TypeError from deep inside a run (vitest 5 on Node 20 hid every failure
 * behind `Map.groupBy is not a function`). Kept equal to package.json's engines (a test checks it). Plain code, no
 * imports: it must load on any Node.
 */
export const MINIMUM_NODE = "22.12.0"

const parts = (version: string): ReadonlyArray<number> => version.replace(/^v/, "").split(".").map(Number)

/** Why this Node is refused, or undefined when the kit supports it. */
export const refusalOfNode = (version: string): string | undefined => {
  const [major = 0, minor = 0] = parts(version)
  const [minMajor = 0, minMinor = 0] = parts(MINIMUM_NODE)
  const supported = major > minMajor || (major === minMajor && minor >= minMinor)
  return supported
    ? undefined
    : `Node ${
      version.replace(/^v/, "")
    } is not supported: the conformance kit needs Node ${MINIMUM_NODE} or later (Node 22 or 24 LTS)`
}
