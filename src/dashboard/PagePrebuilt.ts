import type { PageFiles } from "./PageBuild.ts"

/**
 * The page built ahead of time: scripts/build.mjs replaces this module in dist/server.mjs with the built page; run from
 * the sources, there is none and the page is built on its first request (./DashboardPage.ts).
 */
export const prebuiltPage: PageFiles | undefined = undefined
