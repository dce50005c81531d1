import { readFileSync } from 'node:fs'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { parse } from 'csv-parse/sync'
import { describe, expect, it } from 'vitest'
import {
  fastqPairs,
  pedPhenotype,
  pedSex,
  SAMPLESHEET_COLUMNS,
  samplesheetCsv,
  samplesheetRows,
  type SheetEntry,
} from '../../../../domain/clinical/samplesheet.js'
import { ApiError } from '../../../../lib/errors.js'

/**
 * The samplesheet against nf-core/raredisease's own input schema (../shared/fixtures/raredisease:
 * assets/schema_input.json and the pipeline's example sheet): every row the service writes must
 * pass it, read back from the CSV the way nf-schema reads a samplesheet.
 */
const FIXTURES = new URL('../../../../../shared/fixtures/raredisease/', import.meta.url)
const schema = JSON.parse(readFileSync(new URL('schema_input.json', FIXTURES), 'utf8')) as {
  items: { properties: Record<string, { type?: string; anyOf?: Array<{ type?: string }> }> }
}

const ajv = new Ajv2020({ allErrors: true, strict: false })
// nf-schema's own keywords: annotations for the pipeline (meta, errorMessage), file checks it makes on disk (exists), a check across rows (uniqueEntries).
for (const keyword of ['meta', 'exists', 'errorMessage', 'uniqueEntries'])
  ajv.addKeyword({ keyword, schemaType: ['string', 'boolean', 'array', 'object'] })
// format file-path: a path nf-schema resolves; its shape is checked by each column's pattern.
ajv.addFormat('file-path', true)
const validate = ajv.compile(schema)

/** What nf-schema does with a CSV cell: an empty cell is absent; a whole number is an integer where the column takes one. */
const takesInteger = (column: string) => {
  const p = schema.items.properties[column]
  return p?.type === 'integer' || Boolean(p?.anyOf?.some((a) => a.type === 'integer'))
}
function asNfSchemaReads(csv: string): Array<Record<string, string | number>> {
  return (parse(csv, { columns: true }) as Array<Record<string, string>>).map((row) =>
    Object.fromEntries(
      Object.entries(row)
        .filter(([, v]) => v !== '')
        .map(([k, v]) => [k, takesInteger(k) && /^-?\d+$/.test(v) ? Number(v) : v]),
    ),
  )
}
const problems = (rows: unknown[]) => (validate(rows) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`))

const entry = (
  external_id: string,
  role: SheetEntry['role'],
  subject: Partial<SheetEntry['subject']> & { id: string },
  fastq?: string[],
): SheetEntry => ({
  sample: {
    id: `id-${external_id}`,
    external_id,
    fastq: fastq ?? [`gs://lab/fastq/${external_id}_R1.fastq.gz`, `gs://lab/fastq/${external_id}_R2.fastq.gz`],
  },
  subject: { sex: 'unknown', affected_status: 'unknown', ...subject },
  role,
})
const trio = [
  entry('S1', 'proband', { id: 'kid', sex: 'male', affected_status: 'affected', mother_id: 'mum', father_id: 'dad' }, [
    'gs://lab/fastq/S1_L1_R1.fastq.gz',
    'gs://lab/fastq/S1_L1_R2.fastq.gz',
    'gs://lab/fastq/S1_L2_R1.fq.gz',
    'gs://lab/fastq/S1_L2_R2.fq.gz',
  ]),
  entry('S2', 'mother', { id: 'mum', sex: 'female', affected_status: 'unaffected' }),
  entry('S3', 'father', { id: 'dad', sex: 'male', affected_status: 'unknown' }),
  entry('S4', 'sibling', { id: 'sib', sex: 'other', affected_status: 'affected' }, ['gs://lab/fastq/S4_R1.fastq.gz']),
]

