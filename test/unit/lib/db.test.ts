import type { Firestore } from '@google-cloud/firestore'
import { describe, expect, it } from 'vitest'
import { Db, isEmulatorAbort } from '../../../lib/db.js'

/** What the Firestore emulator throws for a transaction it aborted for a concurrent one. */
const emulatorAbort = () => Object.assign(new Error('3 INVALID_ARGUMENT: Transaction is invalid or closed.'), { code: 3 })

/** A client whose runTransaction fails with `failures` in turn, then runs the function. */
function clientFailing(...failures: Error[]) {
  let calls = 0
  const firestore = {
    runTransaction: async (fn: (tx: unknown) => Promise<unknown>) => {
      const failure = failures[calls++]
      if (failure) throw failure
      return fn({})
    },
  }
  return { db: new Db(firestore as unknown as Firestore), calls: () => calls }
}

describe('Db.transaction', () => {
  it('runs a transaction the emulator aborted for a concurrent one again, and answers its result', async () => {
    const { db, calls } = clientFailing(emulatorAbort(), emulatorAbort())
    await expect(db.transaction(async () => 'done')).resolves.toBe('done')
    expect(calls()).toBe(3)
  })

  it('gives up after five attempts, with the emulator’s error', async () => {
    const { db, calls } = clientFailing(...Array.from({ length: 6 }, emulatorAbort))
    await expect(db.transaction(async () => 'done')).rejects.toThrow('Transaction is invalid or closed')
    expect(calls()).toBe(5)
  })

  it('does not run again after any other error', async () => {
    const other = Object.assign(new Error('3 INVALID_ARGUMENT: a value is not valid'), { code: 3 })
    const { db, calls } = clientFailing(other)
    await expect(db.transaction(async () => 'done')).rejects.toBe(other)
    expect(calls()).toBe(1)
  })

  it('tells the emulator’s abort from other errors', () => {
    expect(isEmulatorAbort(emulatorAbort())).toBe(true)
    expect(isEmulatorAbort(Object.assign(new Error('Transaction is invalid or closed.'), { code: 10 }))).toBe(false)
    expect(isEmulatorAbort('Transaction is invalid or closed')).toBe(false)
  })
})
