/**
 * The integration's own requests as the service recorded them: the list (filters, cursor pages, newest first) and one
 * request's page. The summaries of query, headers and bodies are shown as the API gives them (secrets already out).
 */
import type { RequestLog } from "@cop-integrations/contracts"
import { get } from "./api.ts"
import { createdRange, type Filter, FilterForm, trimmed } from "./filters.tsx"
import { STATUS_CLASSES } from "./literals.ts"
import { Pager, useFilteredPages } from "./paging.tsx"
import { Code, DateTime, Failure, Fields, Heading, Loading, Table, useLoad } from "./parts.tsx"
import { href } from "./router.ts"

/** The list's filters, each one query parameter of `GET request-logs`. */
const requestLogFilters: ReadonlyArray<Filter> = [
  {
    name: "statusClass",
    label: "Status class",
    input: { choices: STATUS_CLASSES, any: "Any status" },
    toQuery: trimmed
  },
  { name: "path", label: "Path starts with", input: "text", placeholder: "/api/integrations/breb", toQuery: trimmed },
  { name: "errorCode", label: "Error code", input: "text", toQuery: trimmed },
  { name: "requestId", label: "Request id", input: "text", toQuery: trimmed },
  ...createdRange
]

const pathOf = (requestId: string) => `/request-logs/${encodeURIComponent(requestId)}`

/** An HTTP status, coloured by its class. */
const HttpStatus = ({ status }: { readonly status: number }) => (
  <span class={`status http-${Math.floor(status / 100)}xx`}>{status}</span>
)

export const RequestLogsView = () => {
  const { apply, cursors, list } = useFilteredPages<RequestLog>("/request-logs")
  return (
    <section aria-labelledby="view-title">
      <Heading>Request logs</Heading>
      <p class="muted">
        Every request made with this integration's keys (and by this dashboard) in the last days, without secrets. A
        request is listed a second or two after its answer.
      </p>
      <FilterForm filters={requestLogFilters} label="Filter requests" onApply={apply} />
      <p class="actions">
        <button type="button" onClick={list.reload}>Refresh</button>
      </p>
      {list.error !== undefined ? <Failure error={list.error} /> : list.value === undefined ? <Loading /> : (
        <>
          <Table
            caption="Requests, newest first"
            rows={list.value.items}
            rowKey={(log) => `${log.requestId} ${log.createdAt}`}
            empty="No requests match."
            columns={[
              { header: "Request", cell: (r) => <a href={href(pathOf(r.requestId))}>{r.requestId}</a> },
              { header: "When", cell: (r) => <DateTime iso={r.createdAt} /> },
              { header: "Method", cell: (r) => r.method },
              { header: "Path", cell: (r) => <span class="url">{r.path}</span> },
              { header: "Status", cell: (r) => <HttpStatus status={r.status} /> },
              { header: "Error code", cell: (r) => (r.errorCode === null ? "—" : <Code>{r.errorCode}</Code>) },
              { header: "Duration", cell: (r) => `${r.durationMs} ms` }
            ]}
          />
          <Pager cursors={cursors} nextCursor={list.value.nextCursor} label="Requests" />
        </>
      )}
    </section>
  )
}

/** A summary as the API gives it: JSON, laid out. */
const Summary = ({ label, value }: { readonly label: string; readonly value: unknown }) => (
  <>
    <h3>{label}</h3>
    {value === null ? <p class="muted">None.</p> : <pre class="mono summary">{JSON.stringify(value, null, 2)}</pre>}
  </>
)

export const RequestLogView = ({ requestId }: { readonly requestId: string }) => {
  const log = useLoad(() => get<RequestLog>(pathOf(requestId)), [requestId])
  const r = log.value
  return (
    <section aria-labelledby="view-title">
      <Heading>Request {requestId}</Heading>
      <p>
        <a href={href("/request-logs")}>All requests</a>
      </p>
      {log.error !== undefined ? <Failure error={log.error} /> : r === undefined ? <Loading /> : (
        <>
          <Fields
            rows={[
              ["Request id", <Code>{r.requestId}</Code>],
              ["When", <DateTime iso={r.createdAt} />],
              ["Method", r.method],
              ["Path", <Code>{r.path}</Code>],
              ["Status", <HttpStatus status={r.status} />],
              ["Error code", r.errorCode === null ? "—" : <Code>{r.errorCode}</Code>],
              ["Message", r.error ?? "—"],
              ["Duration", `${r.durationMs} ms`],
              [
                "Key",
                <>
                  …{r.keyLast4} <span class="muted">({r.keyId})</span>
                </>
              ],
              [
                "Made with",
                r.dashboardSessionId === null ? "the API key" : (
                  <>
                    the dashboard{" "}
                    <span class="muted">
                      (session <Code>{r.dashboardSessionId}</Code>)
                    </span>
                  </>
                )
              ],
              ["Client address", <Code>{r.clientAddress}</Code>]
            ]}
          />
          <h2>Request</h2>
          <Summary label="Query" value={r.request.query} />
          <Summary label="Headers" value={r.request.headers} />
          <Summary label="Body" value={r.request.body} />
          <h2>Response</h2>
          <Summary label="Body" value={r.response.body} />
        </>
      )}
    </section>
  )
}
