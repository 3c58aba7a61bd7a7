/** The integration's API keys, read-only: the operator issues, rotates and revokes them. Never the key itself. */
import type { ApiKeyList } from "@cop-integrations/contracts"
import { get } from "./api.ts"
import { Code, DateTime, Failure, Heading, Loading, Status, Table, useLoad } from "./parts.tsx"

export const ApiKeysView = () => {
  const keys = useLoad(() => get<ApiKeyList>("/api-keys"), [])
  return (
    <section aria-labelledby="view-title">
      <Heading>API keys</Heading>
      <p class="muted">
        Read-only: keys are issued, rotated and revoked by the operator. Only the last 4 characters of a key are kept
        besides its hash.
      </p>
      {keys.error !== undefined ? <Failure error={keys.error} /> : keys.value === undefined ? <Loading /> : (
        <Table
          caption="API keys, oldest first"
          rows={keys.value.items}
          rowKey={(key) => key.keyId}
          empty="No keys."
          columns={[
            { header: "Last 4", cell: (k) => <Code>…{k.last4}</Code> },
            { header: "Key id", cell: (k) => <Code>{k.keyId}</Code> },
            { header: "Kind", cell: (k) => k.kind },
            {
              header: "State",
              cell: (k) => (
                <>
                  <Status value={k.status} />
                  {k.current ? <span class="muted">{" "}this session's key</span> : null}
                </>
              )
            },
            {
              header: "Scopes",
              cell: (k) => (k.scopes === null ? <span class="muted">full</span> : <>{k.scopes.join(", ")}</>)
            },
            {
              header: "Addresses",
              cell: (k) => (k.allowedIps === null ? <span class="muted">any</span> : <>{k.allowedIps.join(", ")}</>)
            },
            { header: "Created", cell: (k) => <DateTime iso={k.createdAt} /> },
            { header: "Last used", cell: (k) => <DateTime iso={k.lastUsedAt} /> },
            { header: "Expires", cell: (k) => <DateTime iso={k.expiresAt} /> },
            { header: "Revoked", cell: (k) => <DateTime iso={k.revokedAt} /> }
          ]}
        />
      )}
    </section>
  )
}
