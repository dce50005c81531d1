import type { Context, Hono } from 'hono'
import {
  checkForm,
  csrfField,
  field,
  html,
  pager,
  redirectWithNotice,
  renderConsole,
  type ConsoleProject,
  type Raw,
} from '../../../lib/console/index.js'
import { auditContext, type AppEnv } from '../../../lib/http.js'
import { UUID_RE } from '../../../lib/ids.js'
import { frozenBy } from '../../../domain/clinical/decide.js'
import { SAMPLE_TYPES, type SampleRecord, type SubjectRecord } from '../../../domain/clinical/model.js'
import type { ClinicalDeps, ClinicalEnv } from '../deps.js'
import { CreateSample, SampleListQuery, UpdateSample } from '../schemas.js'
import { projectOf } from '../views.js'
import {
  formPage,
  clinicalPage,
  projectBase,
  formAlert,
  frozenField,
  listQuery,
  optionsOf,
  refusedForm,
  textArea,
  type FieldErrors,
  type FormStatus,
} from './forms.js'
import { historyLink } from './links.js'
import { sampleTable } from './subjects.js'

/** The samples pages: list, create (for a subject), a sample, edit (a sample a signed order holds is frozen whole, shown so). */

const FIELDS = ['external_id', 'subject_id', 'type', 'collected_at', 'received_at', 'fastq', 'bam', 'cram', 'vcf'] as const
type SampleValues = Partial<Record<(typeof FIELDS)[number], string>>
const SUBJECT_CHOICES = 200

const base = projectBase
const view = (page: ConsoleProject) => ({ session: page, project: { project: page.project, org: page.org }, section: 'subjects' as const })
const day = (t: SampleRecord['collected_at']) => (t ? t.toDate().toISOString().slice(0, 10) : undefined)

const valuesOf = (s: SampleRecord): SampleValues => ({
  external_id: s.external_id,
  subject_id: s.subject_id,
  type: s.type,
  collected_at: day(s.collected_at),
  received_at: day(s.received_at),
  fastq: s.fastq.join('\n'),
  bam: s.bam,
  cram: s.cram,
  vcf: s.vcf,
})

/** The form's text as the API's JSON: dates (a day, UTC) as instants, FASTQ one per line; blanks absent (create) or null (edit). */
function formBody(page: ConsoleProject, fields: readonly string[], clear: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const name of fields) {
    const value = page.form.get(name)
    if (name === 'fastq') out.fastq = value ? value.split(/\s+/).filter(Boolean) : clear ? null : undefined
    else if (!value) out[name] = clear && !['external_id', 'subject_id', 'type'].includes(name) ? null : undefined
    else if (name === 'collected_at' || name === 'received_at') out[name] = /^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value
    else out[name] = value
  }
  return out
}

async function subjectChoices(c: Context<ClinicalEnv>, page: ConsoleProject, current?: string) {
  const { subjects } = c.get('deps')
  const all = (await subjects.list(page.project.id, {}, { page_size: SUBJECT_CHOICES })).items
  const selected = current && !all.some((s) => s.id === current) ? await subjects.get(page.project.id, current) : undefined
  return [...(selected ? [selected] : []), ...all].map((s: SubjectRecord) => ({
    value: s.id,
    label: `${s.external_id}${s.display_name ? ` (${s.display_name})` : ''}`,
  }))
}

