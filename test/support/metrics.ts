/** Reading the Prometheus text format the admin listener answers (src/http/AdminServer.ts), for tests. */

export interface Sample {
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
  readonly value: number
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g

/** Every sample line (comments skipped); label values unescaped. */
export const parseSamples = (text: string): ReadonlyArray<Sample> =>
  text.split("\n").flatMap((line) => {
    const match = SAMPLE.exec(line)
    if (match === null) return []
    const labels: Record<string, string> = {}
    for (const [, name, value] of (match[2] ?? "").matchAll(LABEL)) {
      labels[name!] = value!.replace(/\\n/g, "\n").replace(/\\(.)/g, "$1")
    }
    return [{ name: match[1]!, labels, value: Number(match[3]) }]
  })

const sameLabels = (a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>) =>
  Object.keys(a).length === Object.keys(b).length && Object.entries(a).every(([key, value]) => b[key] === value)

/** The value of the sample with exactly these labels; 0 when there is none (a series not yet made). */
export const valueOf = (text: string, name: string, labels: Readonly<Record<string, string>> = {}): number =>
  parseSamples(text).find((sample) => sample.name === name && sameLabels(sample.labels, labels))?.value ?? 0

/** `GET url`, asserting a 200 in the exposition format, its body. */
export const scrape = async (url: string): Promise<string> => {
  const response = await fetch(url)
  const body = await response.text()
  if (response.status !== 200) throw new Error(`scrape of ${url}: ${response.status} ${body}`)
  return body
}