describe('the raredisease samplesheet', () => {
  it("accepts the pipeline's own example sheet (the validation itself is sound)", () => {
    const rows = asNfSchemaReads(readFileSync(new URL('samplesheet.csv', FIXTURES), 'utf8'))
    expect(rows).toHaveLength(5)
    expect(problems(rows)).toEqual([])
    expect(problems([{ ...rows[0], sample: 'has space' }])).not.toEqual([])
    expect(problems([{ ...rows[0], sex: 3 }])).not.toEqual([])
    expect(problems([{ ...rows[0], fastq_1: 'x.bam' }])).not.toEqual([])
  })

  it('writes rows that pass the schema: required columns, allowed values, one row per FASTQ pair', () => {
    const csv = samplesheetCsv(samplesheetRows('ORD-2026-000001', trio))
    expect(csv.split('\n')[0]).toBe(SAMPLESHEET_COLUMNS.join(','))
    const rows = asNfSchemaReads(csv)
    expect(problems(rows)).toEqual([])
    expect(rows).toEqual([
      {
        sample: 'S1',
        lane: 1,
        fastq_1: 'gs://lab/fastq/S1_L1_R1.fastq.gz',
        fastq_2: 'gs://lab/fastq/S1_L1_R2.fastq.gz',
        sex: 1,
        phenotype: 2,
        paternal_id: 'S3',
        maternal_id: 'S2',
        case_id: 'ORD-2026-000001',
      },
      {
        sample: 'S1',
        lane: 2,
        fastq_1: 'gs://lab/fastq/S1_L2_R1.fq.gz',
        fastq_2: 'gs://lab/fastq/S1_L2_R2.fq.gz',
        sex: 1,
        phenotype: 2,
        paternal_id: 'S3',
        maternal_id: 'S2',
        case_id: 'ORD-2026-000001',
      },
      {
        sample: 'S2',
        lane: 1,
        fastq_1: 'gs://lab/fastq/S2_R1.fastq.gz',
        fastq_2: 'gs://lab/fastq/S2_R2.fastq.gz',
        sex: 2,
        phenotype: 1,
        paternal_id: '0',
        maternal_id: '0',
        case_id: 'ORD-2026-000001',
      },
      {
        sample: 'S3',
        lane: 1,
        fastq_1: 'gs://lab/fastq/S3_R1.fastq.gz',
        fastq_2: 'gs://lab/fastq/S3_R2.fastq.gz',
        sex: 1,
        phenotype: 0,
        paternal_id: '0',
        maternal_id: '0',
        case_id: 'ORD-2026-000001',
      },
      // Single-end: no fastq_2. A sibling without recorded parents takes the order's mother and father.
      {
        sample: 'S4',
        lane: 1,
        fastq_1: 'gs://lab/fastq/S4_R1.fastq.gz',
        sex: 'other',
        phenotype: 2,
        paternal_id: 'S3',
        maternal_id: 'S2',
        case_id: 'ORD-2026-000001',
      },
    ])
  })

  it('quotes values with commas and quotes, and they read back unchanged', () => {
    const csv = samplesheetCsv(samplesheetRows('ORD-1', [entry('A,"B"', 'proband', { id: 'p' })]))
    expect(csv.split('\n')[1]).toMatch(/^"A,""B""",1,/)
    expect(asNfSchemaReads(csv)[0]!.sample).toBe('A,"B"')
  })

  it('answers 409 naming each sample without FASTQ files', () => {
    const run = () => samplesheetRows('ORD-1', [entry('S1', 'proband', { id: 'p' }, []), entry('S2', 'mother', { id: 'm' }, [])])
    expect(run).toThrow(ApiError)
    expect(run).toThrow('sample S1, S2 has no FASTQ files')
  })

  it('codes sex and phenotype as PED does, and pairs FASTQ files R1, R2', () => {
    expect([pedSex('male'), pedSex('female'), pedSex('unknown'), pedSex('other')]).toEqual([1, 2, 0, 'other'])
    expect([pedPhenotype('unaffected'), pedPhenotype('affected'), pedPhenotype('unknown')]).toEqual([1, 2, 0])
    expect(fastqPairs(['a', 'b', 'c'])).toEqual([
      ['a', 'b'],
      ['c', undefined],
    ])
  })
})