async function sampleForm(
  c: Context<ClinicalEnv>,
  page: ConsoleProject,
  opts: { action: string; values: SampleValues; errors: FieldErrors; submit: string },
): Promise<Raw> {
  const { values: v, errors: e } = opts
  const bucket = page.project.bucket_name
  return html`<form method="post" action="${opts.action}" class="stack" id="sample-form" novalidate>
    ${csrfField(page)} ${formAlert(e)}
    ${field({ name: 'external_id', label: 'External id', value: v.external_id, error: e.external_id, required: true, hint: 'The tube or accession barcode, unique in the project; the sample name in samplesheets' })}
    ${field({ name: 'subject_id', label: 'Subject', value: v.subject_id, error: e.subject_id, options: [{ value: '', label: '— choose —' }, ...(await subjectChoices(c, page, v.subject_id))] })}
    ${field({ name: 'type', label: 'Type', value: v.type ?? 'blood', error: e.type, options: optionsOf(SAMPLE_TYPES) })}
    ${field({ name: 'collected_at', label: 'Collected on', type: 'date', value: v.collected_at, error: e.collected_at, hint: 'Optional' })}
    ${field({ name: 'received_at', label: 'Received on', type: 'date', value: v.received_at, error: e.received_at, hint: 'Optional' })}
    ${textArea({ name: 'fastq', label: 'FASTQ files', value: v.fastq, error: e.fastq, rows: 4, hint: `One gs:// address per line in the project bucket (gs://${bucket}/…), read pairs as R1, R2, R1, R2…` })}
    ${field({ name: 'bam', label: 'BAM', value: v.bam, error: e.bam, hint: 'Optional .bam in the project bucket' })}
    ${field({ name: 'cram', label: 'CRAM', value: v.cram, error: e.cram, hint: 'Optional .cram in the project bucket' })}
    ${field({ name: 'vcf', label: 'VCF', value: v.vcf, error: e.vcf, hint: 'Optional .vcf, .vcf.gz or .bcf in the project bucket' })}
    <div class="actions"><button type="submit" id="save-sample">${opts.submit}</button></div>
  </form>`
}

const notFound = (c: Context<ClinicalEnv>, page: ConsoleProject) =>
  renderConsole(
    c,
    {
      ...view(page),
      title: 'Not found',
      body: html`<h1>Not found</h1>
        <p class="notice warn" role="alert" id="error">There is no such sample in this project.</p>`,
    },
    404,
  )

async function loadSample(c: Context<ClinicalEnv>, page: ConsoleProject, id: string) {
  return UUID_RE.test(id) ? c.get('deps').samples.get(page.project.id, id) : undefined
}

export function samplePages(app: Hono<AppEnv<ClinicalDeps>>) {
  app.get('/p/:project/samples', async (c) => {
    const page = await clinicalPage(c, 'clinical.read')
    const b = base(c, page)
    const { type, external_id: q } = listQuery(c, SampleListQuery.pick({ type: true, external_id: true }), ['type', 'external_id'])
    const result = await c
      .get('deps')
      .samples.list(page.project.id, { type, external_id: q }, { page_token: c.req.query('page_token'), page_size: 50 })
    const body = html`<h1>Samples</h1>
      <p><a class="button" href="${b}/samples/new" id="new-sample">New sample</a></p>
      <form method="get" action="${b}/samples" class="stack" role="search">
        ${field({ name: 'external_id', label: 'Find by external id', value: q, hint: 'The exact barcode' })}
        ${field({ name: 'type', label: 'Type', value: type ?? '', options: optionsOf(SAMPLE_TYPES, 'any') })}
        <div class="actions"><button type="submit" class="secondary">Search</button></div>
      </form>
      ${sampleTable(b, result.items, q ? `Samples with external id ${q}` : 'Samples, newest first')} ${pager(c, result.nextPageToken)}`
    return renderConsole(c, { ...view(page), title: 'Samples', crumbs: [{ href: `${b}/subjects`, text: 'Subjects' }], body })
  })

  app.get('/p/:project/samples/new', async (c) => {
    const page = await clinicalPage(c, 'clinical.write')
    return newSamplePage(c, page, { subject_id: c.req.query('subject') })
  })

  app.post('/p/:project/samples', async (c) => {
    const page = await clinicalPage(c, 'clinical.write')
    const b = base(c, page)
    const values = Object.fromEntries(FIELDS.map((f) => [f, page.form.get(f)])) as SampleValues
    const again = (errors: FieldErrors, status: FormStatus) => newSamplePage(c, page, values, { errors, status })
    const parsed = checkForm(CreateSample, formBody(page, FIELDS, false))
    if (!parsed.ok) return again(parsed.errors, 400)
    const date = (v: string | undefined) => (v ? new Date(v) : undefined)
    try {
      const sample = await c
        .get('deps')
        .samples.create(
          auditContext(c),
          projectOf(c),
          { ...parsed.data, collected_at: date(parsed.data.collected_at), received_at: date(parsed.data.received_at) },
          page.principal.user.id,
        )
      return redirectWithNotice(c, `${b}/samples/${sample.id}`, `Sample ${sample.external_id} created.`)
    } catch (err) {
      const { status, errors } = await refusedForm(c, err, FIELDS)
      return again(errors, status)
    }
  })

  app.get('/p/:project/samples/:id', async (c) => {
    const page = await clinicalPage(c, 'clinical.read')
    const b = base(c, page)
    const sample = await loadSample(c, page, c.req.param('id'))
    if (!sample) return notFound(c, page)
    const subject = await c.get('deps').subjects.get(page.project.id, sample.subject_id)
    const signed = frozenBy([sample])
    const list = (items: readonly string[]) =>
      items.length
        ? html`<ul>
            ${items.map((i) => html`<li><code>${i}</code></li>`)}
          </ul>`
        : '—'
    const body = html`<h1>Sample ${sample.external_id}</h1>
      ${signed.length ? html`<p class="notice info" id="frozen">Frozen: signed order ${signed.join(', ')} holds this sample; nothing of it can change.</p>` : ''}
      <p class="actions">
        ${signed.length ? '' : html`<a class="button" href="${b}/samples/${sample.id}/edit" id="edit-sample">Edit</a>`}
        ${historyLink(c, page, 'sample', sample.id)}
      </p>
      <div class="table-wrap">
        <table class="fields">
          <caption class="visually-hidden">
            The sample's record
          </caption>
          <tr>
            <th scope="row">External id</th>
            <td>${sample.external_id}</td>
          </tr>
          <tr>
            <th scope="row">Subject</th>
            <td>${subject ? html`<a href="${b}/subjects/${subject.id}">${subject.external_id}</a>` : sample.subject_id}</td>
          </tr>
          <tr>
            <th scope="row">Type</th>
            <td>${sample.type}</td>
          </tr>
          <tr>
            <th scope="row">Collected</th>
            <td>${day(sample.collected_at) ?? '—'}</td>
          </tr>
          <tr>
            <th scope="row">Received</th>
            <td>${day(sample.received_at) ?? '—'}</td>
          </tr>
          <tr>
            <th scope="row">FASTQ</th>
            <td>${list(sample.fastq)}</td>
          </tr>
          <tr>
            <th scope="row">BAM</th>
            <td>${sample.bam ? html`<code>${sample.bam}</code>` : '—'}</td>
          </tr>
          <tr>
            <th scope="row">CRAM</th>
            <td>${sample.cram ? html`<code>${sample.cram}</code>` : '—'}</td>
          </tr>
          <tr>
            <th scope="row">VCF</th>
            <td>${sample.vcf ? html`<code>${sample.vcf}</code>` : '—'}</td>
          </tr>
          <tr>
            <th scope="row">Orders</th>
            <td>
              ${sample.orders.length ? sample.orders.map((o) => html`<a href="${b}/orders/${o.order_id}">${o.accession}</a>${o.frozen ? ' (signed)' : ''} `) : '—'}
            </td>
          </tr>
        </table>
      </div>`
    return renderConsole(c, { ...view(page), title: `Sample ${sample.external_id}`, crumbs: [{ href: `${b}/samples`, text: 'Samples' }], body })
  })

  app.get('/p/:project/samples/:id/edit', async (c) => {
    const page = await clinicalPage(c, 'clinical.write')
    return editPage(c, page, c.req.param('id'))
  })

  app.post('/p/:project/samples/:id/edit', async (c) => {
    const page = await clinicalPage(c, 'clinical.write')
    const b = base(c, page)
    const sample = await loadSample(c, page, c.req.param('id'))
    if (!sample) return notFound(c, page)
    const sent = FIELDS.filter((f) => page.form.all(f).length > 0)
    const values = { ...valuesOf(sample), ...Object.fromEntries(sent.map((f) => [f, page.form.get(f)])) } as SampleValues
    const parsed = checkForm(UpdateSample, formBody(page, sent, true))
    if (!parsed.ok) return editPage(c, page, sample.id, { values, errors: parsed.errors, status: 400 })
    const date = (v: string | null | undefined) => (v === undefined ? undefined : v === null ? null : new Date(v))
    try {
      const { fastq, collected_at, received_at, ...rest } = parsed.data
      const updated = await c.get('deps').samples.update(auditContext(c), projectOf(c), sample.id, {
        ...rest,
        ...(fastq !== undefined ? { fastq: fastq ?? [] } : {}),
        collected_at: date(collected_at),
        received_at: date(received_at),
      })
      return redirectWithNotice(c, `${b}/samples/${updated.id}`, `Sample ${updated.external_id} saved.`)
    } catch (err) {
      const { status, errors } = await refusedForm(c, err, FIELDS)
      return editPage(c, page, sample.id, { values, errors, status })
    }
  })
}

async function editPage(
  c: Context<ClinicalEnv>,
  page: ConsoleProject,
  id: string,
  again?: { values: SampleValues; errors: FieldErrors; status: FormStatus },
): Promise<Response> {
  const b = base(c, page)
  const sample = await loadSample(c, page, id)
  if (!sample) return notFound(c, page)
  const signed = frozenBy([sample])
  const crumbs = [
    { href: `${b}/samples`, text: 'Samples' },
    { href: `${b}/samples/${sample.id}`, text: sample.external_id },
  ]
  // A sample a signed order holds is frozen whole (decide-sample.ts): shown, not offered as a form.
  const content = signed.length
    ? html`${again ? formAlert(again.errors) : ''}
        <p class="notice info" id="frozen-why">
          Signed order ${signed.join(', ')} holds this sample: its samplesheet rows are made of it, so nothing of it can change. To correct it, enter
          the order in error.
        </p>
        ${(Object.entries(valuesOf(sample)) as Array<[string, string | undefined]>).map(([k, v]) => frozenField(k.replaceAll('_', ' '), v ?? ''))}`
    : await sampleForm(c, page, {
        action: `${b}/samples/${sample.id}/edit`,
        values: again?.values ?? valuesOf(sample),
        errors: again?.errors ?? {},
        submit: 'Save',
      })
  return formPage(c, { ...view(page), crumbs }, `Edit sample ${sample.external_id}`, content, again?.status)
}

/** The new-sample form, empty or as it was posted with the refusal beside its fields. */
async function newSamplePage(
  c: Context<ClinicalEnv>,
  page: ConsoleProject,
  values: SampleValues,
  again?: { errors: FieldErrors; status: FormStatus },
): Promise<Response> {
  const b = base(c, page)
  const form = await sampleForm(c, page, { action: `${b}/samples`, values, errors: again?.errors ?? {}, submit: 'Create sample' })
  return formPage(c, { ...view(page), crumbs: [{ href: `${b}/samples`, text: 'Samples' }] }, 'New sample', form, again?.status)
}
