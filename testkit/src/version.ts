/** Kept equal to package.json (a test checks it), so the built kit needs no JSON import. */
export const KIT_NAME = "@cop-integrations/testkit"
export const KIT_VERSION = "0.1.0"
