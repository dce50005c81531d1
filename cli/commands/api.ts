import { readFileSync } from 'node:fs'
import { Option, type Command } from 'commander'
import { SERVICES, type ServiceName } from '../api/services.js'
import {
  addToQuery,
  bodyOf,
  defaultMethod,
  joinPages,
  nextPageQuery,
  parseHeader,
  QUERY_METHODS,
  route,
  splitField,
  typedValue,
  type Field,
  type ServiceApi,
} from '../api-request.js'
import { action, type Cli } from '../context.js'
import { usageError } from '../errors.js'
import { examples } from '../help.js'
import { readStdin } from '../prompt.js'

interface ApiOptions {
  field: string[]
  rawField: string[]
  header: string[]
  input?: string
  paginate?: boolean
  service?: ServiceName
}

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']
const collect = (value: string, previous: string[]) => [...previous, value]

type Operation = { parameters?: Array<{ in: string; name: string }> }
type Document = { paths: Record<string, Record<string, Operation>> }

/** Every service's OpenAPI document, as the typed client is generated from them (cli/api/). */
const documents = () =>
  new Map<string, Document>(
    SERVICES.map(({ name }) => [name, JSON.parse(readFileSync(new URL(`../api/${name}.openapi.json`, import.meta.url), 'utf8')) as Document]),
  )

/**
 * Whether a request carries the project: when its operation declares the X-Project-ID header
 * (required or not: the audit service reads a project's events by it), or, for a path of no
 * document, when its service is project-scoped or --project is given.
 */
function sendsProject(doc: Document | undefined, template: string | undefined, method: string, service: string, projectGiven: boolean): boolean {
  const operation = template === undefined ? undefined : doc?.paths[template]?.[method.toLowerCase()]
  if (operation) return (operation.parameters ?? []).some((p) => p.in === 'header' && p.name.toLowerCase() === 'x-project-id')
  return projectGiven || Boolean(SERVICES.find((s) => s.name === service)?.projectScoped)
}

/** An answer's body as the value to print: JSON parsed, other text as it came, nothing for an empty body. */
async function answerOf(res: Response): Promise<{ json: boolean; value: unknown; text: string }> {
  const text = await res.text()
  const json = (res.headers.get('content-type') ?? '').includes('json') && text.trim() !== ''
  if (!json) return { json: false, value: text, text }
  try {
    return { json: true, value: JSON.parse(text) as unknown, text }
  } catch {
    return { json: false, value: text, text }
  }
}

