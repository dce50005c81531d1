import { Readable } from 'node:stream'
import { PRIMARY_CONTIGS, type Assembly } from './assembly.js'
import { CONTIGS } from './contigs.js'

/**
 * A synthetic, annotated trio VCF: deterministic for a seed, valid for `openVcf`, for tests, the
 * benchmark and the local suite's demo pipeline. Records spread over every primary contig in
 * genome order (density by contig length), mostly SNVs with some deletions, insertions,
 * multi-allelic sites and a few `<DEL>`s; genotypes follow Mendel from the parents (a male
 * proband's X and Y come from one parent, MT calls are haploid), with AD, DP and GQ; a VEP `CSQ`
 * field names real gene symbols (their coordinates are not real: a record takes a gene of its
 * contig) with consequences, HGVS and a canonical flag. One record is always a de novo candidate:
 * a PASS missense in SCN2A, heterozygous in the proband with both parents homozygous reference
 * at good depth (`deNovoSite`).
 */

export interface TrioVcfOptions {
  samples: { proband: string; mother: string; father: string }
  /** How many records (default 300). */
  records?: number
  seed?: number
  assembly?: Assembly
  /** The proband's sex (default male: hemizygous X). */
  probandSex?: 'male' | 'female'
}

/** The planted de novo candidate (1-based POS on the build's naming). */
export function deNovoSite(assembly: Assembly = 'GRCh38'): { chrom: string; pos: number; ref: string; alt: string; gene: string } {
  return assembly === 'GRCh38'
    ? { chrom: 'chr2', pos: 165_310_406, ref: 'G', alt: 'A', gene: 'SCN2A' }
    : { chrom: '2', pos: 166_166_916, ref: 'G', alt: 'A', gene: 'SCN2A' }
}

const GENES: Record<string, string[]> = {
  '1': ['MTHFR', 'LMNA', 'MUTYH'],
  '2': ['SCN2A', 'MSH2', 'TTN'],
  '3': ['MLH1', 'SCN5A'],
  '4': ['FGFR3', 'HTT'],
  '5': ['APC', 'NSD1'],
  '6': ['PKHD1', 'COL11A2'],
  '7': ['CFTR', 'BRAF'],
  '8': ['CHD7', 'NBN'],
  '9': ['TSC1', 'NOTCH1'],
  '10': ['PTEN', 'RET'],
  '11': ['ATM', 'HBB'],
  '12': ['PKP2', 'KRAS'],
  '13': ['BRCA2', 'RB1'],
  '14': ['MYH7', 'NRXN3'],
  '15': ['FBN1', 'UBE3A'],
  '16': ['TSC2', 'PKD1'],
  '17': ['BRCA1', 'TP53'],
  '18': ['SMAD4', 'TCF4'],
  '19': ['LDLR', 'APOE'],
  '20': ['GNAS', 'JAG1'],
  '21': ['APP', 'RUNX1'],
  '22': ['CHEK2', 'NF2'],
  X: ['DMD', 'MECP2'],
  Y: ['SRY'],
  MT: ['MT-ND1', 'MT-CO1'],
}

export const SYNTHETIC_CSQ_FORMAT = 'Allele|Consequence|IMPACT|SYMBOL|Gene|Feature_type|Feature|BIOTYPE|EXON|INTRON|HGVSc|HGVSp|CANONICAL'

const IMPACT: Record<string, string> = {
  stop_gained: 'HIGH',
  frameshift_variant: 'HIGH',
  splice_donor_variant: 'HIGH',
  missense_variant: 'MODERATE',
  inframe_deletion: 'MODERATE',
  inframe_insertion: 'MODERATE',
  synonymous_variant: 'LOW',
  splice_region_variant: 'LOW',
}
const AMINO = [
  'Ala',
  'Arg',
  'Asn',
  'Asp',
  'Cys',
  'Gln',
  'Glu',
  'Gly',
  'His',
  'Ile',
  'Leu',
  'Lys',
  'Met',
  'Phe',
  'Pro',
  'Ser',
  'Thr',
  'Trp',
  'Tyr',
  'Val',
]
const BASES = ['A', 'C', 'G', 'T']

