import { EventId } from "@cop-integrations/contracts"

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

let lastMillis = -1
let lastRandom = 0n

const encode = (value: bigint, length: number): string => {
  let out = ""
  for (let i = 0; i < length; i++) {
    out = CROCKFORD[Number(value & 31n)] + out
    value >>= 5n
  }
  return out
}

const random80 = (): bigint => {
  let value = 0n
  for (const byte of crypto.getRandomValues(new Uint8Array(10))) value = (value << 8n) | BigInt(byte)
  return value
}

/**
 * `evt_` + a ULID (48-bit milliseconds, 80 random bits), monotonic within this process: two events written in the
 * same millisecond (a payout's `deposit_confirmed` and `completed` in one transaction) sort in the order they were
 * made, so (createdAt, id) lists events of a resource in the order they happened.
 */
export const newEventId = (millis: number): EventId => {
  if (millis <= lastMillis) {
    lastRandom = (lastRandom + 1n) & ((1n << 80n) - 1n)
    millis = lastMillis
  } else {
    lastMillis = millis
    lastRandom = random80()
  }
  return EventId.make(`evt_${encode(BigInt(millis), 10)}${encode(lastRandom, 16)}`)
}
