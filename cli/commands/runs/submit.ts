import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import type { Command } from 'commander'
import type { SubmitRun } from '../../client.js'
import { action, type Cli } from '../../context.js'
import { usageError } from '../../errors.js'
import { examples } from '../../help.js'
import { fields } from '../../format.js'
import { paramsFromFlags, parseParamsFile } from '../../params.js'
import { readStdin } from '../../prompt.js'
import { DEFAULT_INTERVAL_S, interval, watchRun } from './watch.js'

interface SubmitOptions {
  version?: string
  param: string[]
  paramsFile?: string
  order?: string
  tag: string[]
  profileName?: string
  idempotencyKey?: string
  watch?: boolean
  logs?: boolean
  interval: number
}

const collect = (value: string, previous: string[]) => [...previous, value]

export function register(runs: Command, cli: Cli) {
  runs
    .command('submit')
    .description('Submit a run of a pipeline; prints the run id and name, or with --watch follows it to the end')
    .argument('<pipeline>', 'pipeline slug or id')
    .option('--version <version>', 'pipeline version (default: the latest of the slug)')
    .option('--param <key=value>', 'a parameter; repeat for more. Array inputs: key=a,b or repeat the key. key:=JSON for a JSON value', collect, [])
    .option('--params-file <file.json>', "parameters as a JSON object ('-' reads stdin); --param flags override its keys")
    .option('--order <id>', 'link the run to a clinical order')
    .option('--tag <tag>', 'a tag; repeat for more', collect, [])
    .option('--profile-name <name>', "the pipeline's execution profile (shown in the run details)")
    .option('--idempotency-key <key>', 'reuse a key to make a repeated submission return the first run instead of a second one (default: a new key)')
    .option('--watch', 'then watch the run to its end, with the exit codes of runs watch (0 succeeded, 1 failed, 2 cancelled)')
    .option('--logs', "with --watch: print the run's log lines as they come, its status changes between them")
    .option('--interval <seconds>', 'with --watch: seconds between polls', interval, DEFAULT_INTERVAL_S)
    .addHelpText(
      'after',
      examples(
        'platform runs submit hello-local --param greeting=hi --watch',
        'platform runs submit hello-local --watch --logs; echo "exit $?"    # the run\'s log, then its exit code (0, 1 or 2)',
        'platform runs submit hereditary-mock --param case_id=C1 --param child_fastq=gs://b/c_R1.fq.gz,gs://b/c_R2.fq.gz --order ORD-7 --tag trio',
        'platform runs submit nfcore-demo --params-file params.json --param \'hpo_terms:=["HP:0001250"]\'',
      ),
    )
    .action(
      action(cli, async (session, command) => {
        const [ref] = command.processedArgs as [string]
        const opts = command.opts<SubmitOptions>()
        if (opts.logs && !opts.watch) throw usageError('--logs goes with --watch (or follow a run with: platform runs logs <run> --follow)')
        let fromFile: Record<string, unknown> = {}
        if (opts.paramsFile !== undefined) {
          const path = opts.paramsFile
          let text: string
          try {
            text = path === '-' ? await readStdin(cli.io) : readFileSync(path, 'utf8')
          } catch (error) {
            throw usageError(`cannot read ${path}: ${(error as Error).message}`)
          }
          fromFile = parseParamsFile(path === '-' ? 'stdin' : path, text)
        }
        const client = session.client()
        const project = await session.projectId(client)
        const pipeline = await session.pipeline(client, project, ref, opts.version)
        const body: SubmitRun = {
          pipeline_id: pipeline.id,
          params: { ...fromFile, ...paramsFromFlags(pipeline.inputs ?? [], opts.param) },
          ...(opts.order ? { order_id: opts.order } : {}),
          ...(opts.tag.length ? { tags: opts.tag } : {}),
          ...(opts.profileName ? { profile: opts.profileName } : {}),
        }
        // One key for this submission: the client's retries after a lost answer then return the same run.
        const run = await client.submitRun(project, body, opts.idempotencyKey ?? randomUUID())
        // With --watch and json or yaml the output is the watch's alone, as runs watch prints it: one document per status change.
        const logs = opts.logs ? {} : undefined
        if (opts.watch && session.out.structured) return watchRun(session, run.id, opts.interval, logs)
        session.out.result(run, () =>
          fields([
            ['id', run.id],
            ['name', run.name],
            ['status', session.out.paint(run.status)],
            ['pipeline', `${pipeline.slug} ${pipeline.version}`],
          ]),
        )
        if (opts.watch) return watchRun(session, run.id, opts.interval, logs)
        if (session.out.human) session.out.note(`Follow it with: platform runs watch ${run.id}`)
      }),
    )
}
