import { readFileSync } from 'node:fs'
import { Command, CommanderError, Help, Option } from 'commander'
import { register as api } from './commands/api.js'
import { register as auditEvents } from './commands/audit/events.js'
import { register as completion } from './commands/completion.js'
import { register as config } from './commands/config.js'
import { register as filesCp } from './commands/files/cp.js'
import { register as filesDownload } from './commands/files/download.js'
import { register as filesLs } from './commands/files/ls.js'
import { register as filesMv } from './commands/files/mv.js'
import { register as filesRm } from './commands/files/rm.js'
import { register as filesUpload } from './commands/files/upload.js'
import { register as login } from './commands/login.js'
import { register as logout } from './commands/logout.js'
import { register as ordersAddSample } from './commands/orders/add-sample.js'
import { register as ordersCreate } from './commands/orders/create.js'
import { register as ordersDelete } from './commands/orders/delete.js'
import { register as ordersEdit } from './commands/orders/edit.js'
import { register as ordersLabflow } from './commands/orders/labflow.js'
import { register as ordersList } from './commands/orders/list.js'
import { register as ordersRemoveSample } from './commands/orders/remove-sample.js'
import { register as ordersSamplesheet } from './commands/orders/samplesheet.js'
import { register as ordersShow } from './commands/orders/show.js'
import { register as ordersTransition } from './commands/orders/transition.js'
import { register as pipelinesList } from './commands/pipelines/list.js'
import { register as pipelinesShow } from './commands/pipelines/show.js'
import { register as projectsList } from './commands/projects/list.js'
import { register as reportsAddVariant } from './commands/reports/add-variant.js'
import { register as reportsComment } from './commands/reports/comment.js'
import { register as reportsComments } from './commands/reports/comments.js'
import { register as reportsCreate } from './commands/reports/create.js'
import { register as reportsEdit } from './commands/reports/edit.js'
import { register as reportsList } from './commands/reports/list.js'
import { register as reportsShow } from './commands/reports/show.js'
import { register as reportsTransition } from './commands/reports/transition.js'
import { register as runsCancel } from './commands/runs/cancel.js'
import { register as runsList } from './commands/runs/list.js'
import { register as runsLogs } from './commands/runs/logs.js'
import { register as runsOutputs } from './commands/runs/outputs.js'
import { register as runsRelaunch } from './commands/runs/relaunch.js'
import { register as runsStatus } from './commands/runs/status.js'
import { register as runsSubmit } from './commands/runs/submit.js'
import { register as runsWatch } from './commands/runs/watch.js'
import { register as samplesCreate } from './commands/samples/create.js'
import { register as samplesDelete } from './commands/samples/delete.js'
import { register as samplesEdit } from './commands/samples/edit.js'
import { register as samplesList } from './commands/samples/list.js'
import { register as samplesShow } from './commands/samples/show.js'
import { register as subjectsCreate } from './commands/subjects/create.js'
import { register as subjectsDelete } from './commands/subjects/delete.js'
import { register as subjectsEdit } from './commands/subjects/edit.js'
import { register as subjectsList } from './commands/subjects/list.js'
import { register as subjectsShow } from './commands/subjects/show.js'
import { register as token } from './commands/token.js'
import { register as variantsList } from './commands/variants/list.js'
import { register as variantsShow } from './commands/variants/show.js'
import { register as whoami } from './commands/whoami.js'
import type { Cli } from './context.js'
import { EXIT, EXIT_MEANINGS, explain } from './errors.js'
import { FORMAT_NAMES, parseFormat } from './format.js'
import { examples } from './help.js'
import type { Io } from './prompt.js'
import { cliEnv, SettingsStore } from './settings.js'

const { version } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as { version: string }

/** The environment variables the CLI reads: the root's help and the CLI reference print these. */
export const ENVIRONMENT: ReadonlyArray<[name: string, meaning: string]> = [
  ['PLATFORM_PROFILE', 'the profile to use (--profile takes precedence)'],
  ['PLATFORM_PROJECT', "the project to use (--project takes precedence; else the profile's)"],
  ['PLATFORM_TOKEN', 'a personal access token used instead of the stored credentials (CI)'],
  ['PLATFORM_CONFIG_DIR', 'where profiles and credentials are kept (default ~/.config/platform)'],
  ['NO_COLOR', 'set to any value: no colour in the output (https://no-color.org)'],
  [
    'PLATFORM_UPLOAD_CHUNK_MIB',
    'the chunk size of resumable uploads (files upload above 8 MiB), in MiB from 1 to 1024 (default: the rest of the file in one request)',
  ],
  [
    'PLATFORM_UPLOAD_MD5',
    "whether an upload's MD5 is compared with the storage's beside its CRC32C: auto (the default: with more than two cores), on or off",
  ],
]

