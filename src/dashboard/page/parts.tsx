/** Small pieces every view uses: dates, amounts, statuses, loading and errors, tables, a secret shown once. */
import type { ComponentChildren } from "preact"
import { useEffect, useRef, useState } from "preact/hooks"
import { ApiError } from "./api.ts"

/** In the viewer's time zone; the UTC time (as the API gives it) on hover. */
export const DateTime = ({ iso }: { readonly iso: string | null | undefined }) =>
  iso === null || iso === undefined
    ? <span class="muted">—</span>
    : <time dateTime={iso} title={`${iso} (UTC)`}>{new Date(iso).toLocaleString()}</time>

/** An amount exactly as the API wrote it (a decimal string), with its unit. */
export const Amount = ({ unit, value }: { readonly value: string | null | undefined; readonly unit?: string }) =>
  value === null || value === undefined
    ? <span class="muted">—</span>
    : <span class="amount">{value}{unit === undefined ? "" : ` ${unit}`}</span>

export const Status = ({ value }: { readonly value: string }) => <span class={`status status-${value}`}>{value}</span>

export const Code = ({ children }: { readonly children: ComponentChildren }) => <code class="mono">{children}</code>

/** A definition list of label → value rows. */
export const Fields = ({ rows }: { readonly rows: ReadonlyArray<readonly [string, ComponentChildren]> }) => (
  <dl class="fields">
    {rows.map(([label, value]) => (
      <div key={label}>
        <dt>{label}</dt>
        <dd>{value}</dd>
      </div>
    ))}
  </dl>
)

export interface Column<A> {
  readonly header: string
  readonly cell: (row: A) => ComponentChildren
}

export const Table = <A extends object>(
  { caption, columns, empty, rowKey, rows }: {
    readonly caption: string
    readonly columns: ReadonlyArray<Column<A>>
    readonly rows: ReadonlyArray<A>
    readonly rowKey: (row: A) => string
    readonly empty: string
  }
) =>
  rows.length === 0 ? <p class="muted">{empty}</p> : (
    <div class="table-wrap">
      <table>
        <caption>{caption}</caption>
        <thead>
          <tr>{columns.map((column) => <th key={column.header} scope="col">{column.header}</th>)}</tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={rowKey(row)}>{columns.map((column) => <td key={column.header}>{column.cell(row)}</td>)}</tr>
          ))}
        </tbody>
      </table>
    </div>
  )

export const messageOf = (error: unknown) =>
  error instanceof ApiError
    ? `${error.message} (HTTP ${error.status})`
    : error instanceof Error
    ? error.message
    : String(error)

export const Failure = ({ error }: { readonly error: unknown }) => <p class="error" role="alert">{messageOf(error)}</p>

/** `load` run whenever `deps` change: its result, its failure, or neither while it runs; `reload` runs it again. */
export function useLoad<A>(load: () => Promise<A>, deps: ReadonlyArray<unknown>) {
  const [state, setState] = useState<{ readonly value?: A; readonly error?: unknown; readonly loading: boolean }>({
    loading: true
  })
  const [round, setRound] = useState(0)
  useEffect(() => {
    let current = true
    setState((previous) => ({ ...previous, loading: true }))
    load().then(
      (value) => current && setState({ value, loading: false }),
      (error: unknown) => current && setState({ error, loading: false })
    )
    return () => {
      current = false
    }
  }, [...deps, round])
  return { ...state, reload: () => setRound((n) => n + 1) }
}

export const Loading = () => <p class="muted" role="status">Loading…</p>

/** The view's heading, focused when the view opens, so a screen reader says where the keyboard now is. */
export const Heading = ({ children }: { readonly children: ComponentChildren }) => {
  const ref = useRef<HTMLHeadingElement>(null)
  useEffect(() => ref.current?.focus(), [])
  return <h1 id="view-title" tabIndex={-1} ref={ref}>{children}</h1>
}

/** A signing secret, shown this once: the API never shows it again. */
export const SecretOnce = ({ label, secret }: { readonly label: string; readonly secret: string }) => {
  const [copied, setCopied] = useState(false)
  return (
    <div class="secret" role="region" aria-label={label}>
      <p>
        <strong>{label}</strong>: shown this once; store it now.
      </p>
      <p>
        <code class="mono" data-testid="secret">{secret}</code>{" "}
        <button
          type="button"
          onClick={() => void navigator.clipboard.writeText(secret).then(() => setCopied(true), () => setCopied(false))}
        >
          Copy
        </button>{" "}
        <span role="status">{copied ? "Copied" : ""}</span>
      </p>
    </div>
  )
}
