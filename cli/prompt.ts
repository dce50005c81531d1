import { createInterface } from 'node:readline'
import { Writable } from 'node:stream'
import { CliError, EXIT } from './errors.js'

/** The CLI's streams: the process's own, or in tests streams that say whether they are a terminal. */
export interface Io {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean }
  stdout: NodeJS.WritableStream & { isTTY?: boolean }
  stderr: NodeJS.WritableStream & { isTTY?: boolean }
}

export const isInteractive = (io: Io) => Boolean(io.stdin.isTTY)

/** Asks one question on the terminal. Prompts go to stderr so that stdout holds only results. */
function ask(io: Io, question: string, hidden: boolean): Promise<string> {
  let muted = false
  const output = new Writable({
    write(chunk, _encoding, done) {
      if (!muted) io.stderr.write(chunk)
      done()
    },
  })
  const rl = createInterface({ input: io.stdin, output, terminal: true })
  return new Promise<string>((resolve, reject) => {
    let answered = false
    rl.on('SIGINT', () => {
      rl.close()
      io.stderr.write('\n')
      reject(new CliError('interrupted', EXIT.interrupted))
    })
    rl.on('close', () => {
      if (!answered) reject(new CliError('no answer (end of input)', EXIT.usage))
    })
    rl.question(question, (answer) => {
      answered = true
      rl.close()
      if (hidden) io.stderr.write('\n')
      resolve(answer)
    })
    // After the prompt is written: what the user types next is not echoed.
    muted = hidden
  })
}

export const askLine = (io: Io, question: string) => ask(io, question, false)
export const askSecret = (io: Io, question: string) => ask(io, question, true)

/** "[y/N]": only an explicit yes confirms. */
export async function confirm(io: Io, question: string): Promise<boolean> {
  const answer = await askLine(io, `${question} [y/N] `)
  return /^(y|yes)$/i.test(answer.trim())
}

/** All of stdin, without the final line break (for --token-stdin, --password-stdin, --params-file -). */
export async function readStdin(io: Io): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of io.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer))
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '')
}
