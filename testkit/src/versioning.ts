/**
 * The versioning policy (README#versioning) as the kit applies it: within a compatibility line (the major version, or
 * `0.<minor>` while the major is 0) a later version only adds, so the kit of a version checks deployments of its line
 * at that version or a later one; the additions since show as warnings, never as failures.
 */
import { INTERFACE_VERSION } from "@cop-integrations/contracts"

/** Where the policy is written, as warnings and failures cite it. */
export const POLICY = "README#versioning"

/** `additive under the versioning policy (README#versioning); --strict fails on it` */
export const additionNote = `additive under the versioning policy (${POLICY}); --strict fails on it`

interface Version {
  readonly major: number
  readonly minor: number
  readonly patch: number
}

const parse = (text: unknown): Version | undefined => {
  const match = typeof text === "string" ? /^(\d+)\.(\d+)\.(\d+)(?:[-+].*)?$/.exec(text) : null
  return match === null ? undefined : { major: Number(match[1]), minor: Number(match[2]), patch: Number(match[3]) }
}

/** `0.1` for 0.1.x, `1` for 1.x.y. */
export const compatibilityLine = (version: string): string | undefined => {
  const parsed = parse(version)
  if (parsed === undefined) return undefined
  return parsed.major === 0 ? `0.${parsed.minor}` : `${parsed.major}`
}

const order = (a: Version, b: Version): number => a.major - b.major || a.minor - b.minor || a.patch - b.patch

/**
 * How a deployment's version stands to the contract the kit holds: the same, a later one of the same line (it may
 * have added what this kit does not check), an earlier one (it may lack what the kit checks), another line, or no
 * version at all.
 */
export type VersionFit = "same" | "later" | "earlier" | "other-line" | "unreadable"

export const versionFit = (deployment: unknown, contract: string = INTERFACE_VERSION): VersionFit => {
  const theirs = parse(deployment)
  const ours = parse(contract)
  if (theirs === undefined || ours === undefined) return "unreadable"
  if (compatibilityLine(deployment as string) !== compatibilityLine(contract)) return "other-line"
  const compared = order(theirs, ours)
  return compared === 0 ? "same" : compared > 0 ? "later" : "earlier"
}

/** Whether the kit checks a deployment of this fit: its own version, or a later one of its line unless `strict`. */
export const acceptsVersion = (fit: VersionFit, strict: boolean): boolean =>
  fit === "same" || (fit === "later" && !strict)

/** What the kit accepts: the contract's version or (unless `strict`) a later one of its line. */
export const acceptedVersions = (strict: boolean, contract: string = INTERFACE_VERSION): string =>
  strict ? `${contract} (--strict)` : `${contract} or a later ${compatibilityLine(contract)}.x (${POLICY})`

/** The warning for a deployment of a later version of the kit's line. */
export const laterVersionWarning = (where: string, deployment: string, contract: string = INTERFACE_VERSION): string =>
  `${where} reports version ${deployment}, later than this kit's ${contract}: what it added since is not checked (${additionNote})`
