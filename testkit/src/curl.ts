/**
 * A copy-pasteable `curl` (bash) for a recorded request. API keys never appear: the request carries the
 * placeholder of the environment variable that holds the key (`$CONFORMANCE_API_KEY`), so the command
 * runs as is where that variable is set.
 */

/** Environment variables named in curls instead of the keys. */
export const KEY_VARIABLES = { primary: "CONFORMANCE_API_KEY", second: "CONFORMANCE_SECOND_API_KEY" } as const

const quote = (text: string): string => `'${text.replaceAll("'", `'\\''`)}'`

const isPlainText = (text: string): boolean => /^[\x20-\x7e\u00a0-\uffff]*$/.test(text) && !text.includes("\ufffd")

/** Bytes for `printf '%b'`: every byte outside printable ASCII as \xNN (NUL included, which no shell string holds). */
const escapeBytes = (bytes: Uint8Array): string => {
  let out = ""
  for (const byte of bytes) {
    const char = String.fromCharCode(byte)
    out += byte < 0x20 || byte > 0x7e ? `\\x${byte.toString(16).padStart(2, "0")}` : char === "\\" ? "\\\\" : char
  }
  return quote(out)
}

const LONG_RUN = 256
const INLINE_LIMIT = 16 * 1024

/** Long runs of one ASCII character become `head -c N /dev/zero | tr`, so a 70 KB body stays a short command. */
const generatedBody = (text: string): string => {
  const parts: Array<string> = []
  const runs = new RegExp(`([\\x21-\\x7e])\\1{${LONG_RUN - 1},}`, "g")
  let last = 0
  for (const match of text.matchAll(runs)) {
    if (match.index > last) parts.push(`printf '%s' ${quote(text.slice(last, match.index))}`)
    const char = match[1] ?? "a"
    parts.push(`head -c ${match[0].length} /dev/zero | tr '\\0' ${quote(char)}`)
    last = match.index + match[0].length
  }
  if (last < text.length) parts.push(`printf '%s' ${quote(text.slice(last))}`)
  return `"$(${parts.join("; ")})"`
}

const bodyArgument = (body: Uint8Array): string => {
  const text = new TextDecoder().decode(body)
  if (!isPlainText(text)) return `--data-binary @- < <(printf '%b' ${escapeBytes(body)})`
  if (body.length <= INLINE_LIMIT && !new RegExp(`(.)\\1{${LONG_RUN - 1},}`).test(text)) {
    return `--data-raw ${quote(text)}`
  }
  return `--data-binary ${generatedBody(text)}`
}

export interface CurlRequest {
  readonly method: string
  readonly url: string
  /** Header name → value; a value may reference an environment variable as `$NAME` (left unquoted). */
  readonly headers: ReadonlyArray<readonly [string, string]>
  readonly body: Uint8Array | undefined
}

const headerArgument = ([name, value]: readonly [string, string]): string =>
  /\$[A-Z_]+/.test(value) ? `-H "${name}: ${value.replaceAll("\"", "\\\"")}"` : `-H ${quote(`${name}: ${value}`)}`

/** How every curl of the kit starts: quiet but with errors, and the response headers shown (`-i`). */
export const CURL_PREFIX = "curl -sS -i -X "

export const toCurl = (request: CurlRequest): string =>
  [
    `${CURL_PREFIX}${request.method} ${quote(request.url)}`,
    ...request.headers.map(headerArgument),
    ...(request.body === undefined ? [] : [bodyArgument(request.body)])
  ].join(" \\\n  ")
