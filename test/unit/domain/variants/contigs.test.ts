import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { PRIMARY_CONTIGS } from '../../../../domain/variants/assembly.js'
import { CONTIGS } from '../../../../domain/variants/contigs.js'

/** domain/variants/contigs.ts is a copy of ../shared/fixtures/vrs/*-contigs.json; this keeps them equal. */
const FIXTURES = resolve(import.meta.dirname, '../../../../../shared/fixtures/vrs')

describe('the checked-in contig tables', () => {
  it.each([
    ['GRCh37', 'grch37-contigs.json'],
    ['GRCh38', 'grch38-contigs.json'],
  ] as const)('equal the fixture of %s', (assembly, file) => {
    const fixture = JSON.parse(readFileSync(resolve(FIXTURES, file), 'utf8')) as { assembly: string; contigs: unknown }
    expect(fixture.assembly).toBe(assembly)
    expect(CONTIGS[assembly]).toEqual(fixture.contigs)
  })

  it('have every primary contig, and only those', () => {
    for (const build of Object.values(CONTIGS)) expect(Object.keys(build).sort()).toEqual([...PRIMARY_CONTIGS].sort())
  })

  it('share MT (the rCRS) and differ on every other contig', () => {
    for (const c of PRIMARY_CONTIGS) {
      const same = CONTIGS.GRCh37[c].refget_accession === CONTIGS.GRCh38[c].refget_accession
      expect([c, same]).toEqual([c, c === 'MT'])
    }
  })
})
