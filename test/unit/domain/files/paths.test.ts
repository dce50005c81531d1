import { describe, expect, it } from 'vitest'
import { checkFolderPath, checkObjectPath } from '../../../../domain/files/paths.js'

const BUCKET = 'demo-lab-demo'

describe('file paths', () => {
  it.each<[string, string]>([
    ['fastq/S1_R1.fastq.gz', 'fastq/S1_R1.fastq.gz'],
    ['top.txt', 'top.txt'],
    [`gs://${BUCKET}/fastq/S1_R1.fastq.gz`, 'fastq/S1_R1.fastq.gz'],
    ['runs/3f0e/results/variants.vcf.gz', 'runs/3f0e/results/variants.vcf.gz'],
    ['names with spaces/and ünïcode 🧬.txt', 'names with spaces/and ünïcode 🧬.txt'],
    ['a..b/c...d', 'a..b/c...d'],
    ['.hidden', '.hidden'],
    // 1,024 bytes in all, no segment over 255.
    [
      ['a'.repeat(255), 'b'.repeat(255), 'c'.repeat(255), 'd'.repeat(254), 'e'].join('/'),
      ['a'.repeat(255), 'b'.repeat(255), 'c'.repeat(255), 'd'.repeat(254), 'e'].join('/'),
    ],
    [`${'x'.repeat(255)}/${'y'.repeat(255)}`, `${'x'.repeat(255)}/${'y'.repeat(255)}`],
    ['é'.repeat(127) + 'x', 'é'.repeat(127) + 'x'],
  ])('accepts the object path %j as %j', (input, path) => {
    expect(checkObjectPath(input, BUCKET)).toEqual({ ok: true, path })
  })

  it.each<[string, RegExp]>([
    ['', /must name an object/],
    ['/fastq/S1.fastq.gz', /must not start with '\/'/],
    ['../other-bucket/secret', /'\.\.'/],
    ['fastq/../../etc/passwd', /'\.\.'/],
    ['fastq/..', /'\.\.'/],
    ['./fastq/x', /'\.' segments/],
    ['fastq//x', /empty segment/],
    ['fastq/', /names a folder/],
    ['fastq/x\u0000y', /control characters/],
    ['fastq/x\ny', /control characters/],
    ['fastq/x\u007f', /control characters/],
    ['fastq/x\u0085', /control characters/],
    ['x'.repeat(1025), /at most 1024 bytes/],
    ['é'.repeat(513), /at most 1024 bytes/],
    ['x'.repeat(256), /a segment of 256 bytes: each segment between '\/' may be at most 255 bytes/],
    [`fastq/${'é'.repeat(128)}/x.gz`, /a segment of 256 bytes: each segment between '\/' may be at most 255 bytes/],
    ['gs://other-bucket/fastq/x', /outside the project's bucket 'demo-lab-demo'/],
    [`gs://${BUCKET}`, /must name an object/],
    [`gs://${BUCKET}/`, /must name an object/],
    ['s3://demo-lab-demo/x', /must be an object name in the project's bucket/],
    ['https://storage.googleapis.com/demo-lab-demo/x', /must be an object name/],
  ])('refuses the object path %j', (input, reason) => {
    const r = checkObjectPath(input, BUCKET)
    expect(r.ok).toBe(false)
    expect(r.ok ? '' : r.reason).toMatch(reason)
  })

  it.each<[string, string]>([
    ['', ''],
    ['fastq', 'fastq/'],
    ['fastq/', 'fastq/'],
    ['runs/abc/', 'runs/abc/'],
    [`gs://${BUCKET}/fastq/`, 'fastq/'],
    [`gs://${BUCKET}/`, ''],
  ])('reads the folder %j as the prefix %j', (input, path) => {
    expect(checkFolderPath(input, BUCKET)).toEqual({ ok: true, path })
  })

  it.each(['/', '/fastq', '..', 'fastq/../..', 'a//b/', 'gs://other/x/', `${'x'.repeat(256)}/`])('refuses the folder %j', (input) => {
    expect(checkFolderPath(input, BUCKET).ok).toBe(false)
  })
})
