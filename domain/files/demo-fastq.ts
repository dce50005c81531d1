import { gzipSync } from 'node:zlib'
import { sha256 } from '../../lib/ids.js'

/**
 * The demo family's sequencing data in the local suite: a trio whose samples the clinical-data
 * seed uses by the same external ids. Each sample has a read pair, `fastq/<sample>_R1.fastq.gz`
 * and `_R2.fastq.gz`: 1,000 reads of 150 bases with Phred+33 qualities and Illumina headers,
 * pseudo-random but deterministic (the same bytes on every machine and start).
 */
export const DEMO_SAMPLES = ['S-DEMO-PROBAND', 'S-DEMO-MOTHER', 'S-DEMO-FATHER'] as const
export const DEMO_READS = 1000
export const DEMO_READ_LENGTH = 150

export const demoFastqPaths = (sample: string) => [1, 2].map((read) => `fastq/${sample}_R${read}.fastq.gz`)

/** mulberry32: a small deterministic generator, seeded from the sample and read number. */
function generator(seed: string) {
  let a = parseInt(sha256(seed).slice(0, 8), 16)
  return () => {
    a = (a + 0x6d2b79f5) | 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** The FASTQ text of one read file of a sample (read 1 or 2 of the pair). */
export function demoFastq(sample: string, read: 1 | 2, reads = DEMO_READS, length = DEMO_READ_LENGTH): string {
  const random = generator(`${sample}/R${read}`)
  const lines: string[] = []
  for (let i = 0; i < reads; i++) {
    // The pair's mates share the cluster coordinates, as a sequencer writes them.
    const x = 1000 + ((i * 7919) % 30000)
    const y = 1000 + ((i * 104729) % 30000)
    let bases = ''
    let quals = ''
    for (let j = 0; j < length; j++) {
      bases += 'ACGT'[Math.floor(random() * 4)]
      // Qualities drift down along the read, as on an Illumina run: mostly Q30–Q40, lower at the 3' end.
      const q = Math.max(2, Math.min(41, Math.round(38 - (j / length) * 10 + (random() - 0.5) * 8)))
      quals += String.fromCharCode(33 + q)
    }
    lines.push(`@${sample}:1:HDEMOXX:1:1101:${x}:${y} ${read}:N:0:ACGTACGT+TGCATGCA`, bases, '+', quals)
  }
  return lines.join('\n') + '\n'
}

export const demoFastqGz = (sample: string, read: 1 | 2) => gzipSync(Buffer.from(demoFastq(sample, read)), { level: 6 })
