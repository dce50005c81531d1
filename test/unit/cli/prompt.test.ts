import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { EXIT } from '../../../cli/errors.js'
import { confirmOrStop, type Io } from '../../../cli/prompt.js'

/** Streams that say they are a terminal (or not), `answer` typed on stdin once the question is written. */
function io(terminal: boolean, answer?: string): Io & { said: () => string } {
  const stdin = Object.assign(new PassThrough(), { isTTY: terminal })
  const stderr = Object.assign(new PassThrough(), { isTTY: terminal })
  let said = ''
  stderr.on('data', (c: Buffer) => {
    said += c.toString()
    if (answer !== undefined && said.endsWith('[y/N] ')) stdin.write(`${answer}\n`)
  })
  return { stdin, stdout: new PassThrough(), stderr, said: () => said }
}

describe('a confirmation before a change for good', () => {
  const orderDelete = { verb: 'delete', thing: 'order ORD-2026-000001', detail: ' (draft)' } as const

  it('asks the verb, the thing and its detail, and goes on only on yes', async () => {
    const yes = io(true, 'y')
    await confirmOrStop(yes, orderDelete)
    expect(yes.said()).toContain('Delete order ORD-2026-000001 (draft)? [y/N] ')
    await expect(confirmOrStop(io(true, 'n'), { verb: 'cancel', thing: 'run hello-local-1' })).rejects.toMatchObject({
      message: 'run hello-local-1 was not cancelled',
      code: EXIT.usage,
    })
    await expect(confirmOrStop(io(true, ''), orderDelete)).rejects.toMatchObject({ message: 'order ORD-2026-000001 was not deleted' })
  })

  it('refuses without a terminal unless --yes was given, and asks nothing with it', async () => {
    await expect(confirmOrStop(io(false), orderDelete)).rejects.toMatchObject({
      message: 'refusing to delete order ORD-2026-000001 without confirmation: stdin is not a terminal; pass --yes',
      code: EXIT.usage,
    })
    const given = io(false)
    await confirmOrStop(given, { ...orderDelete, yes: true })
    expect(given.said()).toBe('')
  })
})
