/**
 * How the dashboard's browser code (./page/, TSX with Preact) becomes one script and one style sheet: esbuild, the
 * bundler the project already has. Used by the service on the page's first request when it runs from its sources
 * (tests, `npm run dev`), and by scripts/build.mjs, which puts the result into dist/server.mjs (./PagePrebuilt.ts), so
 * `npm start` needs neither esbuild nor these sources at run time. No network either way.
 */
import { EventType, PayoutStatus, StatusClass, SwapStatus } from "@cop-integrations/contracts"
import type * as Esbuild from "esbuild"
import { fileURLToPath } from "node:url"

/** The page's code and styles, minified. */
export interface PageFiles {
  readonly js: string
  readonly css: string
}

const entry = fileURLToPath(new URL("./page/main.tsx", import.meta.url))

export const buildPage = async (esbuild: Pick<typeof Esbuild, "build">): Promise<PageFiles> => {
  const result = await esbuild.build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    outdir: "dashboard-page",
    platform: "browser",
    format: "esm",
    target: ["es2022"],
    jsx: "automatic",
    jsxImportSource: "preact",
    // The contract's names the page offers in its filters and subscriptions (./page/literals.ts).
    define: {
      __CONTRACT_LITERALS__: JSON.stringify({
        eventTypes: EventType.literals,
        payoutStatuses: PayoutStatus.literals,
        swapStatuses: SwapStatus.literals,
        statusClasses: StatusClass.literals
      })
    },
    minify: true,
    charset: "utf8",
    legalComments: "eof",
    logLevel: "silent"
  })
  const text = (extension: string) => result.outputFiles.find((file) => file.path.endsWith(extension))?.text ?? ""
  return { js: text(".js"), css: text(".css") }
}
