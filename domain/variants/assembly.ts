import { CONTIGS } from './contigs.js'

/**
 * Which build a VCF is on, and so which refget accession each of its contigs has. A VCF says its
 * build in `##reference` (a build name or a FASTA file name) and in `##contig` lines (lengths, and
 * sometimes `assembly=`); chromosome lengths differ between GRCh37 and GRCh38 for every primary
 * contig but MT, so lengths are the strongest evidence. Evidence for both builds, or for none, is
 * an unknown build: its records get platform ids, never a guessed VRS id.
 */

export const ASSEMBLIES = ['GRCh37', 'GRCh38'] as const
export type Assembly = (typeof ASSEMBLIES)[number]

/** The primary contigs in genome order. */
export const PRIMARY_CONTIGS = [
  '1',
  '2',
  '3',
  '4',
  '5',
  '6',
  '7',
  '8',
  '9',
  '10',
  '11',
  '12',
  '13',
  '14',
  '15',
  '16',
  '17',
  '18',
  '19',
  '20',
  '21',
  '22',
  'X',
  'Y',
  'MT',
] as const
export type PrimaryContig = (typeof PRIMARY_CONTIGS)[number]
const PRIMARY = new Set<string>(PRIMARY_CONTIGS)

/**
 * A contig's name in the platform: `chr7` and `7` are `7`; `M`, `chrM` and `chrMT` are `MT`;
 * `chrx` is `X`. Names that are not primary contigs (`GL000192.1`, `chrUn_gl000220`,
 * `chr1_KI270706v1_random`) are kept as written.
 */
export function normalizeContig(name: string): string {
  const bare = /^chr/i.test(name) ? name.slice(3) : name
  const upper = bare.toUpperCase()
  if (upper === 'M' || upper === 'MT') return 'MT'
  if (upper === 'X' || upper === 'Y') return upper
  if (/^(?:[1-9]|1\d|2[0-2])$/.test(bare)) return bare
  return name
}

export function isPrimaryContig(chrom: string): boolean {
  return PRIMARY.has(normalizeContig(chrom))
}

export function contigLength(assembly: Assembly, chrom: string): number | undefined {
  return (CONTIGS[assembly] as Record<string, { length: number } | undefined>)[normalizeContig(chrom)]?.length
}

function contigAccession(assembly: Assembly, chrom: string): string | undefined {
  return (CONTIGS[assembly] as Record<string, { refget_accession: string } | undefined>)[normalizeContig(chrom)]?.refget_accession
}

/** What a header says about contigs: `##contig=<ID=…,length=…,assembly=…>`. */
export interface HeaderContig {
  id: string
  length?: number
  assembly?: string
}

export interface BuildEvidence {
  source: 'reference' | 'contig_assembly' | 'contig_length'
  assembly: Assembly
  detail: string
}

export interface BuildDetection {
  /** The build, or undefined when it cannot be told (no evidence, or evidence for both). */
  assembly: Assembly | undefined
  /** Why: the evidence found, or what is missing or conflicting; for the ingestion status. */
  reason: string
  evidence: BuildEvidence[]
  /** The header's contigs by normalized name, for checking a record's contig against the build. */
  contigs: ReadonlyMap<string, HeaderContig>
  /** The reference is UCSC hg19, whose chrM is not the rCRS (NC_001807, 16,571 bp). */
  ucscHg19: boolean
}

/**
 * Build names and FASTA file names seen in `##reference` and `assembly=`, matched as whole tokens
 * (case-insensitive; `_`, `.`, `/`, `-` and the like separate tokens). NCBI assembly accessions:
 * GCA_000001405.1–.14 and GCF_000001405.13–.25 are GRCh37 and its patches, from GCA .15 and
 * GCF .26 on GRCh38.
 */
const BUILD_NAMES: Record<Assembly, string[]> = {
  GRCh37: ['grch37', 'grch37lite', 'hg19', 'b37', 'hs37', 'hs37d5', 'g1k_v37', 'homo_sapiens_assembly19'],
  GRCh38: ['grch38', 'hg38', 'b38', 'hs38', 'hs38a', 'hs38dh', 'homo_sapiens_assembly38'],
}
const TOKEN = (alternatives: string[]) => new RegExp(`(?:^|[^a-z0-9])(?:${alternatives.join('|')})(?=$|[^a-z0-9])`, 'i')
const BUILD_TOKENS: Record<Assembly, RegExp> = { GRCh37: TOKEN(BUILD_NAMES.GRCh37), GRCh38: TOKEN(BUILD_NAMES.GRCh38) }
const UCSC_HG19 = TOKEN(['hg19'])