/** mulberry32: a small, fast, seedable generator of floats in [0, 1). */
function random(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** Stable fake Ensembl ids for a gene symbol. */
function ensemblIds(symbol: string): { gene: string; transcript: string; protein: string } {
  let h = 2166136261
  for (const c of symbol) h = Math.imul(h ^ c.charCodeAt(0), 16777619) >>> 0
  const n = String(h % 1_000_000).padStart(6, '0')
  return { gene: `ENSG00000${n}`, transcript: `ENST00000${n}.${(h % 9) + 1}`, protein: `ENSP00000${n}.${(h % 7) + 1}` }
}

/** Records per contig, by length (largest remainders), every contig at least one when there are enough. */
function allocate(assembly: Assembly, total: number): Map<string, number> {
  const table = CONTIGS[assembly] as Record<string, { length: number }>
  const sum = PRIMARY_CONTIGS.reduce((s, c) => s + table[c]!.length, 0)
  const shares = PRIMARY_CONTIGS.map((c) => ({ c, exact: (total * table[c]!.length) / sum }))
  const counts = new Map(shares.map((s) => [s.c, Math.floor(s.exact)] as [string, number]))
  let left = total - [...counts.values()].reduce((s, n) => s + n, 0)
  for (const s of [...shares].sort((a, b) => b.exact - Math.floor(b.exact) - (a.exact - Math.floor(a.exact)))) {
    if (left-- <= 0) break
    counts.set(s.c, counts.get(s.c)! + 1)
  }
  if (total >= 2 * PRIMARY_CONTIGS.length) {
    for (const c of ['Y', 'MT', '21', '22']) {
      if (counts.get(c)! === 0) {
        counts.set(c, 1)
        counts.set('1', counts.get('1')! - 1)
      }
    }
  }
  return counts
}

export function* trioVcfLines(options: TrioVcfOptions): Generator<string> {
  const assembly = options.assembly ?? 'GRCh38'
  const total = options.records ?? 300
  const rnd = random(options.seed ?? 1)
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!
  const maleProband = (options.probandSex ?? 'male') === 'male'
  const prefix = assembly === 'GRCh38' ? 'chr' : ''
  const table = CONTIGS[assembly] as Record<string, { length: number }>
  const { proband, mother, father } = options.samples

  yield '##fileformat=VCFv4.2\n'
  yield '##fileDate=20240101\n'
  yield `##source=platform-synthetic-trio (seed ${options.seed ?? 1})\n`
  yield `##reference=file:///references/${assembly === 'GRCh38' ? 'Homo_sapiens_assembly38.fasta' : 'human_g1k_v37.fasta'}\n`
  for (const c of PRIMARY_CONTIGS) yield `##contig=<ID=${prefix}${c === 'MT' && prefix ? 'M' : c},length=${table[c]!.length},assembly=${assembly}>\n`
  yield '##ALT=<ID=DEL,Description="Deletion">\n'
  yield '##FILTER=<ID=PASS,Description="All filters passed">\n'
  yield '##FILTER=<ID=LowQual,Description="Low quality">\n'
  yield '##INFO=<ID=AC,Number=A,Type=Integer,Description="Allele count in genotypes">\n'
  yield '##INFO=<ID=AN,Number=1,Type=Integer,Description="Total number of alleles in called genotypes">\n'
  yield '##INFO=<ID=AF,Number=A,Type=Float,Description="Allele frequency">\n'
  yield '##INFO=<ID=DP,Number=1,Type=Integer,Description="Combined depth">\n'
  yield '##INFO=<ID=SVTYPE,Number=1,Type=String,Description="Type of structural variant">\n'
  yield '##INFO=<ID=END,Number=1,Type=Integer,Description="End position of the variant">\n'
  yield '##INFO=<ID=SVLEN,Number=A,Type=Integer,Description="Length of the structural variant">\n'
  yield `##INFO=<ID=CSQ,Number=.,Type=String,Description="Consequence annotations from Ensembl VEP. Format: ${SYNTHETIC_CSQ_FORMAT}">\n`
  yield '##FORMAT=<ID=GT,Number=1,Type=String,Description="Genotype">\n'
  yield '##FORMAT=<ID=AD,Number=R,Type=Integer,Description="Allelic depths for the ref and alt alleles">\n'
  yield '##FORMAT=<ID=DP,Number=1,Type=Integer,Description="Read depth">\n'
  yield '##FORMAT=<ID=GQ,Number=1,Type=Integer,Description="Genotype quality">\n'
  yield `#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\t${proband}\t${mother}\t${father}\n`

  const deNovo = deNovoSite(assembly)
  const counts = allocate(assembly, Math.max(0, total - 1))
  for (const c of PRIMARY_CONTIGS) {
    const name = `${prefix}${c === 'MT' && prefix ? 'M' : c}`
    const n = counts.get(c)!
    const length = table[c]!.length
    const bin = length / Math.max(1, n)
    let deNovoDone = c !== '2'
    for (let i = 0; i < n; i++) {
      const pos = Math.max(1, Math.min(length - 60, Math.floor((i + 0.05 + rnd() * 0.9) * bin)))
      if (!deNovoDone && pos >= deNovo.pos) {
        yield deNovoLine(deNovo)
        deNovoDone = true
        if (pos === deNovo.pos) continue
      }
      yield recordLine(c, name, pos, i)
    }
    if (!deNovoDone) yield deNovoLine(deNovo)
  }

  function deNovoLine(site: ReturnType<typeof deNovoSite>): string {
    const ids = ensemblIds(site.gene)
    const csq = `${site.alt}|missense_variant|MODERATE|${site.gene}|${ids.gene}|Transcript|${ids.transcript}|protein_coding|12/27||${ids.transcript}:c.1642G>A|${ids.protein}:p.Glu548Lys|YES`
    return [
      site.chrom,
      site.pos,
      '.',
      site.ref,
      site.alt,
      '812.6',
      'PASS',
      `AC=1;AN=6;AF=0.167;DP=96;CSQ=${csq}`,
      'GT:AD:DP:GQ',
      '0/1:17,15:32:99',
      '0/0:34,0:34:99',
      '0/0:30,0:30:99',
    ]
      .join('\t')
      .concat('\n')
  }

  function recordLine(c: string, name: string, pos: number, i: number): string {
    const roll = rnd()
    const ref1 = pick(BASES)
    let ref = ref1
    let alts: string[]
    let sv: { end: number; svlen: number } | undefined
    if ((roll >= 0.16 && roll < 0.165 && c !== 'MT') || (c === '1' && i === 2)) {
      const len = 500 + Math.floor(rnd() * 20000)
      alts = ['<DEL>']
      sv = { end: pos + len, svlen: -len }
    } else if (roll < 0.04 && c !== 'MT') {
      alts = [pick(BASES.filter((b) => b !== ref1)), `${ref1}${pick(BASES)}${pick(BASES)}`]
    } else if (roll < 0.11) {
      ref = ref1 + Array.from({ length: 1 + Math.floor(rnd() * 5) }, () => pick(BASES)).join('')
      alts = [ref1]
    } else if (roll < 0.16) {
      alts = [ref1 + Array.from({ length: 1 + Math.floor(rnd() * 4) }, () => pick(BASES)).join('')]
    } else {
      alts = [pick(BASES.filter((b) => b !== ref1))]
    }

    // Genotypes: each parent's alleles, then one from each (X and Y of a male proband: one parent's only).
    const freq = 0.05 + rnd() * 0.55
    const allele = () => (rnd() < freq ? (alts.length > 1 && rnd() < 0.4 ? 2 : 1) : 0)
    const haploid = c === 'MT'
    const maleX = c === 'X' && maleProband
    const fatherAllele = allele()
    const fatherGt = c === 'X' || c === 'Y' ? [fatherAllele, fatherAllele] : [fatherAllele, allele()]
    const motherGt = c === 'Y' ? undefined : [allele(), allele()]
    let probandGt: number[] | undefined
    if (c === 'Y') probandGt = maleProband ? [fatherAllele, fatherAllele] : undefined
    else if (maleX) {
      const fromMother = pick(motherGt!)
      probandGt = [fromMother, fromMother]
    } else probandGt = [pick(motherGt!), pick(fatherGt)]
    if (haploid) {
      probandGt = [motherGt![0]!]
      motherGt!.splice(1)
      fatherGt.splice(1)
    }
    const gts = [probandGt, motherGt, fatherGt]
    if (!gts.some((g) => g?.some((a) => a > 0))) (motherGt ?? fatherGt)[0] = 1
    const phased = !haploid && rnd() < 0.08

    const samples = gts.map((g, s) => {
      if (!g || rnd() < 0.01) return haploid ? '.:.:0:.' : './.:.:0:.'
      const dp = 12 + Math.floor(rnd() * 40)
      const counts = [0, ...alts.map(() => 0)]
      for (let r = 0; r < dp; r++) {
        const a = g[Math.floor(rnd() * g.length)]!
        counts[rnd() < 0.02 ? Math.floor(rnd() * counts.length) : a]!++
      }
      const sep = phased && s === 0 ? '|' : '/'
      const gq = Math.min(99, 20 + Math.floor(rnd() * 80))
      return `${g.join(sep)}:${counts.join(',')}:${dp}:${gq}`
    })

    const called = gts.flatMap((g) => g ?? [])
    const ac = alts.map((_, k) => called.filter((a) => a === k + 1).length)
    const an = called.length
    const qual = (30 + rnd() * 2000).toFixed(2)
    const filter = rnd() < 0.92 ? 'PASS' : 'LowQual'
    const csq = alts.map((alt) => csqFor(c, pos, ref, alt, alts, i)).join(',')
    const info = [
      `AC=${ac.join(',')}`,
      `AN=${an}`,
      `AF=${ac.map((x) => (an ? x / an : 0).toFixed(3)).join(',')}`,
      `DP=${20 + Math.floor(rnd() * 100)}`,
      ...(sv ? ['SVTYPE=DEL', `END=${sv.end}`, `SVLEN=${sv.svlen}`] : []),
      `CSQ=${csq}`,
    ].join(';')
    return `${name}\t${pos}\t${rnd() < 0.3 ? `rs${100000 + Math.floor(rnd() * 9e8)}` : '.'}\t${ref}\t${alts.join(',')}\t${qual}\t${filter}\t${info}\tGT:AD:DP:GQ\t${samples.join('\t')}\n`
  }

  function vepAllele(ref: string, alt: string, alts: string[]): string {
    if (alt.startsWith('<')) return 'deletion'
    const shared = [ref, ...alts].every((a) => a[0] === ref[0])
    return shared ? alt.slice(1) || '-' : alt
  }

  function csqFor(c: string, pos: number, ref: string, alt: string, alts: string[], i: number): string {
    const allele = vepAllele(ref, alt, alts)
    const genes = GENES[c]!
    if (rnd() < 0.35) return `${allele}|intergenic_variant|MODIFIER||||||||||`
    const gene = genes[Math.floor((i / 7) % genes.length)]!
    const ids = ensemblIds(gene)
    const indel = ref.length !== alt.length
    const coding = rnd()
    const cpos = 1 + Math.floor(rnd() * 4000)
    const aa = Math.ceil(cpos / 3)
    let consequence: string
    let hgvsc = ''
    let hgvsp = ''
    if (alt.startsWith('<')) consequence = 'transcript_ablation'
    else if (indel) {
      consequence =
        coding < 0.3
          ? (ref.length - alt.length) % 3 === 0
            ? ref.length > alt.length
              ? 'inframe_deletion'
              : 'inframe_insertion'
            : 'frameshift_variant'
          : 'intron_variant'
      hgvsc = `${ids.transcript}:c.${cpos}${ref.length > alt.length ? `_${cpos + ref.length - 2}del` : `_${cpos + 1}ins${alt.slice(1)}`}`
      if (coding < 0.3) hgvsp = `${ids.protein}:p.${pick(AMINO)}${aa}${consequence === 'frameshift_variant' ? 'fs' : 'del'}`
    } else if (coding < 0.12) {
      consequence = rnd() < 0.15 ? 'missense_variant&splice_region_variant' : 'missense_variant'
      hgvsc = `${ids.transcript}:c.${cpos}${ref}>${alt}`
      hgvsp = `${ids.protein}:p.${pick(AMINO)}${aa}${pick(AMINO)}`
    } else if (coding < 0.22) {
      consequence = 'synonymous_variant'
      const a = pick(AMINO)
      hgvsc = `${ids.transcript}:c.${cpos}${ref}>${alt}`
      hgvsp = `${ids.protein}:p.${a}${aa}%3D`
    } else if (coding < 0.24) {
      consequence = 'stop_gained'
      hgvsc = `${ids.transcript}:c.${cpos}${ref}>${alt}`
      hgvsp = `${ids.protein}:p.${pick(AMINO)}${aa}Ter`
    } else if (coding < 0.3) {
      consequence = pick(['3_prime_UTR_variant', '5_prime_UTR_variant', 'splice_region_variant&intron_variant'])
      const where = consequence === '3_prime_UTR_variant' ? `*${cpos}` : consequence === '5_prime_UTR_variant' ? `-${cpos % 200}` : `${cpos}+4`
      hgvsc = `${ids.transcript}:c.${where}${ref}>${alt}`
    } else {
      consequence = pick(['intron_variant', 'intron_variant', 'upstream_gene_variant', 'downstream_gene_variant'])
      if (consequence === 'intron_variant') hgvsc = `${ids.transcript}:c.${cpos}+${1 + Math.floor(rnd() * 900)}${ref}>${alt}`
    }
    const impact = IMPACT[consequence.split('&')[0]!] ?? 'MODIFIER'
    const exon = hgvsp ? `${1 + Math.floor(rnd() * 20)}/27` : ''
    const canonical = `${allele}|${consequence}|${impact}|${gene}|${ids.gene}|Transcript|${ids.transcript}|protein_coding|${exon}||${hgvsc}|${hgvsp}|YES`
    // Some sites have a second, non-canonical transcript of the same gene with a milder consequence.
    if (pos % 3 !== 0 || alt.startsWith('<')) return canonical
    const other = ensemblIds(`${gene}-201`)
    return `${canonical},${allele}|downstream_gene_variant|MODIFIER|${gene}|${ids.gene}|Transcript|${other.transcript}|retained_intron|||||`
  }
}

/** The whole VCF as text (for a few thousand records; stream larger ones with `trioVcfStream`). */
export function trioVcf(options: TrioVcfOptions): string {
  return [...trioVcfLines(options)].join('')
}

/** The VCF as a stream of ~64 KiB chunks, generated as it is read. */
export function trioVcfStream(options: TrioVcfOptions): Readable {
  function* chunks(): Generator<string> {
    let buffer = ''
    for (const line of trioVcfLines(options)) {
      buffer += line
      if (buffer.length >= 65536) {
        yield buffer
        buffer = ''
      }
    }
    if (buffer) yield buffer
  }
  return Readable.from(chunks(), { objectMode: false })
}
