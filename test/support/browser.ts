/**
 * The Chromium the browser tests drive with playwright-core: CHROMIUM_BIN if set, else Debian's `chromium` or another
 * usual install. Where none exists a browser test is skipped, and says so loudly: it is never counted as passed.
 */
import { existsSync } from "node:fs"
import { type Browser, chromium } from "playwright-core"

export const chromiumBinary: string | undefined = [
  process.env["CHROMIUM_BIN"],
  "/usr/bin/chromium",
  "/usr/bin/chromium-browser",
  "/usr/bin/google-chrome"
]
  .find((candidate): candidate is string => candidate !== undefined && candidate !== "" && existsSync(candidate))

/** That Chromium, headless; only where `chromiumBinary` exists (a browser test skips otherwise). */
export const launchChromium = (): Promise<Browser> =>
  chromium.launch({
    executablePath: chromiumBinary!,
    // As root Chromium needs --no-sandbox; the rest keeps it from calling Google's services at start.
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run"
    ]
  })

/** Warns, when no Chromium exists, that `testFile` skips and `page` was not checked in a browser. */
export const warnIfNoChromium = (testFile: string, page: string) => {
  if (chromiumBinary === undefined) {
    console.warn(
      `\n!!! ${testFile} SKIPPED: no Chromium binary (apt-get install chromium, or set CHROMIUM_BIN); the ${page} page was NOT checked in a browser !!!\n`
    )
  }
}