export function register(program: Command, cli: Cli) {
  program
    .command('api')
    .description(
      "Call any service's API with the profile's credentials and project, as gh api does: prints the JSON answer (the service is found from the path)",
    )
    .argument('<method-or-path>', 'GET, POST, PUT, PATCH or DELETE; or the path alone (GET; POST with fields or --input, unless --paginate)')
    .argument('[path]', 'the path, with or without /api/v1 (runs, /runs?status=running, /api/v1/orders/ORD-2026-000123)')
    .option(
      '-F, --field <key=value>',
      "a typed field: true, false, null and numbers as JSON, @file the file's text (@- stdin); key[] appends, key[sub] nests",
      collect,
      [],
    )
    .option('-f, --raw-field <key=value>', 'a field whose value is always a string', collect, [])
    .option('--input <file>', "the request body from a file ('-' reads stdin); fields then go into the query")
    .option('-H, --header <Name: value>', 'an extra request header (Accept: text/csv)', collect, [])
    .option('--paginate', 'follow X-Next-Page-Token to the last page, joining the pages into one array (GET)')
    .addOption(new Option('--service <name>', 'the service, when the path is in no document (or in several)').choices(SERVICES.map((s) => s.name)))
    .addHelpText(
      'after',
      examples(
        'platform api /runs?status=running                     # GET; the compute service owns /api/v1/runs',
        'platform api GET /orders/ORD-2026-000123/variants -F gene=SCN2A -F min_qual=30',
        'platform api POST /reports -f order_id=ORD-2026-000123 -f template_type=germline_diagnostic',
        'platform api PATCH /subjects/<id> -F phenotypes[]=HP:0001250 -F birth_date=null',
        'platform api POST /runs --input run.json -H "Idempotency-Key: $(uuidgen)"',
        'platform api /events --paginate -F action=run.submitted > events.json   # GET: --paginate follows GETs',
        "platform api GET /orders/ORD-2026-000123/samplesheet -H 'Accept: text/csv' > samplesheet.csv",
        'platform api GET /openapi.json --service files     # a path of no document: name the service',
      ) +
        `
Fields (gh api's): GET and HEAD put them into the query, other methods into a JSON body. -F types its
value (true, false, null, numbers; @file reads a file), -f never does; key[]=v appends to a list,
key[sub]=v nests an object. The project (--project, else the profile's) is sent as X-Project-ID
wherever the operation takes one; -H 'X-Project-ID: <id>' sends another, -H 'X-Project-ID:' none.

The answer is printed as it came: JSON indented on a terminal, on one line through a pipe (or in
--format json|yaml|csv|table(…)); an error status prints the service's detail on stderr and exits
with the code of the rest of the CLI (5 forbidden, 6 not found, 7 rejected, 8 unavailable).`,
    )
    .action(
      action(cli, async (session, command) => {
        const [first, second] = command.processedArgs as [string, string | undefined]
        const opts = command.opts<ApiOptions>()
        const named = second === undefined ? undefined : first.toUpperCase()
        if (named !== undefined && !METHODS.includes(named)) throw usageError(`'${first}' is not a method: one of ${METHODS.join(', ')}`)
        // Standard input is read once, before the rules run (they take files as text): for --input - or one @- field.
        const fromStdin = (opts.input === '-' ? 1 : 0) + opts.field.filter((f) => f.slice(f.indexOf('=') + 1) === '@-').length
        if (fromStdin > 1) throw usageError('standard input is read once: by --input - or by one -F key=@-')
        const stdin = fromStdin ? await readStdin(cli.io) : ''
        const read = (file: string) => {
          if (file === '-') return stdin
          try {
            return readFileSync(file, 'utf8')
          } catch (error) {
            throw usageError(`cannot read ${file}: ${(error as Error).message}`)
          }
        }
        const fields: Field[] = [
          ...opts.field.map((flag) => {
            const { keys, append, raw } = splitField(flag, '--field')
            return { keys, append, value: typedValue(raw, read) }
          }),
          ...opts.rawField.map((flag) => {
            const { keys, append, raw } = splitField(flag, '--raw-field')
            return { keys, append, value: raw }
          }),
        ]
        const input = opts.input === undefined ? undefined : read(opts.input)
        const method = named ?? defaultMethod(fields.length > 0 || input !== undefined, opts.paginate)
        if (opts.paginate && method !== 'GET') throw usageError('--paginate follows the pages of a GET')
        if (input !== undefined && QUERY_METHODS.has(method)) throw usageError(`--input is a request body: ${method} sends none`)

        const docs = documents()
        const apis: ServiceApi[] = [...docs].map(([name, doc]) => ({ name, paths: Object.keys(doc.paths) }))
        const target = route(apis, second ?? first, opts.service)
        const inQuery = QUERY_METHODS.has(method) || input !== undefined
        const query = inQuery ? addToQuery(target.query, fields) : target.query
        const body = input ?? (!inQuery && fields.length ? JSON.stringify(bodyOf(fields)) : undefined)

        const headers = new Headers()
        if (body !== undefined) headers.set('content-type', 'application/json')
        const client = session.client()
        const given = opts.header.map(parseHeader)
        const projectHeader = given.some(([name]) => name.toLowerCase() === 'x-project-id')
        if (
          !projectHeader &&
          sendsProject(docs.get(target.service), target.template, method, target.service, session.globals.project !== undefined)
        ) {
          headers.set('x-project-id', await session.projectId(client))
        }
        // `-H 'Name:'` sends no such header (no X-Project-ID: an organization's audit events).
        for (const [name, value] of given)
          if (value === '') headers.delete(name)
          else headers.set(name, value)

        const send = async (q: URLSearchParams) => {
          const search = q.toString()
          const res = await client.request(target.service as ServiceName, target.path + (search ? `?${search}` : ''), { method, headers, body })
          return { answer: await answerOf(res), token: res.headers.get('x-next-page-token') }
        }
        let { answer, token } = await send(query)
        if (!answer.json) {
          if (answer.text) cli.io.stdout.write(answer.text.endsWith('\n') ? answer.text : `${answer.text}\n`)
          return
        }
        const pages = [answer.value]
        while (opts.paginate && token) {
          ;({ answer, token } = await send(nextPageQuery(query, token)))
          pages.push(answer.value)
        }
        const value = joinPages(pages)
        const chosen = session.globals.format !== undefined || session.globals.json
        if (chosen) session.out.result(value, () => JSON.stringify(value, null, 2))
        else session.out.line(cli.io.stdout.isTTY ? JSON.stringify(value, null, 2) : JSON.stringify(value))
      }),
    )
}
