import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { failureOf, IngestionFailure, stepErrorOutcome, type StepErrorOutcome } from '../../../../domain/variants/failures.js'
import { VcfFormatError } from '../../../../domain/variants/vcf.js'

/** An error as the Firestore client library throws it: gRPC status code and its text. */
const grpc = (code: number, details: string) => Object.assign(new Error(`${code} ${details}`), { code, details })
const EMULATOR_ABORT = 'INVALID_ARGUMENT: Transaction is invalid or closed'

describe('what an ingestion step error means for the ingestion', () => {
  it.each<[string, unknown, StepErrorOutcome]>([
    ['a malformed or oversized VCF record', new VcfFormatError(12, 'ALT allele 1 is 1,200,000 bytes long; at most 50,000 are accepted'), 'fail'],
    ['a failure of the ingestion itself (no such file, no sample matched)', new IngestionFailure('gs://b/x.vcf does not exist'), 'fail'],
    ['a value over Firestore’s field limit', grpc(3, 'INVALID_ARGUMENT: The value of property "alt" is longer than 1048487 bytes.'), 'fail'],
    [
      'a document over 1 MiB',
      grpc(3, 'INVALID_ARGUMENT: Document cannot be written because its size (1,310,720 bytes) exceeds 1,048,576 bytes.'),
      'fail',
    ],
    ['too many index entries', grpc(3, 'INVALID_ARGUMENT: too many index entries for entity'), 'fail'],
    ['the emulator’s aborted transaction (contention, sent as INVALID_ARGUMENT)', grpc(3, EMULATOR_ABORT), 'retry'],
    ['a transaction aborted by concurrent ones (ABORTED)', grpc(10, 'ABORTED: Too much contention'), 'retry'],
    ['Firestore unavailable', grpc(14, 'UNAVAILABLE: No connection established'), 'retry'],
    ['a deadline', grpc(4, 'DEADLINE_EXCEEDED: Deadline exceeded'), 'retry'],
    ['a quota (RESOURCE_EXHAUSTED)', grpc(8, 'RESOURCE_EXHAUSTED: Quota exceeded.'), 'retry'],
    ['an internal error of the service', grpc(13, 'INTERNAL: Received RST_STREAM'), 'retry'],
    ['a missing index (FAILED_PRECONDITION: deployed later)', grpc(9, 'FAILED_PRECONDITION: The query requires an index.'), 'retry'],
    ['a storage read cut off', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }), 'retry'],
    ['an error without a code', new Error('socket hang up'), 'retry'],
    ['something thrown that is not an Error', 'boom', 'retry'],
    ['a bug (TypeError)', new TypeError("Cannot read properties of undefined (reading 'x')"), 'stop'],
    ['a bug (RangeError)', new RangeError('position out of range: 99999999999'), 'stop'],
    ['an injected crash', Object.assign(new Error('injected crash: after validate'), { crash: true }), 'stop'],
  ])('%s: %s', (_, error, outcome) => {
    expect(stepErrorOutcome(error)).toBe(outcome)
  })

  it('keeps the line of a VCF error, and the words of a refused write, for the failed ingestion', () => {
    expect(failureOf(new VcfFormatError(57, 'GT 0/2 names allele 2'))).toMatchObject({ line: 57, reason: 'GT 0/2 names allele 2' })
    const refused = failureOf(grpc(3, `INVALID_ARGUMENT: ${'x'.repeat(1000)}`))
    expect(refused?.line).toBeUndefined()
    expect(refused?.reason).toMatch(/^Firestore refused a write of the ingestion: 3 INVALID_ARGUMENT: x+…$/)
    expect(refused!.reason.length).toBeLessThan(400)
    expect(failureOf(grpc(14, 'UNAVAILABLE'))).toBeUndefined()
  })

  it('fails the ingestion on INVALID_ARGUMENT, unless it is the emulator’s aborted transaction, and retries every other gRPC code', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 16 }), fc.string(), fc.boolean(), (code, text, aborted) => {
        const details = aborted ? `${text}${EMULATOR_ABORT}` : text
        const expected = code === 3 && !details.includes('Transaction is invalid or closed') ? 'fail' : 'retry'
        expect(stepErrorOutcome(grpc(code, details))).toBe(expected)
      }),
    )
  })
})
