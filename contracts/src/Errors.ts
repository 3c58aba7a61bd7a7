import { Schema, SchemaTransformation } from "effect"
import { HttpApiSchema } from "effect/http-api"

export const ErrorCode = Schema.Literals([
  "below_minimum",
  "needs_kyc",
  "destination_mismatch",
  "requote",
  "tx_hash_reused",
  "otp_invalid",
  "mercado_cerrado",
  "invalid_webhook_signature"
]).annotate({ identifier: "ErrorCode" })
export type ErrorCode = typeof ErrorCode.Type

export const ErrorBody = Schema.Struct({
  error: Schema.String.annotate({ description: "Human-readable message" }),
  errorCode: Schema.optionalKey(ErrorCode)
}).annotate({ identifier: "ErrorBody", description: "Body of every non-2xx response" })
export type ErrorBody = typeof ErrorBody.Type

interface ErrorInstance {
  readonly error: string
}

/**
 * The wire form of an error class: exactly `{ error, errorCode? }`, never the `_tag`.
 * Decoding rebuilds the class, so typed clients still get `NeedsKyc`, `TxHashReused`, ...
 *
 * The document describes the encoded side, so the name and description go on the body, not on the class (a name
 * only on the class would publish the body as `<name>Encoded`); the status goes on the whole codec.
 */
const wire = <Self extends ErrorInstance>(
  cls: new(props: { readonly error: string }) => Self,
  identifier: string,
  status: number,
  code: ErrorCode | undefined
): Schema.Codec<Self, ErrorBody> => {
  // A code-less error must not match a body that carries a code (400 BadRequest vs 400 otp_invalid).
  const fields = code === undefined
    ? { error: Schema.String, errorCode: Schema.optionalKey(Schema.Never) }
    : { error: Schema.String, errorCode: Schema.Literal(code) }
  // Either body is an ErrorBody: `errorCode` is absent or one code (the union of the two field sets is not inferred).
  const body = Schema.Struct(fields).annotate({
    identifier,
    description: code === undefined ? `HTTP ${status}` : `HTTP ${status}, errorCode \`${code}\``
  }) as unknown as Schema.Codec<ErrorBody>
  const instance = Schema.declare((input: unknown): input is Self => input instanceof cls, {
    expected: identifier
  })
  return body.pipe(
    Schema.decodeTo(
      instance,
      SchemaTransformation.transform({
        decode: (decoded: ErrorBody) => new cls({ error: decoded.error }),
        encode: (error: Self): ErrorBody =>
          code === undefined ? { error: error.error } : { error: error.error, errorCode: code }
      })
    ),
    HttpApiSchema.status(status)
  )
}

// Documented error codes (seed part 7, statuses from DESIGN §3)
export class BelowMinimum extends Schema.TaggedError<BelowMinimum>()("BelowMinimum", { error: Schema.String }) {}
export class NeedsKyc extends Schema.TaggedError<NeedsKyc>()("NeedsKyc", { error: Schema.String }) {}
export class DestinationMismatch
  extends Schema.TaggedError<DestinationMismatch>()("DestinationMismatch", { error: Schema.String })
{}
export class Requote extends Schema.TaggedError<Requote>()("Requote", { error: Schema.String }) {}
export class TxHashReused extends Schema.TaggedError<TxHashReused>()("TxHashReused", { error: Schema.String }) {}
export class OtpInvalid extends Schema.TaggedError<OtpInvalid>()("OtpInvalid", { error: Schema.String }) {}
export class MercadoCerrado extends Schema.TaggedError<MercadoCerrado>()("MercadoCerrado", { error: Schema.String }) {}
export class InvalidWebhookSignature
  extends Schema.TaggedError<InvalidWebhookSignature>()("InvalidWebhookSignature", { error: Schema.String })
{}

// Errors without a documented code: body `{ error }` only
export class BadRequest extends Schema.TaggedError<BadRequest>()("BadRequest", { error: Schema.String }) {}
export class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", { error: Schema.String }) {}
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", { error: Schema.String }) {}
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", { error: Schema.String }) {}
export class Conflict extends Schema.TaggedError<Conflict>()("Conflict", { error: Schema.String }) {}
export class IdempotencyKeyReused
  extends Schema.TaggedError<IdempotencyKeyReused>()("IdempotencyKeyReused", { error: Schema.String })
{}
export class TooManyRequests
  extends Schema.TaggedError<TooManyRequests>()("TooManyRequests", { error: Schema.String })
{}
export class ServiceUnavailable
  extends Schema.TaggedError<ServiceUnavailable>()("ServiceUnavailable", { error: Schema.String })
{}
export class BadGateway extends Schema.TaggedError<BadGateway>()("BadGateway", { error: Schema.String }) {}

export const BelowMinimumError = wire(BelowMinimum, "BelowMinimumError", 409, "below_minimum")
export const NeedsKycError = wire(NeedsKyc, "NeedsKycError", 409, "needs_kyc")
export const DestinationMismatchError = wire(
  DestinationMismatch,
  "DestinationMismatchError",
  409,
  "destination_mismatch"
)
export const RequoteError = wire(Requote, "RequoteError", 409, "requote")
export const TxHashReusedError = wire(TxHashReused, "TxHashReusedError", 409, "tx_hash_reused")
export const OtpInvalidError = wire(OtpInvalid, "OtpInvalidError", 400, "otp_invalid")
export const MercadoCerradoError = wire(MercadoCerrado, "MercadoCerradoError", 409, "mercado_cerrado")
export const InvalidWebhookSignatureError = wire(
  InvalidWebhookSignature,
  "InvalidWebhookSignatureError",
  401,
  "invalid_webhook_signature"
)

export const BadRequestError = wire(BadRequest, "BadRequestError", 400, undefined)
export const UnauthorizedError = wire(Unauthorized, "UnauthorizedError", 401, undefined)
export const ForbiddenError = wire(Forbidden, "ForbiddenError", 403, undefined)
export const NotFoundError = wire(NotFound, "NotFoundError", 404, undefined)
export const ConflictError = wire(Conflict, "ConflictError", 409, undefined)
export const IdempotencyKeyReusedError = wire(IdempotencyKeyReused, "IdempotencyKeyReusedError", 422, undefined)
export const TooManyRequestsError = wire(TooManyRequests, "TooManyRequestsError", 429, undefined)
export const ServiceUnavailableError = wire(ServiceUnavailable, "ServiceUnavailableError", 503, undefined)
export const BadGatewayError = wire(BadGateway, "BadGatewayError", 502, undefined)
