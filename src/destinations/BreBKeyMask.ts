/** Only the last 4 characters of a Bre-B key stay readable (receipts, logs). */
export const maskBreBKey = (key: string): string => `${"*".repeat(Math.max(4, key.length - 4))}${key.slice(-4)}`
