/**
 * The `trio-local` demo pipeline's program: a self-contained Node.js script (no dependencies, run as
 * `node -e <script>` by the container_entrypoint, on the host under the local suite's executor, in
 * a `node` image in the cloud) that plays the variant-calling and annotation end of a germline trio
 * pipeline. Given an order's samplesheet (nf-core/raredisease format, PARAM_SAMPLESHEET, a gs:// URI
 * read through the bucket mount), it writes `<case>.vep.vcf.gz` to the run's output folder: GRCh38
 * `##contig` lines, a VEP `CSQ` header, a few hundred records over chromosomes 1–22, X, Y and MT
 * (density by length) with Mendelian genotypes (GT:AD:DP:GQ) for the family's samples, named as in
 * the samplesheet, proband first; some multi-allelic sites and indels; and one de novo candidate in
 * the proband, a PASS missense in SCN2A at chr2:165310406 G>A, both parents homozygous reference.
 * Deterministic for a run (seeded by PLATFORM_RUN_ID); PARAM_RECORDS changes the count (10–100000).
 */
export const TRIO_LOCAL_DE_NOVO = { chrom: 'chr2', pos: 165_310_406, ref: 'G', alt: 'A', gene: 'SCN2A' } as const

export const TRIO_LOCAL_SCRIPT = String.raw`
'use strict'
const fs = require('node:fs'), path = require('node:path'), zlib = require('node:zlib'), crypto = require('node:crypto')
const env = process.env
const fail = (m) => { process.stderr.write('trio-local: ' + m + '\n'); process.exit(2) }
const uri = env.PARAM_SAMPLESHEET || fail('PARAM_SAMPLESHEET is required (the order samplesheet, a gs:// URI in the project bucket)')
const prefix = 'gs://' + env.PLATFORM_BUCKET + '/'
if (!uri.startsWith(prefix)) fail('samplesheet ' + uri + ' is not in the project bucket ' + prefix)
const sheetFile = path.join(env.PLATFORM_BUCKET_DIR, uri.slice(prefix.length))
if (!fs.existsSync(sheetFile)) fail('samplesheet ' + uri + ' does not exist')
const wanted = Math.min(100000, Math.max(10, Number(env.PARAM_RECORDS || 300) || 300))

// The samplesheet: sample,lane,fastq_1,fastq_2,sex,phenotype,paternal_id,maternal_id,case_id (one row per lane).
function csvRows(text) {
  const rows = []; let row = [], cell = '', q = false
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]
    if (q) { if (ch === '"') { if (text[i + 1] === '"') { cell += '"'; i++ } else q = false } else cell += ch }
    else if (ch === '"') q = true
    else if (ch === ',') { row.push(cell); cell = '' }
    else if (ch === '\n' || ch === '\r') { if (ch === '\r' && text[i + 1] === '\n') i++; row.push(cell); rows.push(row); row = []; cell = '' }
    else cell += ch
  }
  if (cell !== '' || row.length) { row.push(cell); rows.push(row) }
  return rows.filter((r) => r.some((c) => c !== ''))
}
const [head, ...body] = csvRows(fs.readFileSync(sheetFile, 'utf8'))
if (!head || !head.includes('sample')) fail('samplesheet has no header with a sample column')
const col = (r, name) => r[head.indexOf(name)] || ''
const people = new Map()
for (const r of body) if (!people.has(col(r, 'sample'))) people.set(col(r, 'sample'), { name: col(r, 'sample'), sex: col(r, 'sex'), affected: col(r, 'phenotype') === '2', father: col(r, 'paternal_id'), mother: col(r, 'maternal_id'), case_id: col(r, 'case_id') })
if (!people.size) fail('samplesheet lists no samples')
const all = [...people.values()]
const proband = all.find((p) => (p.father !== '0' && people.has(p.father)) || (p.mother !== '0' && people.has(p.mother))) || all.find((p) => p.affected) || all[0]
const mother = people.get(proband.mother), father = people.get(proband.father)
const samples = [proband, mother, father].filter(Boolean)
for (const p of all) if (!samples.includes(p)) samples.push(p)
const caseId = (proband.case_id || proband.name).replace(/[^A-Za-z0-9._-]/g, '_')

// A deterministic generator seeded by the run.
let seed = crypto.createHash('sha256').update(env.PLATFORM_RUN_ID || 'trio-local').digest().readUInt32LE(0) || 1
const rnd = () => { seed ^= seed << 13; seed >>>= 0; seed ^= seed >>> 17; seed ^= seed << 5; seed >>>= 0; return seed / 4294967296 }
const pick = (xs) => xs[Math.floor(rnd() * xs.length)]

const CONTIGS = [['chr1',248956422],['chr2',242193529],['chr3',198295559],['chr4',190214555],['chr5',181538259],['chr6',170805979],['chr7',159345973],['chr8',145138636],['chr9',138394717],['chr10',133797422],['chr11',135086622],['chr12',133275309],['chr13',114364328],['chr14',107043718],['chr15',101991189],['chr16',90338345],['chr17',83257441],['chr18',80373285],['chr19',58617616],['chr20',64444167],['chr21',46709983],['chr22',50818468],['chrX',156040895],['chrY',57227415],['chrM',16569]]
const GENES = { chr1:['MTHFR','LMNA','MUTYH'], chr2:['MSH2','TTN','SCN1A'], chr3:['MLH1','SCN5A'], chr4:['FGFR3','HTT'], chr5:['APC','NSD1'], chr6:['PKHD1','COL11A2'], chr7:['CFTR','BRAF'], chr8:['CHD7','NBN'], chr9:['TSC1','NOTCH1'], chr10:['PTEN','RET'], chr11:['ATM','HBB'], chr12:['PKP2','KRAS'], chr13:['BRCA2','RB1'], chr14:['MYH7','NRXN3'], chr15:['FBN1','UBE3A'], chr16:['TSC2','PKD1'], chr17:['BRCA1','TP53'], chr18:['SMAD4','TCF4'], chr19:['LDLR','APOE'], chr20:['GNAS','JAG1'], chr21:['APP','RUNX1'], chr22:['CHEK2','NF2'], chrX:['DMD','MECP2'], chrY:['SRY'], chrM:['MT-ND1','MT-CO1'] }
const CONSEQUENCES = [['missense_variant','MODERATE',0.25],['synonymous_variant','LOW',0.2],['intron_variant','MODIFIER',0.3],['3_prime_UTR_variant','MODIFIER',0.1],['splice_region_variant','LOW',0.05],['stop_gained','HIGH',0.04],['frameshift_variant','HIGH',0.03],['upstream_gene_variant','MODIFIER',0.03]]
const BASES = ['A','C','G','T']
const AA = ['Ala','Arg','Asn','Asp','Cys','Gln','Glu','Gly','His','Ile','Leu','Lys','Met','Phe','Pro','Ser','Thr','Trp','Tyr','Val']
const ensg = (gene) => 'ENSG' + String(crypto.createHash('md5').update(gene).digest().readUInt32LE(0) % 1e11).padStart(11, '0')
const enst = (gene) => 'ENST' + String(crypto.createHash('md5').update(gene + 'T').digest().readUInt32LE(0) % 1e11).padStart(11, '0')

function consequenceOf(isIndel) {
  if (isIndel && rnd() < 0.3) return ['frameshift_variant', 'HIGH']
  let x = rnd()
  for (const [c, impact, p] of CONSEQUENCES) { if ((x -= p) <= 0) return [c, impact] }
  return ['intron_variant', 'MODIFIER']
}
function csqEntry(allele, gene, consequence, impact, pos, ref, alt) {
  const coding = ['missense_variant', 'synonymous_variant', 'stop_gained', 'frameshift_variant'].includes(consequence)
  const cpos = 1 + (pos % 4000)
  const hgvsc = enst(gene) + '.1:c.' + cpos + (ref.length === alt.length ? ref + '>' + alt : (ref.length > alt.length ? 'del' : 'ins' + alt.slice(1)))
  const aa = pick(AA), codon = Math.ceil(cpos / 3)
  const hgvsp = !coding ? '' : 'ENSP' + enst(gene).slice(4) + '.1:p.' + aa + codon + (consequence === 'missense_variant' ? pick(AA) : consequence === 'stop_gained' ? 'Ter' : consequence === 'synonymous_variant' ? '=' : 'fs')
  return [allele, consequence, impact, gene, ensg(gene), 'Transcript', enst(gene) + '.1', 'protein_coding', coding ? (1 + (pos % 20)) + '/27' : '', coding ? '' : (1 + (pos % 15)) + '/26', hgvsc, hgvsp, 'YES'].join('|')
}

// Genotypes: parents drawn by allele frequency, the child inheriting one allele of each (X and Y as the sexes have them, MT from the mother).
const isMale = (p) => p && p.sex === '1'
function parentGt(af, alts, chrom, p) {
  if (chrom === 'chrY' && !isMale(p)) return null
  const allele = () => (rnd() < af ? 1 + Math.floor(rnd() * alts) : 0)
  if (chrom === 'chrM') { const a = allele(); return [a, a] }
  if (chrom === 'chrX' && isMale(p)) { const a = allele(); return [a, a] }
  return [allele(), allele()].sort()
}
function childGt(m, f, chrom, child) {
  if (chrom === 'chrY') return isMale(child) && f ? [f[0], f[0]] : null
  if (chrom === 'chrM') return m ? [m[0], m[0]] : [0, 0]
  const fromM = m ? pick(m) : 0
  if (chrom === 'chrX' && isMale(child)) return [fromM, fromM]
  return [fromM, f ? pick(f) : 0].sort()
}
function formatCall(gt, alts, good) {
  if (!gt) return './.:.:.:.'
  const dp = good ? 25 + Math.floor(rnd() * 30) : 6 + Math.floor(rnd() * 8)
  const ad = new Array(alts + 1).fill(0)
  for (const a of gt) ad[a] += Math.round(dp / 2)
  const gq = gt[0] === gt[1] ? 60 + Math.floor(rnd() * 39) : 40 + Math.floor(rnd() * 59)
  return gt.join('/') + ':' + ad.join(',') + ':' + dp + ':' + (good ? gq : Math.floor(gq / 3))
}

const total = CONTIGS.reduce((s, [, l]) => s + l, 0)
const records = []
for (const [chrom, length] of CONTIGS) {
  if (chrom === 'chrY' && !samples.some(isMale)) continue
  const n = chrom === 'chrM' ? Math.max(2, Math.round(wanted * 0.01)) : Math.max(1, Math.round((wanted * length) / total))
  const used = new Set()
  for (let i = 0; i < n; i++) {
    let pos; do { pos = 10000 + Math.floor(rnd() * (length - 20000)) } while (used.has(pos)); used.add(pos)
    records.push({ chrom, pos })
  }
}
records.push({ chrom: 'chr2', pos: 165310406, denovo: true })
const order = new Map(CONTIGS.map(([c], i) => [c, i]))
records.sort((a, b) => order.get(a.chrom) - order.get(b.chrom) || a.pos - b.pos)

const lines = ['##fileformat=VCFv4.2', '##fileDate=' + new Date().toISOString().slice(0, 10).replace(/-/g, ''), '##source=trio-local 1.0.0 (platform demo: synthetic calls, VEP-style annotation)', '##reference=GRCh38_full_analysis_set_plus_decoy_hla.fa']
for (const [c, l] of CONTIGS) lines.push('##contig=<ID=' + c + ',length=' + l + ',assembly=GRCh38>')
lines.push(
  '##FILTER=<ID=PASS,Description="All filters passed">',
  '##FILTER=<ID=LowQual,Description="Low quality">',
  '##INFO=<ID=DP,Number=1,Type=Integer,Description="Total depth">',
  '##INFO=<ID=AF,Number=A,Type=Float,Description="Allele frequency in the family">',
  '##INFO=<ID=CSQ,Number=.,Type=String,Description="Consequence annotations from Ensembl VEP. Format: Allele|Consequence|IMPACT|SYMBOL|Gene|Feature_type|Feature|BIOTYPE|EXON|INTRON|HGVSc|HGVSp|CANONICAL">',
  '##FORMAT=<ID=GT,Number=1,Type=String,Description="Genotype">',
  '##FORMAT=<ID=AD,Number=R,Type=Integer,Description="Allelic depths">',
  '##FORMAT=<ID=DP,Number=1,Type=Integer,Description="Read depth">',
  '##FORMAT=<ID=GQ,Number=1,Type=Integer,Description="Genotype quality">',
  ['#CHROM', 'POS', 'ID', 'REF', 'ALT', 'QUAL', 'FILTER', 'INFO', 'FORMAT', ...samples.map((p) => p.name)].join('\t'),
)
for (const r of records) {
  if (r.denovo) {
    const calls = samples.map((p) => (p === proband ? '0/1:20,18:38:99' : p === mother || p === father ? '0/0:35,0:35:99' : '0/0:30,0:30:90'))
    lines.push(['chr2', 165310406, '.', 'G', 'A', '812.4', 'PASS', 'DP=' + (38 + 35 * (samples.length - 1)) + ';AF=' + (1 / (2 * samples.length)).toFixed(3) + ';CSQ=' + csqEntry('A', 'SCN2A', 'missense_variant', 'MODERATE', 165310406, 'G', 'A'), 'GT:AD:DP:GQ', ...calls].join('\t'))
    continue
  }
  const indel = rnd() < 0.12
  const multi = !indel && rnd() < 0.08
  const ref = indel && rnd() < 0.5 ? pick(BASES) + pick(BASES) + pick(BASES) : pick(BASES)
  const others = BASES.filter((b) => b !== ref[0])
  const alts = multi ? [others[0], others[1 + Math.floor(rnd() * 2)]] : [indel ? (ref.length > 1 ? ref[0] : ref + pick(BASES) + pick(BASES)) : pick(others)]
  const af = pick([0.02, 0.1, 0.3, 0.5])
  const m = parentGt(af, alts.length, r.chrom, mother), f = parentGt(af, alts.length, r.chrom, father)
  const gts = samples.map((p) => (p === proband ? childGt(m, f, r.chrom, proband) : p === mother ? m : p === father ? f : parentGt(af, alts.length, r.chrom, p)))
  if (gts.every((g) => !g || g.every((a) => a === 0))) gts[0] = r.chrom === 'chrY' || (r.chrom === 'chrX' && isMale(proband)) || r.chrom === 'chrM' ? [1, 1] : [0, 1]
  const good = rnd() > 0.1
  const qual = good ? (30 + rnd() * 1500).toFixed(1) : (5 + rnd() * 20).toFixed(1)
  const gene = pick(GENES[r.chrom])
  const csq = alts.map((alt) => { const [c, impact] = consequenceOf(alt.length !== ref.length); return csqEntry(ref.length === alt.length ? alt : alt.length > ref.length ? alt.slice(1) : '-', gene, c, impact, r.pos, ref, alt) })
  const carried = gts.flat().filter((a) => a && a > 0).length
  const info = 'DP=' + (30 * samples.length) + ';AF=' + alts.map((_, i) => (gts.flat().filter((a) => a === i + 1).length / (2 * samples.length) || carried / (4 * samples.length)).toFixed(3)).join(',') + ';CSQ=' + csq.join(',')
  lines.push([r.chrom, r.pos, '.', ref, alts.join(','), qual, good ? 'PASS' : 'LowQual', info, 'GT:AD:DP:GQ', ...gts.map((g) => formatCall(g, alts.length, good))].join('\t'))
}
const out = env.PLATFORM_OUTPUT_DIR
fs.mkdirSync(out, { recursive: true })
const file = path.join(out, caseId + '.vep.vcf.gz')
fs.writeFileSync(file, zlib.gzipSync(lines.join('\n') + '\n'))
process.stdout.write('trio-local: wrote ' + (lines.length - records.length) + ' header lines and ' + records.length + ' records for ' + samples.map((p) => p.name).join(', ') + ' to ' + file + '\n')
`
