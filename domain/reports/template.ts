import { TEMPLATE_TYPES, type TemplateType } from './model.js'

/**
 * The fixed text of each report template: its title, and the methods and limitations every report
 * of that template prints (ISO 15189 7.4.1.6: a report states the examination's method and its
 * limitations). The text is the laboratory's standard wording for the template; a snapshot
 * (format 2) keeps the text of its moment, so editing it here changes only later snapshots, never
 * what a signed report prints.
 */
export interface TemplateText {
  title: string
  methods: string[]
  limitations: string[]
}

const GENOME_METHODS = [
  'Genomic DNA was sequenced by short-read whole-genome or exome sequencing. Reads were aligned to the reference genome named with each variant (GRCh38 unless stated), and small variants were called jointly for the samples of the order.',
  'Variants were annotated with their consequence on each transcript (Ensembl VEP or snpEff); HGVS names are given on the transcript shown. Variants were filtered by inheritance, population frequency, consequence and call quality, and reviewed by a clinical scientist.',
  'Variants are classified by the ACMG/AMP 2015 standards (Richards et al., Genet Med 2015;17:405–424) with the ClinGen Sequence Variant Interpretation recommendations; the criteria applied are listed with each classification.',
]

const GENOME_LIMITATIONS = [
  'Regions of low coverage or high homology (pseudogenes, segmental duplications), repeat expansions, structural variants, low-level mosaicism, and variants in regions not targeted are not reliably detected.',
  'A variant classification reflects the evidence available on the date of the report and may change as knowledge grows; a reclassification is issued as an amended report.',
  'The interpretation depends on the clinical information and family relationships given with the order: incorrect relationships or sample identities can lead to an incorrect result.',
]

export const REPORT_TEMPLATES: Record<TemplateType, TemplateText> = {
  germline_diagnostic: {
    title: 'Genetic test report: germline diagnostic',
    methods: GENOME_METHODS,
    limitations: [...GENOME_LIMITATIONS, 'A negative result does not exclude a genetic cause of the condition.'],
  },
  carrier: {
    title: 'Genetic test report: carrier screening',
    methods: GENOME_METHODS,
    limitations: [
      ...GENOME_LIMITATIONS,
      'Carrier screening reports pathogenic and likely pathogenic variants in the genes screened only: a negative result reduces, but does not remove, the chance of being a carrier.',
    ],
  },
  secondary_findings: {
    title: 'Genetic test report: secondary findings',
    methods: [
      ...GENOME_METHODS,
      'Secondary findings are sought in the genes of the ACMG secondary findings list in force on the date of the report, for the patient who consented to them.',
    ],
    limitations: [...GENOME_LIMITATIONS, 'Only pathogenic and likely pathogenic variants in the listed genes are reported.'],
  },
  negative: {
    title: 'Genetic test report',
    methods: GENOME_METHODS,
    limitations: [...GENOME_LIMITATIONS, 'No variant explaining the indication was found: this does not exclude a genetic cause of the condition.'],
  },
}

const isTemplate = (value: string): value is TemplateType => (TEMPLATE_TYPES as readonly string[]).includes(value)

/** A template's text today (a string in the content); undefined for one this code does not know. */
export const templateText = (templateType: string): TemplateText | undefined =>
  isTemplate(templateType) ? REPORT_TEMPLATES[templateType] : undefined

/** What a snapshot prints as its template: the text it holds (format 2), else, for a format 1 snapshot, the template's text today. */
export const snapshotTemplate = (report: { template_type: string; template?: TemplateText | null }): TemplateText | undefined =>
  report.template === undefined ? templateText(report.template_type) : (report.template ?? undefined)