/** The builds a reference or assembly name points to (none, one, or both when it is ambiguous). */
export function buildsNamedBy(text: string): Assembly[] {
  const found = new Set<Assembly>()
  for (const assembly of ASSEMBLIES) if (BUILD_TOKENS[assembly].test(text)) found.add(assembly)
  for (const [, kind, version] of text.matchAll(/(GCA|GCF)_000001405\.(\d+)/gi)) {
    const v = Number(version)
    if (kind!.toUpperCase() === 'GCA') found.add(v >= 15 ? 'GRCh38' : 'GRCh37')
    else if (v >= 26) found.add('GRCh38')
    else if (v >= 13) found.add('GRCh37')
  }
  return [...found]
}

/** The builds whose primary contig of this name has this length. */
function buildsWithLength(chrom: string, length: number): Assembly[] {
  return ASSEMBLIES.filter((a) => contigLength(a, chrom) === length)
}

/**
 * Detects the build from the header's `##reference` value (if any) and `##contig` lines. Each
 * primary contig whose length belongs to exactly one build is evidence for it (MT, the same in
 * both, is evidence for neither); so are build names in `##reference` and in `assembly=`. A build
 * is told when all the evidence names it and nothing names the other.
 */
export function detectAssembly(header: { reference?: string; contigs: readonly HeaderContig[] }): BuildDetection {
  const evidence: BuildEvidence[] = []
  const contigs = new Map<string, HeaderContig>()
  if (header.reference) {
    for (const assembly of buildsNamedBy(header.reference)) {
      evidence.push({ source: 'reference', assembly, detail: `##reference=${header.reference}` })
    }
  }
  for (const contig of header.contigs) {
    contigs.set(normalizeContig(contig.id), contig)
    if (contig.assembly) {
      for (const assembly of buildsNamedBy(contig.assembly)) {
        evidence.push({ source: 'contig_assembly', assembly, detail: `##contig ${contig.id} assembly=${contig.assembly}` })
      }
    }
    if (contig.length !== undefined && isPrimaryContig(contig.id)) {
      const builds = buildsWithLength(contig.id, contig.length)
      if (builds.length === 1) {
        evidence.push({ source: 'contig_length', assembly: builds[0]!, detail: `##contig ${contig.id} length=${contig.length}` })
      }
    }
  }
  const ucscHg19 = header.reference !== undefined && UCSC_HG19.test(header.reference)
  const named = new Set(evidence.map((e) => e.assembly))
  if (named.size === 0) {
    const reason = header.reference
      ? `the build cannot be told: ##reference=${header.reference} names neither GRCh37 nor GRCh38 and no ##contig length is one of theirs`
      : 'the build cannot be told: no ##reference and no ##contig length of GRCh37 or GRCh38'
    return { assembly: undefined, reason, evidence, contigs, ucscHg19 }
  }
  if (named.size > 1) {
    const say = (a: Assembly) =>
      evidence
        .filter((e) => e.assembly === a)
        .map((e) => e.detail)
        .slice(0, 3)
        .join(', ')
    return {
      assembly: undefined,
      reason: `the build cannot be told: conflicting evidence, GRCh37 (${say('GRCh37')}) and GRCh38 (${say('GRCh38')})`,
      evidence,
      contigs,
      ucscHg19,
    }
  }
  const [assembly] = named as Set<Assembly>
  const sources = [...new Set(evidence.map((e) => e.source))].join(', ')
  return { assembly, reason: `${assembly} from ${sources}`, evidence, contigs, ucscHg19 }
}

/**
 * The refget accession of a record's contig on the detected build, or undefined when it cannot be
 * told: unknown build, a contig that is not primary (alts, decoys, unplaced), a contig the header
 * declares with a length other than the build's, or UCSC hg19's chrM (not the rCRS) unless the
 * header declares it 16,569 long.
 */
export function refgetAccessionFor(build: BuildDetection, chrom: string): string | undefined {
  if (!build.assembly) return undefined
  const name = normalizeContig(chrom)
  const declared = build.contigs.get(name)
  const length = contigLength(build.assembly, name)
  if (length === undefined) return undefined
  if (declared?.length !== undefined && declared.length !== length) return undefined
  if (name === 'MT' && build.ucscHg19 && declared?.length === undefined) return undefined
  return contigAccession(build.assembly, name)
}