const ROOT_HELP = `
Exit codes:
${EXIT_MEANINGS.map(([code, meaning]) => `  ${String(code).padEnd(5)}${meaning}`).join('\n')}

Output: --format table (default), json, yaml or csv, optionally with the fields to print:
  --format 'table(id,status,created)', --format 'csv(name,size)' (dotted paths reach nested fields: actor.email).
  Colour marks statuses on a terminal; none with NO_COLOR set, --no-color, or when stdout is not a terminal.

Environment:
${ENVIRONMENT.map(([name, meaning]) => `  ${name.padEnd(21)}${meaning}`).join('\n')}`

/**
 * `--version` and `-V` print the CLI's version. They are read here, before the command line is
 * parsed, and only before the first command word: commander would take a root --version anywhere,
 * and `runs submit <pipeline> --version 1.0.0` names a pipeline's version. Help shows them with the
 * root's options.
 */
const VERSION_OPTION = new Option('-V, --version', 'print the CLI version')

function asksForVersion(program: Command, args: string[]): boolean {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg === '--version' || arg === '-V') return true
    if (arg === '--cli-version') {
      // The flag's former name, kept working for scripts that use it.
      program.configureOutput().writeErr?.('warning: --cli-version is deprecated: use --version\n')
      return true
    }
    if (!arg.startsWith('-') || arg === '--') return false
    const option = program.options.find((o) => o.long === arg || o.short === arg)
    if (option?.required) i++
  }
  return false
}

