/**
 * The kit's URL options (--base-url, --forward-to, --url, ...) and the two mistakes made with them that used to cost a
 * puzzling error: a URL without its scheme (`localhost:3000`, which `new URL` even takes, as the scheme `localhost:`),
 * and `https://` to a port that speaks plain HTTP (OpenSSL's "wrong version number", over two lines). Each is one line.
 * No imports: the commands load it before they know their arguments are usable.
 */

/** What is wrong with `text` as the http(s) URL option `--<option>`, in one line; undefined when nothing is. */
export const httpUrlProblem = (option: string, text: string): string | undefined => {
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(text)?.[1]
  if (scheme === undefined) {
    const rest = text.replace(/^\/\//, "")
    const what = option === "base-url" ? "a base URL" : "the URL"
    return `--${option} ${text}: ${what} needs a scheme: http://${rest} or https://${rest}`
  }
  if (!/^https?$/i.test(scheme)) return `--${option} ${text}: only http:// and https:// URLs are supported`
  if (!URL.canParse(text)) return `--${option} ${text} is not a URL`
  return undefined
}

const codeOf = (error: unknown): unknown =>
  typeof error === "object" && error !== null && "code" in error ? error.code : undefined

/** The TLS handshake met a server answering in plain HTTP (OpenSSL's record header check). */
const isPlainHttpAnswer = (error: unknown): boolean => {
  for (let cause = error, depth = 0; cause !== undefined && depth < 4; depth++) {
    const code = codeOf(cause)
    if (code === "ERR_SSL_WRONG_VERSION_NUMBER" || code === "ERR_SSL_PACKET_LENGTH_TOO_LONG") return true
    if (cause instanceof Error && /wrong version number|packet length too long/i.test(cause.message)) return true
    cause = cause instanceof Error ? cause.cause : undefined
  }
  return false
}

/**
 * One line when `error`, from a request to `url`, says that an `https://` URL leads to a server speaking plain HTTP:
 * `https://127.0.0.1:3000 speaks plain HTTP, not HTTPS: use http://127.0.0.1:3000`.
 */
export const plainHttpProblem = (url: string | URL, error: unknown): string | undefined => {
  const target = new URL(url)
  if (target.protocol !== "https:" || !isPlainHttpAnswer(error)) return undefined
  return `${target.origin} speaks plain HTTP, not HTTPS: use http://${target.host}`
}