export function buildProgram(cli: Cli): Command {
  const program = new Command('platform')
    .description(
      'Command-line client of the pipeline platform: pipelines, runs, files, subjects, samples, orders, variants, reports and the audit log through the public HTTP API, and any other route with platform api',
    )
    .option('--profile <name>', 'profile: local, staging, production or your own (default: $PLATFORM_PROFILE, else the current profile, else local)')
    .option('--project <id|slug>', "project (default: $PLATFORM_PROJECT, else the profile's project, else your default project)")
    .addOption(
      new Option('--format <format>', `output format: ${FORMAT_NAMES.join(', ')}, optionally with fields: 'table(id,status)' (default: table)`)
        .argParser(parseFormat)
        .conflicts('json'),
    )
    .option('--json', 'print the raw JSON of the result (the same as --format json)')
    .option('--no-color', 'no colour, even on a terminal (NO_COLOR set in the environment does the same)')
    .configureHelp({
      showGlobalOptions: true,
      sortSubcommands: false,
      visibleOptions(command) {
        const own = Help.prototype.visibleOptions.call(this, command)
        return command.parent ? own : [VERSION_OPTION, ...own]
      },
    })
    .showHelpAfterError('(add --help for usage)')
    .addHelpText(
      'after',
      examples(
        'platform login                                   # in a browser, on this or any other device',
        'platform runs submit hello-local --param greeting=hi --watch',
        'platform runs list --status running --profile staging',
        'platform files upload S1_R1.fastq.gz fastq/',
        "platform audit events --action 'run.*' --since 1d",
        'source <(platform completion bash)',
      ) + ROOT_HELP,
    )
    .exitOverride()
    .configureOutput({
      writeOut: (text) => cli.io.stdout.write(text),
      writeErr: (text) => cli.io.stderr.write(text),
    })

  login(program, cli)
  logout(program, cli)
  whoami(program, cli)
  token(program, cli)
  config(program, cli)

  const projects = program.command('projects').description('Projects you can see').addHelpText('after', examples('platform projects list'))
  projectsList(projects, cli)

  const pipelines = program
    .command('pipelines')
    .description('The pipeline catalogue')
    .addHelpText('after', examples('platform pipelines list', 'platform pipelines show hello-local'))
  pipelinesList(pipelines, cli)
  pipelinesShow(pipelines, cli)

  const runs = program
    .command('runs')
    .description('Submit, follow, list, relaunch and cancel runs')
    .addHelpText('after', examples('platform runs submit hello-local --watch', 'platform runs list', 'platform runs status <run id or name>'))
  runsSubmit(runs, cli)
  runsStatus(runs, cli)
  runsWatch(runs, cli)
  runsLogs(runs, cli)
  runsList(runs, cli)
  runsOutputs(runs, cli)
  runsRelaunch(runs, cli)
  runsCancel(runs, cli)

  const subjects = program
    .command('subjects')
    .description('Subjects: the people tested, their sex, affected status, phenotypes and pedigree')
    .addHelpText('after', examples('platform subjects list --family FAM-0042', 'platform subjects show P-2026-0042'))
  subjectsList(subjects, cli)
  subjectsShow(subjects, cli)
  subjectsCreate(subjects, cli)
  subjectsEdit(subjects, cli)
  subjectsDelete(subjects, cli)

  const samples = program
    .command('samples')
    .description("Samples: material from a subject and its data files in the project's bucket")
    .addHelpText('after', examples('platform samples list --subject P-2026-0042', 'platform samples show S-2026-0042-B1 --info'))
  samplesList(samples, cli)
  samplesShow(samples, cli)
  samplesCreate(samples, cli)
  samplesEdit(samples, cli)
  samplesDelete(samples, cli)

  const orders = program
    .command('orders')
    .description('Clinical orders: create, add samples with their roles, sign and move along, samplesheets and labflow')
    .addHelpText(
      'after',
      examples(
        'platform orders create --test-code WGS-trio --sample S-0042-B1=proband',
        'platform orders transition ORD-2026-000001 sign',
        'platform orders samplesheet ORD-2026-000001 -o samplesheet.csv',
      ),
    )
  ordersList(orders, cli)
  ordersShow(orders, cli)
  ordersCreate(orders, cli)
  ordersEdit(orders, cli)
  ordersAddSample(orders, cli)
  ordersRemoveSample(orders, cli)
  ordersTransition(orders, cli)
  ordersSamplesheet(orders, cli)
  ordersLabflow(orders, cli)
  ordersDelete(orders, cli)

  const files = program
    .command('files')
    .description("The project's bucket: list, upload, download, copy, move and delete files")
    .addHelpText(
      'after',
      examples('platform files ls fastq/', 'platform files upload S1_R1.fastq.gz fastq/', 'platform files download fastq/S1_R1.fastq.gz'),
    )
  filesLs(files, cli)
  filesUpload(files, cli)
  filesDownload(files, cli)
  filesCp(files, cli)
  filesMv(files, cli)
  filesRm(files, cli)

  const variants = program
    .command('variants')
    .description("An order's variants from its variant cache, and the project's catalogue")
    .addHelpText(
      'after',
      examples('platform variants list ORD-2026-000123 --gene SCN2A', 'platform variants show <variant id> --order ORD-2026-000123'),
    )
  variantsList(variants, cli)
  variantsShow(variants, cli)

  const reports = program
    .command('reports')
    .description('Clinical reports: draft, add variants, comment and send to review (signing happens in a browser)')
    .addHelpText(
      'after',
      examples(
        'platform reports create ORD-2026-000123',
        'platform reports add-variant ORD-2026-000123 <variant id> --classification pathogenic',
        'platform reports transition ORD-2026-000123 in_review',
      ),
    )
  reportsList(reports, cli)
  reportsShow(reports, cli)
  reportsCreate(reports, cli)
  reportsEdit(reports, cli)
  reportsAddVariant(reports, cli)
  reportsComment(reports, cli)
  reportsComments(reports, cli)
  reportsTransition(reports, cli)

  const audit = program
    .command('audit')
    .description('The audit log: who did what, when, to which record')
    .addHelpText('after', examples('platform audit events --since 2h', "platform audit events --action 'file.*' --json"))
  auditEvents(audit, cli)

  api(program, cli)
  completion(program, cli)
  return program
}

/** Runs the CLI once; returns the exit code. */
export async function main(argv: string[], io: Io = process, env: Record<string, string | undefined> = process.env): Promise<number> {
  const cliEnvironment = cliEnv(env)
  const cli: Cli = {
    env: cliEnvironment,
    io,
    settings: new SettingsStore(cliEnvironment.configDir),
    userAgent: `platform-cli/${version} node/${process.versions.node}`,
    exitCode: EXIT.ok,
  }
  try {
    const program = buildProgram(cli)
    if (asksForVersion(program, argv.slice(2))) {
      io.stdout.write(`${version}\n`)
      return EXIT.ok
    }
    await program.parseAsync(argv)
    return cli.exitCode
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help ends with exit code 0; commander has already printed any usage message.
      return error.exitCode === 0 ? EXIT.ok : EXIT.usage
    }
    const { message, code } = explain(error, { tokenFromEnvironment: cliEnvironment.token !== undefined })
    io.stderr.write(`platform: ${message}\n`)
    return code
  }
}
